package dev.respawn.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** One instance's latest failure blamed on a dependency. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class BlameRecord {
  @JsonPropertyDescription("The AgentInstance.")
  public String instance;
  @JsonPropertyDescription("When its failure was decided.")
  public String at;

  public BlameRecord() {}

  public BlameRecord(String instance, String at) {
    this.instance = instance;
    this.at = at;
  }
}

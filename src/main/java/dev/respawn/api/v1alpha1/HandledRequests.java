package dev.respawn.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** Request ids of the operator-action annotations already acted on (api.md §6). */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class HandledRequests {
  @JsonPropertyDescription("Last value of respawn.dev/restart acted on.")
  public String restart;
  @JsonPropertyDescription("Last value of respawn.dev/resume acted on.")
  public String resume;
}

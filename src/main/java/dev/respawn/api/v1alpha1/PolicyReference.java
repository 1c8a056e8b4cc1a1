package dev.respawn.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;

public class PolicyReference {
  @JsonPropertyDescription("Name of an AgentRestartPolicy in the instance's namespace.")
  @Required
  @Size(min = 1, max = 253)
  public String name;

  public PolicyReference() {}

  public PolicyReference(String name) {
    this.name = name;
  }
}

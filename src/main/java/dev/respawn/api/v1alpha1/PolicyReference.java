package dev.respawn.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;

public class PolicyReference {
  @JsonPropertyDescription("Name of an AgentRestartPolicy in the instance's namespace.")
  @Required
  @Size(min = 1, max = 253)
  @Pattern("^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
  public String name;

  public PolicyReference() {}

  /** Not a way to read {@code policyRef: "name"}: the schema wants an object, and so does the operator (§9). */
  @JsonCreator(mode = JsonCreator.Mode.DISABLED)
  public PolicyReference(String name) {
    this.name = name;
  }
}

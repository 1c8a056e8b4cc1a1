package dev.respawn.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import java.util.Objects;

/**
 * A standard Kubernetes condition, described for `kubectl explain`: type and status required, as metav1.Condition
 * has them, so that the conditions list is a map keyed by type (CrdFinisher) whose items a server-side apply owns one
 * by one.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class StatusCondition {
  @JsonPropertyDescription("Condition type (Ready, Recovering, Escalated; on a policy Accepted, DependencyOpen).")
  @Required
  public String type;
  @JsonPropertyDescription("True, False or Unknown.")
  @Required
  @Pattern("^(True|False|Unknown)$")
  public String status;
  @JsonPropertyDescription("Machine-readable reason in CamelCase.")
  public String reason;
  @JsonPropertyDescription("Human-readable detail.")
  public String message;
  @JsonPropertyDescription("When status last changed.")
  public String lastTransitionTime;
  @JsonPropertyDescription("The metadata.generation the condition was set for.")
  public Long observedGeneration;

  public StatusCondition() {}

  public StatusCondition(String type, String status, String reason, String message) {
    this.type = type;
    this.status = status;
    this.reason = reason;
    this.message = message;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof StatusCondition c && Objects.equals(type, c.type) && Objects.equals(status, c.status)
        && Objects.equals(reason, c.reason) && Objects.equals(message, c.message)
        && Objects.equals(lastTransitionTime, c.lastTransitionTime)
        && Objects.equals(observedGeneration, c.observedGeneration);
  }

  @Override
  public int hashCode() {
    return Objects.hash(type, status, reason, message, lastTransitionTime, observedGeneration);
  }
}

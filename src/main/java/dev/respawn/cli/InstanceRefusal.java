package dev.respawn.cli;

import dev.respawn.api.v1alpha1.AgentInstanceStatus;
import dev.respawn.api.v1alpha1.StatusCondition;
import dev.respawn.controller.Refusal;
import java.util.Arrays;
import java.util.Optional;

/**
 * The operator refuses to serve the instance (its policy missing or invalid, its spec invalid):
 * status says so in a Ready condition that is False with a {@link Refusal} reason, and nothing is restarted, no
 * request acted on, until it is fixed.
 */
record InstanceRefusal(Refusal reason, String message) {

  static Optional<InstanceRefusal> of(AgentInstanceStatus status) {
    if (status == null || status.conditions == null) {
      return Optional.empty();
    }
    for (StatusCondition c : status.conditions) {
      if ("Ready".equals(c.type) && "False".equals(c.status) && c.reason != null) {
        return Arrays.stream(Refusal.values()).filter(r -> r.name().equals(c.reason)).findFirst()
            .map(r -> new InstanceRefusal(r, c.message == null || c.message.isBlank() ? r.name() : c.message));
      }
    }
    return Optional.empty();
  }
}

package dev.respawn.controller;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.policy.Bounds;
import java.util.Optional;

/**
 * Why the operator refuses to serve an instance: the Ready condition's reason and message. Its own spec has fields of
 * the wrong JSON type (the schema was bypassed), or its policy is missing or invalid; nothing is restarted until it
 * is fixed.
 */
record InstanceRefused(Refusal reason, String message) {

  /** The refusal of {@code instance}, whose policy resolved as {@code resolved}, if it is refused. */
  static Optional<InstanceRefused> of(AgentInstance instance, PolicyResolver.Resolved resolved) {
    String unreadable = InstanceSpecRules.problems(instance);
    if (!unreadable.isEmpty()) {
      return Optional.of(new InstanceRefused(Refusal.InvalidSpec, Bounds.oneLine("AgentInstance "
          + instance.getMetadata().getName() + " is invalid: " + unreadable + "; nothing is restarted until it is fixed",
          Bounds.MESSAGE_BYTES)));
    }
    return resolved.policy().isEmpty() ? Optional.of(new InstanceRefused(resolved.reason(), resolved.message()))
        : Optional.empty();
  }
}

package dev.respawn.controller;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.policy.Decision;
import io.fabric8.kubernetes.api.model.Pod;

/** Where the reconciler reports what it decided: Kubernetes Events, log lines, the audit trail, metrics. */
public interface DecisionSink {
  /** A decision was applied to the instance; {@code pod} is the run it concerns, when known. */
  void decided(AgentInstance instance, Decision decision, Pod pod);

  /**
   * The instance cannot be served (its spec or policy is invalid, its policy missing); called after its
   * status says so, at {@code at}.
   */
  void policyRefused(AgentInstance instance, Refusal reason, String message, java.time.Instant at);

  /** A refusal whose notice rode in a decision's one Event (api.md §8): its audit line, nothing else. */
  default void refusalInDecision(AgentInstance instance, Refusal reason, java.time.Instant at) {}

  /** A policy was found invalid (or tier-restricted), after its status says so; default: nothing. */
  default void policyRejected(dev.respawn.api.v1alpha1.AgentRestartPolicy policy, Refusal reason, String message,
      java.time.Instant at) {}

  /**
   * A policy's shared circuits after its status was written, with their transitions (by dependency name);
   * default: nothing.
   */
  default void dependencies(dev.respawn.api.v1alpha1.AgentRestartPolicy policy,
      java.util.List<dev.respawn.policy.DependencyCircuit> circuits,
      java.util.Map<String, java.util.List<dev.respawn.policy.DependencyCircuit.Transition>> transitions) {}

  /** The instance is gone: drop whatever is kept in memory about it; default: nothing. */
  default void forget(AgentInstance instance) {}

  /** The policy is gone: drop its shared circuits' gauges and Event series; default: nothing. */
  default void forget(dev.respawn.api.v1alpha1.AgentRestartPolicy policy) {}

  /** Writes what waits to be written (Event series counts); called every few seconds; default: nothing. */
  default void flushPending() {}

  /** The operator stops: write what waits, release threads; default: nothing. */
  default void close() {}

  /** How long one decision of the core took; default: nothing. */
  default void decisionTook(java.time.Duration duration) {}

  /** A sink that reports nothing (tests of the reconciler alone). */
  DecisionSink NONE = new DecisionSink() {
    @Override
    public void decided(AgentInstance instance, Decision decision, Pod pod) {}

    @Override
    public void policyRefused(AgentInstance instance, Refusal reason, String message, java.time.Instant at) {}
  };
}

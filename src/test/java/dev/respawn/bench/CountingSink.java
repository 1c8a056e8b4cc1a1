package dev.respawn.bench;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import dev.respawn.controller.DecisionSink;
import dev.respawn.policy.Decision;
import io.fabric8.kubernetes.api.model.Pod;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The production sink with a count of reconciles: the reconciler reports exactly one decision (or one
 * refusal) per reconcile of an AgentInstance.
 */
final class CountingSink implements DecisionSink {
  private final dev.respawn.observability.ReportingSink delegate;
  private final AtomicLong reconciles = new AtomicLong();
  /** Live instances reconciled at least once: a deleted one is forgotten, or the harness would leak. */
  private final Set<String> reconciled = ConcurrentHashMap.newKeySet();
  private final AtomicLong everReconciled = new AtomicLong();

  CountingSink(dev.respawn.observability.ReportingSink delegate) {
    this.delegate = delegate;
  }

  /** Events dropped because too many waited to be written. */
  long eventsDropped() {
    return delegate.eventsDropped();
  }

  /** AgentInstance reconciles so far. */
  long reconciles() {
    return reconciles.get();
  }

  /**
   * How many distinct AgentInstances were reconciled at least once, deleted ones included (one reconciled
   * again after it was forgotten, while its deletion raced the reconcile, counts twice).
   */
  long reconciledInstances() {
    return everReconciled.get();
  }

  private void count(AgentInstance instance) {
    reconciles.incrementAndGet();
    if (reconciled.add(key(instance))) {
      everReconciled.incrementAndGet();
    }
  }

  private static String key(AgentInstance instance) {
    return instance.getMetadata().getNamespace() + "/" + instance.getMetadata().getName();
  }

  @Override
  public void decided(AgentInstance instance, Decision decision, Pod pod) {
    count(instance);
    delegate.decided(instance, decision, pod);
  }

  @Override
  public void policyRefused(AgentInstance instance, dev.respawn.controller.Refusal reason, String message, java.time.Instant at) {
    count(instance);
    delegate.policyRefused(instance, reason, message, at);
  }

  @Override
  public void refusalInDecision(AgentInstance instance, dev.respawn.controller.Refusal reason, java.time.Instant at) {
    delegate.refusalInDecision(instance, reason, at);
  }

  @Override
  public void policyRejected(AgentRestartPolicy policy, dev.respawn.controller.Refusal reason, String message, java.time.Instant at) {
    delegate.policyRejected(policy, reason, message, at);
  }

  @Override
  public void forget(AgentInstance instance) {
    reconciled.remove(key(instance));
    delegate.forget(instance);
  }

  @Override
  public void flushPending() {
    delegate.flushPending();
  }

  @Override
  public void close() {
    delegate.close();
  }

  @Override
  public void dependencies(AgentRestartPolicy policy, java.util.List<dev.respawn.policy.DependencyCircuit> circuits,
      java.util.Map<String, java.util.List<dev.respawn.policy.DependencyCircuit.Transition>> transitions) {
    delegate.dependencies(policy, circuits, transitions);
  }

  @Override
  public void decisionTook(Duration duration) {
    delegate.decisionTook(duration);
  }
}

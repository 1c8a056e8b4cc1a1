package dev.respawn.observability;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import dev.respawn.controller.DecisionSink;
import dev.respawn.controller.Refusal;
import java.time.Instant;
import dev.respawn.policy.Decision;
import dev.respawn.policy.Decision.Notice;
import dev.respawn.policy.EventReason;
import dev.respawn.policy.EventType;
import dev.respawn.policy.DependencyCircuit;
import dev.respawn.api.v1alpha1.CircuitState;
import java.util.List;
import java.util.Map;
import io.fabric8.kubernetes.api.model.Pod;

/**
 * Reports decisions as Kubernetes Events (written on a thread of their own: {@link EventQueue}), [RST] log
 * lines and JSON audit lines (on the caller's thread), and metrics.
 */
public final class ReportingSink implements DecisionSink {
  private final EventQueue events;
  private final DecisionLog log = new DecisionLog();
  private final AuditLog audit = new AuditLog();
  private final RestartMetrics metrics;

  public ReportingSink(KubeEventRecorder events, RestartMetrics metrics) {
    this.events = new EventQueue(events);
    this.metrics = metrics;
    io.micrometer.core.instrument.FunctionCounter.builder("respawn.events.dropped", this.events, EventQueue::dropped)
        .description("Events not written because " + EventQueue.CAPACITY + " were waiting")
        .register(metrics.registry());
    io.micrometer.core.instrument.FunctionCounter.builder("respawn.events.lost", this.events, EventQueue::lost)
        .description("Events the API server did not take though tried again for "
            + EventQueue.RETRY_FOR.toSeconds() + "s, or still waiting when the operator stopped")
        .register(metrics.registry());
  }

  @Override
  public void decisionTook(java.time.Duration duration) {
    metrics.decisionTook(duration);
  }

  @Override
  public void decided(AgentInstance instance, Decision decision, Pod pod) {
    String ns = instance.getMetadata().getNamespace();
    String name = instance.getMetadata().getName();
    for (Notice n : decision.notices()) {
      log.notice(ns, name, n);
    }
    decision.event().ifPresent(e -> events.record(instance, pod, e));
    decision.audit().ifPresent(audit::write);
    metrics.record(instance, decision);
  }

  @Override
  public void dependencies(AgentRestartPolicy policy, List<DependencyCircuit> circuits,
      Map<String, List<DependencyCircuit.Transition>> transitions) {
    String ns = policy.getMetadata().getNamespace();
    String name = policy.getMetadata().getName();
    metrics.dependencies(ns + "/" + name, circuits);
    transitions.forEach((dependency, list) -> {
      for (DependencyCircuit.Transition t : list) {
        Notice n = new Notice(t.to() == CircuitState.Open ? EventType.Warning : EventType.Normal,
            EventReason.DependencyCircuitChanged, "[RST] Dependency " + dependency + " of policy " + name + ": "
            + t.from() + " -> " + t.to() + " (" + t.why() + ")");
        log.notice(ns, name, n);
        events.record(policy, null, n);
        audit.dependency(ns, name, dependency, t);
        if (t.to() == CircuitState.Open) {
          metrics.dependencyTripped();
        }
      }
    });
  }

  @Override
  public void forget(AgentInstance instance) {
    metrics.forget(instance.getMetadata().getNamespace(), instance.getMetadata().getName());
    events.forget(instance);
  }

  @Override
  public void forget(AgentRestartPolicy policy) {
    metrics.dependencies(policy.getMetadata().getNamespace() + "/" + policy.getMetadata().getName(), List.of());
    events.forget(policy);
  }

  @Override
  public void flushPending() {
    events.flush();
  }

  /** Events dropped because too many waited. */
  public long eventsDropped() {
    return events.dropped();
  }

  /** Writes the Events still waiting (a few seconds at most), then stops their thread. */
  @Override
  public void close() {
    events.close();
  }

  @Override
  public void policyRefused(AgentInstance instance, Refusal reason, String message, Instant at) {
    Notice n = reason.notice(message);
    log.notice(instance.getMetadata().getNamespace(), instance.getMetadata().getName(), n);
    events.record(instance, null, n);
    audit.refused(instance, reason, at);
  }

  @Override
  public void refusalInDecision(AgentInstance instance, Refusal reason, Instant at) {
    audit.refused(instance, reason, at);
  }

  @Override
  public void policyRejected(AgentRestartPolicy policy, Refusal reason, String message, Instant at) {
    Notice n = reason.notice(message);
    log.notice(policy.getMetadata().getNamespace(), policy.getMetadata().getName(), n);
    events.record(policy, null, n);
    audit.rejected(policy, reason, at);
  }
}

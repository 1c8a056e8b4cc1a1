package dev.respawn.observability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.InterruptionClass;
import dev.respawn.policy.CircuitSnapshot;
import dev.respawn.policy.Decision;
import dev.respawn.policy.Decision.Liveness;
import dev.respawn.policy.Decision.Notice;
import dev.respawn.policy.InstanceState;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class RestartMetricsTest {
  static final Instant T0 = Instant.parse("2026-11-22T10:00:00Z");

  static AgentInstance instance(String name) {
    AgentInstance i = new AgentInstance();
    i.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace("agents").build());
    return i;
  }

  static Decision decision(InstanceState s, Notice... notices) {
    return decision(s, 0, notices);
  }

  static Decision decision(InstanceState s, int trips, Notice... notices) {
    return new Decision(s, List.of(), Optional.empty(), false, false, false, null, Optional.empty(), List.of(notices),
        trips, Optional.empty(), new Liveness(false, "PodNotRunning", ""));
  }

  @Test
  void everyRestartCounterIsThereAtZeroBeforeTheFirstRestart() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    new RestartMetrics(registry);
    assertThat(registry.find("respawn.restart.attempts").counters()).hasSize(3 * (InterruptionClass.values().length + 1))
        .allSatisfy(c -> assertThat(c.count()).isZero());
    assertThat(registry.get("respawn.restart.attempts").tag("result", "succeeded").tag("class", "None").counter()
        .count()).isZero();
  }

  @Test
  void countsNoticesWithBoundedTags() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    RestartMetrics metrics = new RestartMetrics(registry);
    InstanceState s = new InstanceState();
    s.lastFailure = new InstanceState.FailureInfo("coder-1", "u1", InterruptionClass.ToolFailure,
        "UnhandledException", "Error", 1, null, "", true, T0, null);
    s.lastDecision = new InstanceState.DecisionInfo(dev.respawn.policy.DecisionAction.Restart, dev.respawn.policy.ReasonCode.RESTART_SCHEDULED, 1, 3, false, 2.0, T0, null);
    metrics.record(instance("a"), decision(s, Notice.warning(dev.respawn.policy.EventReason.RestartFailed, "x"),
        Notice.normal(dev.respawn.policy.EventReason.RestartScheduled, "y")));
    s.lastRestart = new InstanceState.RestartInfo(dev.respawn.policy.RestartKind.Failure, "x", "coder-1", "coder-2", T0, T0.plusSeconds(2), "",
        null, null);
    metrics.record(instance("a"), decision(s, Notice.normal(dev.respawn.policy.EventReason.RestartStarted, "z")));
    metrics.record(instance("b"), decision(s, 1, Notice.warning(dev.respawn.policy.EventReason.RestartExhausted, "e"),
        Notice.warning(dev.respawn.policy.EventReason.CircuitBreakerStateChanged, "any text: trips come from the decision"), Notice.warning(dev.respawn.policy.EventReason.HeartbeatStale, "s")));
    assertThat(registry.get("respawn.restart.attempts").tag("result", "failed").tag("class", "ToolFailure").counter()
        .count()).isEqualTo(1);
    assertThat(registry.get("respawn.restart.attempts").tag("result", "started").tag("class", "ToolFailure")
        .counter().count()).isEqualTo(1);
    assertThat(registry.get("respawn.restart.delay").tag("kind", "calculated").summary().totalAmount()).isEqualTo(2.0);
    assertThat(registry.get("respawn.restart.delay").tag("kind", "actual").summary().totalAmount()).isEqualTo(2.0);
    assertThat(registry.get("respawn.restart.exhausted").counter().count()).isEqualTo(1);
    assertThat(registry.get("respawn.circuit.trips").counter().count()).isEqualTo(1);
    assertThat(registry.get("respawn.heartbeat.stale").counter().count()).isEqualTo(1);
    assertThat(registry.get("respawn.circuit.breakers").tag("state", "Closed").gauge().value()).isEqualTo(2);
    s.circuit = new CircuitSnapshot(dev.respawn.api.v1alpha1.CircuitState.Open, List.of(T0), 1, T0, null, null, T0);
    metrics.record(instance("b"), decision(s));
    assertThat(registry.get("respawn.circuit.breakers").tag("state", "Open").gauge().value()).isEqualTo(1);
    metrics.forget("agents", "b");
    assertThat(registry.get("respawn.circuit.breakers").tag("state", "Open").gauge().value()).isZero();
    metrics.decisionTook(Duration.ofNanos(1500));
    assertThat(registry.get("respawn.decision.duration").timer().count()).isEqualTo(1);
    // nothing is tagged with an instance name
    assertThat(registry.getMeters()).allSatisfy(m -> assertThat(m.getId().getTags())
        .noneMatch(t -> t.getValue().equals("a") || t.getValue().equals("b")));
  }

  static dev.respawn.policy.DependencyCircuit dependency(String name, dev.respawn.api.v1alpha1.CircuitState state,
      int waiting) {
    return new dev.respawn.policy.DependencyCircuit(name, state, 0, null, null, null, T0, List.of(), List.of(),
        List.of(), waiting, 0);
  }

  /**
   * README "Metrics": respawn_dependency_circuits{state} and respawn_dependency_waiting count the shared
   * dependencies there are; a policy that drops a dependency, or is deleted, leaves both.
   */
  @Test
  void theDependencyGaugesCountTheSharedCircuitsAndTheirWaitingInstances() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    RestartMetrics metrics = new RestartMetrics(registry);
    var open = dev.respawn.api.v1alpha1.CircuitState.Open;
    var closed = dev.respawn.api.v1alpha1.CircuitState.Closed;
    metrics.dependencies("agents/fleet", List.of(dependency("model-api", open, 3), dependency("db", closed, 0)));
    metrics.dependencies("agents/other", List.of(dependency("model-api", open, 2)));
    assertThat(registry.get("respawn.dependency.circuits").tag("state", "Open").gauge().value()).isEqualTo(2);
    assertThat(registry.get("respawn.dependency.circuits").tag("state", "Closed").gauge().value()).isEqualTo(1);
    assertThat(registry.get("respawn.dependency.circuits").tag("state", "HalfOpen").gauge().value()).isZero();
    assertThat(registry.get("respawn.dependency.waiting").gauge().value()).isEqualTo(5);

    metrics.dependencies("agents/fleet", List.of(dependency("db", closed, 0)));
    assertThat(registry.get("respawn.dependency.circuits").tag("state", "Open").gauge().value()).isEqualTo(1);
    assertThat(registry.get("respawn.dependency.waiting").gauge().value()).isEqualTo(2);
    metrics.dependencies("agents/other", List.of());
    assertThat(registry.get("respawn.dependency.circuits").tag("state", "Open").gauge().value()).isZero();
    assertThat(registry.get("respawn.dependency.waiting").gauge().value()).isZero();
    metrics.dependencyTripped();
    assertThat(registry.get("respawn.dependency.trips").counter().count()).isEqualTo(1);
  }

  /** README "Metrics": class None counts restarts that follow no failure (a manual or requested restart). */
  @Test
  void aRestartThatFollowsNoFailureCountsAsClassNone() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    RestartMetrics metrics = new RestartMetrics(registry);
    InstanceState s = new InstanceState();
    s.lastFailure = new InstanceState.FailureInfo("coder-1", "u1", InterruptionClass.ToolFailure,
        "UnhandledException", "Error", 1, null, "", true, T0, null);
    s.lastRestart = new InstanceState.RestartInfo(dev.respawn.policy.RestartKind.Manual, "x", "coder-1", "coder-2",
        T0, T0.plusSeconds(1), "req-1", null, null);
    metrics.record(instance("a"), decision(s, Notice.normal(dev.respawn.policy.EventReason.RestartStarted, "z")));
    assertThat(registry.get("respawn.restart.attempts").tag("result", "started").tag("class", "None").counter()
        .count()).isEqualTo(1);
    assertThat(registry.get("respawn.restart.attempts").tag("result", "started").tag("class", "ToolFailure")
        .counter().count()).isZero();
    assertThat(metrics.instancesTracked()).isEqualTo(1);
  }

  /**
   * A policy reconcile writes its circuits to the gauges while /metrics is scraped: the scrape reads them as they are.
   * They were all dropped, then put back, and a scrape between read no Open circuit and no one waiting, though nothing
   * had changed (an alert on them would flap). The list's iterator, taken by the writer, holds it there.
   */
  @Test
  void aScrapeDuringAPolicyReconcileSeesTheCircuitsAsTheyAre() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    RestartMetrics metrics = new RestartMetrics(registry);
    dev.respawn.policy.DependencyCircuit open = dev.respawn.policy.DependencyCircuit.closed("model-api");
    // an Open circuit with 6 instances waiting, as the policy's status shows it
    List<dev.respawn.policy.DependencyCircuit> shown = List.of(withState(open, dev.respawn.api.v1alpha1.CircuitState.Open, 6));
    metrics.dependencies("agents/fleet", shown);
    assertThat(dependencyWaiting(registry)).isEqualTo(6);
    assertThat(openCircuits(registry)).isEqualTo(1);

    java.util.concurrent.CountDownLatch between = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch scraped = new java.util.concurrent.CountDownLatch(1);
    List<dev.respawn.policy.DependencyCircuit> same = new java.util.AbstractList<>() {
      @Override
      public dev.respawn.policy.DependencyCircuit get(int index) {
        return shown.get(index);
      }

      @Override
      public int size() {
        return shown.size();
      }

      @Override
      public java.util.Iterator<dev.respawn.policy.DependencyCircuit> iterator() {
        between.countDown();
        try {
          scraped.await(5, java.util.concurrent.TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        return super.iterator();
      }
    };
    // the next policy reconcile writes the same circuits again (its status unchanged)
    java.util.concurrent.CompletableFuture<Void> reconcile = java.util.concurrent.CompletableFuture.runAsync(() -> metrics.dependencies("agents/fleet", same));
    assertThat(between.await(5, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
    double waitingSeen = dependencyWaiting(registry);
    double openSeen = openCircuits(registry);
    scraped.countDown();
    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(reconcile::isDone);
    assertThat(dependencyWaiting(registry)).isEqualTo(6);
    assertThat(openSeen).as("respawn.dependency.circuits{state=Open} scraped meanwhile").isEqualTo(1);
    assertThat(waitingSeen).as("respawn.dependency.waiting scraped meanwhile").isEqualTo(6);
  }

  static dev.respawn.policy.DependencyCircuit withState(dev.respawn.policy.DependencyCircuit c,
      dev.respawn.api.v1alpha1.CircuitState state, int waiting) {
    return new dev.respawn.policy.DependencyCircuit(c.name(), state, 1, java.time.Instant.parse("2026-11-25T10:00:00Z"), null, null,
        java.time.Instant.parse("2026-11-25T10:00:00Z"), List.of(), List.of(), List.of(), waiting, waiting);
  }

  static double dependencyWaiting(SimpleMeterRegistry r) {
    return r.get("respawn.dependency.waiting").gauge().value();
  }

  static double openCircuits(SimpleMeterRegistry r) {
    return r.get("respawn.dependency.circuits").tag("state", "Open").gauge().value();
  }
}

package dev.respawn.controller;

import static dev.respawn.controller.OperatorFixture.hasCondition;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.api.v1alpha1.InterruptionClass;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.api.v1alpha1.TerminalReason;
import dev.respawn.sandbox.Run;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** api.md §3 e, g and j: the circuit opens at its threshold, waits openDuration, tries once (HalfOpen). */
class CircuitBreakerScenarioTest extends MockClusterScenario {
  static boolean run(AgentInstance i, int run) {
    return i.getStatus().run != null && i.getStatus().run == run;
  }

  @Test
  void opensAtThresholdWaitsOpenDurationThenAHealthyTrialClosesIt() {
    f.policy("breaker", """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
        maxRetries: 5
        resetAfter: 1500ms
        circuitBreaker: {failureThreshold: 2, window: 10m, openDuration: 1s}
        """);
    f.kubelet.script("ej", Run.exit(1), Run.exit(1), Run.runForever());
    f.instance("ej", "breaker");

    AgentInstance open = f.awaitInstance("ej", i -> i.getStatus().phase == Phase.CircuitOpen);
    var st = open.getStatus();
    assertThat(st.attempt).isEqualTo(2);
    assertThat(st.lastDecision.reasonCode).isEqualTo("circuit_open");
    assertThat(st.circuitBreaker.state).isEqualTo(CircuitState.Open);
    assertThat(st.circuitBreaker.failureCount).isEqualTo(2);
    assertThat(st.circuitBreaker.trips).isEqualTo(1);
    Instant openedAt = Instant.parse(st.circuitBreaker.openedAt);
    Instant next = Instant.parse(st.nextRestartAt);
    assertThat(next).isEqualTo(openedAt.plus(Duration.ofSeconds(1)));
    assertThat(hasCondition(open, "Recovering", "True", "CircuitOpen")).isTrue();
    assertThat(f.podsEverCreated("ej")).containsExactly("ej-1", "ej-2");

    // the HalfOpen trial: one pod, not before openedAt + openDuration
    AgentInstance trial = f.awaitInstance("ej", i -> run(i, 3) && i.getStatus().phase == Phase.Running);
    assertThat(trial.getStatus().circuitBreaker.state).isEqualTo(CircuitState.HalfOpen);
    assertThat(trial.getStatus().circuitBreaker.halfOpenAt).isNotNull();
    assertThat(Instant.parse(trial.getStatus().lastRestart.startedAt)).isAfterOrEqualTo(next);
    assertThat(trial.getStatus().attempt).isEqualTo(2);

    // healthy for resetAfter: the circuit closes and the failure sequence ends
    AgentInstance closed = f.awaitInstance("ej", i -> i.getStatus().circuitBreaker.state == CircuitState.Closed);
    assertThat(closed.getStatus().attempt).isZero();
    assertThat(closed.getStatus().run).isEqualTo(3);
    assertThat(closed.getStatus().circuitBreaker.trips).isEqualTo(1);
    assertThat(closed.getStatus().circuitBreaker.failureCount).isZero();
    assertThat(closed.getStatus().circuitBreaker.lastSuccessAt).isNotNull();
    assertThat(hasCondition(closed, "Recovering", "False", "Stable")).isTrue();
    assertThat(f.podsEverCreated("ej")).containsExactly("ej-1", "ej-2", "ej-3");
    // one Event per decision, written after the status: the circuit closing is the weightier notice, the
    // note carries the rest
    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
        assertThat(f.events("ej")).anySatisfy(e -> {
          assertThat(e.getReason()).isEqualTo("CircuitBreakerStateChanged");
          assertThat(e.getNote()).contains("(HalfOpen -> Closed)", "RestartSucceeded: [RST] Restart succeeded for ej");
        }));
  }

  @Test
  void aFailedTrialReopensTheCircuit() {
    f.policy("breaker", """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
        maxRetries: 5
        circuitBreaker: {failureThreshold: 2, openDuration: 1s}
        """);
    f.kubelet.script("trial", Run.exit(1), Run.exit(1), Run.exit(1).after(Duration.ofMillis(100)),
        Run.runForever());
    f.instance("trial", "breaker");
    AgentInstance first = f.awaitInstance("trial", i -> i.getStatus().phase == Phase.CircuitOpen);
    AgentInstance reopened = f.awaitInstance("trial", i -> i.getStatus().phase == Phase.CircuitOpen
        && i.getStatus().circuitBreaker.trips == 2);
    var st = reopened.getStatus();
    assertThat(st.attempt).isEqualTo(3);
    assertThat(st.circuitBreaker.state).isEqualTo(CircuitState.Open);
    assertThat(Instant.parse(st.circuitBreaker.openedAt))
        .isAfter(Instant.parse(first.getStatus().circuitBreaker.openedAt));
    assertThat(Instant.parse(st.nextRestartAt))
        .isEqualTo(Instant.parse(st.circuitBreaker.openedAt).plus(Duration.ofSeconds(1)));
    assertThat(st.history).extracting(r -> r.reasonCode).containsExactly("restart_scheduled", "circuit_open",
        "circuit_open");
    // and the next trial comes
    f.awaitInstance("trial", i -> run(i, 4) && i.getStatus().phase == Phase.Running);
  }

  @Test
  void aTrialThatNeitherBecomesHealthyNorEndsCountsAsFailed() {
    f.policy("breaker", """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
        maxRetries: 5
        circuitBreaker: {failureThreshold: 2, openDuration: 1s}
        """);
    // no rule lifts the built-in cap of 2 retries for Timeouts: an expired trial is not a deadline or a stale
    // heartbeat, and as the third failure it must reopen the circuit, not escalate as retries_exhausted
    f.kubelet.script("stuck", Run.exit(1), Run.exit(1), Run.runForever(), Run.runForever());
    f.instance("stuck", "breaker");
    AgentInstance trial = f.awaitInstance("stuck", i -> run(i, 3) && i.getStatus().phase == Phase.Running
        && i.getStatus().circuitBreaker.state == CircuitState.HalfOpen);
    // the trial pod runs but is not (or no longer) ready
    f.client.pods().inNamespace(OperatorFixture.NS).withName("stuck-3").editStatus(p -> {
      p.getStatus().getConditions().stream().filter(c -> "Ready".equals(c.getType()))
          .forEach(c -> c.setStatus("False"));
      return p;
    });
    AgentInstance reopened = f.awaitInstance("stuck", i -> i.getStatus().phase == Phase.CircuitOpen
        && i.getStatus().circuitBreaker.trips == 2);
    var st = reopened.getStatus();
    assertThat(st.lastFailure.pod).isEqualTo("stuck-3");
    assertThat(st.lastFailure.failureClass).isEqualTo(InterruptionClass.Timeout);
    assertThat(st.attempt).isEqualTo(3);
    assertThat(Instant.parse(st.lastFailure.at)).isAfterOrEqualTo(
        Instant.parse(trial.getStatus().circuitBreaker.halfOpenAt).plus(Duration.ofSeconds(1)));
    // the expired trial is ended: its status is written first, then its pod deleted
    await().atMost(OperatorFixture.AT_MOST).pollInterval(OperatorFixture.POLL).until(() -> f.pod("stuck-3") == null);
    f.awaitInstance("stuck", i -> run(i, 4) && i.getStatus().phase == Phase.Running);
  }

  @Test
  void aLatchedCircuitEscalates() {
    f.policy("latch", """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
        maxRetries: 5
        circuitBreaker: {failureThreshold: 2, latch: true}
        """);
    f.kubelet.script("g-latch", Run.exit(1), Run.exit(1), Run.runForever());
    f.instance("g-latch", "latch");
    AgentInstance escalated = f.awaitInstance("g-latch", i -> i.getStatus().phase == Phase.Escalated);
    var st = escalated.getStatus();
    assertThat(st.lastDecision.reasonCode).isEqualTo("circuit_open");
    assertThat(st.terminalReason).isEqualTo(TerminalReason.CircuitBreakerOpen);
    assertThat(st.circuitBreaker.state).isEqualTo(CircuitState.Open);
    assertThat(st.nextRestartAt).isNull();
    assertThat(hasCondition(escalated, "Escalated", "True", "CircuitBreakerOpen")).isTrue();
    f.holdsFor(Duration.ofMillis(700), () -> f.podsEverCreated("g-latch"), p -> p.size() == 2);
  }
}

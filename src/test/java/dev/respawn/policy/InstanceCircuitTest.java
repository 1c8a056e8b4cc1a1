package dev.respawn.policy;

import static dev.respawn.policy.EvaluatorFixture.assertToldCircuitChange;
import static dev.respawn.policy.EvaluatorFixture.reasons;
import static dev.respawn.policy.EvaluatorFixture.sim;
import static dev.respawn.policy.Specs.circuit;
import static dev.respawn.policy.Specs.retries;
import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.api.v1alpha1.InterruptionClass;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.api.v1alpha1.TerminalReason;
import dev.respawn.policy.Decision.Notice;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * api.md §3 steps e, g and j: the instance's own circuit breaker opens at its threshold, escalates when latched, and
 * otherwise waits for its HalfOpen trial, which closes it or opens it again.
 */
class InstanceCircuitTest {
  @Test
  void eCircuitOpensAfterThresholdFailuresAndJWaitsForTheHalfOpenTrial() {
    AgentSim s = sim(circuit(retries(Specs.spec(), 10), 5, "10m", "5m", false)).started();
    for (int i = 1; i <= 4; i++) {
      s.exit(1);
      assertThat(s.state.circuit.state()).isEqualTo(CircuitState.Closed);
      s.restartAndRun();
    }
    Decision d = s.exit(1);
    assertThat(s.state.circuit.state()).isEqualTo(CircuitState.Open);
    assertThat(s.state.circuit.trips()).isEqualTo(1);
    assertThat(s.state.phase).isEqualTo(Phase.CircuitOpen);
    assertThat(s.state.lastDecision.reasonCode()).isEqualTo(dev.respawn.policy.ReasonCode.CIRCUIT_OPEN);
    assertThat(s.state.nextRestartAt).isEqualTo(s.now.plus(Duration.ofMinutes(5)));
    assertThat(d.notices()).filteredOn(n -> n.reason() == dev.respawn.policy.EventReason.CircuitBreakerStateChanged).singleElement()
        .extracting(Notice::message).asString().startsWith("[RST] Circuit breaker opened for coder, reset in 5m");
    assertThat(d.wakeAt()).contains(s.state.nextRestartAt);
    // the HalfOpen trial
    s.now = s.state.nextRestartAt;
    Decision trial = s.reconcile();
    assertThat(trial.start()).isPresent();
    assertThat(s.state.circuit.state()).isEqualTo(CircuitState.HalfOpen);
    s.running();
    // healthy for resetAfter: closed, sequence over
    s.advance(Duration.ofSeconds(60));
    Decision healed = s.reconcile();
    assertThat(s.state.circuit.state()).isEqualTo(CircuitState.Closed);
    assertThat(s.state.attempt).isZero();
    assertThat(reasons(healed)).contains("RestartSucceeded", "CircuitBreakerStateChanged");
  }

  @Test
  void gALatchedCircuitEscalates() {
    AgentSim s = sim(circuit(retries(Specs.spec(), 10), 2, "10m", "5m", true)).started();
    s.exit(1);
    s.restartAndRun();
    s.exit(1);
    assertThat(s.state.phase).isEqualTo(Phase.Escalated);
    assertThat(s.state.terminalReason).isEqualTo(TerminalReason.CircuitBreakerOpen);
    assertThat(s.state.lastDecision.reasonCode()).isEqualTo(dev.respawn.policy.ReasonCode.CIRCUIT_OPEN);
    s.advance(Duration.ofHours(2));
    assertThat(s.reconcile().start()).isEmpty(); // never closes by itself
  }

  @Test
  void jAFailedHalfOpenTrialReopens() {
    AgentSim s = sim(circuit(retries(Specs.spec(), 10), 2, "10m", "5m", false)).started();
    s.exit(1);
    s.restartAndRun();
    s.exit(1);
    assertThat(s.state.phase).isEqualTo(Phase.CircuitOpen);
    s.restartAndRun();
    assertThat(s.state.circuit.state()).isEqualTo(CircuitState.HalfOpen);
    s.advance(Duration.ofSeconds(5));
    s.exit(1);
    assertThat(s.state.circuit.state()).isEqualTo(CircuitState.Open);
    assertThat(s.state.circuit.trips()).isEqualTo(2);
    assertThat(s.state.phase).isEqualTo(Phase.CircuitOpen);
  }

  @Test
  void jAHalfOpenTrialThatIsNeitherHealthyNorEndedCountsAsFailed() {
    AgentSim s = sim(Specs.heartbeat(circuit(retries(Specs.spec(), 10), 1, "10m", "5m", false), "10m", null))
        .started();
    s.heartbeat(dev.respawn.api.v1alpha1.HealthVerdict.Healthy);
    s.exit(1);
    s.restartAndRun(); // HalfOpen trial
    s.heartbeat(dev.respawn.api.v1alpha1.HealthVerdict.Ambiguous);
    Decision waiting = s.reconcile();
    assertThat(waiting.liveness().reason()).isEqualTo("AmbiguousState");
    assertThat(waiting.wakeAt()).isPresent();
    s.advance(Duration.ofMinutes(5));
    s.heartbeat(dev.respawn.api.v1alpha1.HealthVerdict.Ambiguous);
    Decision expired = s.reconcile();
    assertThat(expired.deletePod()).isTrue();
    assertThat(s.state.circuit.state()).isEqualTo(CircuitState.Open);
    assertThat(s.state.lastFailure.interruptionClass()).isEqualTo(InterruptionClass.Timeout);
  }

  /**
   * A healthy trial run restarted without a failure after openDuration (step 3: exit 42, or a restart by
   * hand): the next run is the trial now, bounded from its own start, not ended at once as an expired one.
   */
  @Test
  void jATrialRunRestartedWithoutAFailureHandsTheTrialToTheNextRun() {
    for (boolean byHand : new boolean[] {false, true}) {
      AgentRestartPolicySpec spec = circuit(retries(Specs.spec(), 10), 1, "10m", "5m", false);
      spec.resetAfter = "1h";
      AgentSim s = sim(spec).started();
      s.exit(1);
      s.restartAndRun(); // the HalfOpen trial, Ready
      s.advance(Duration.ofMinutes(6)); // past its openDuration, short of resetAfter
      if (byHand) {
        s.restartRequest = new Request("r-1", null);
        assertThat(s.reconcile().deletePod()).isTrue();
        assertThat(s.reconcile().start()).isPresent();
      } else {
        assertThat(s.exit(42).start()).isPresent();
      }
      String as = byHand ? "restart request" : "exit 42";
      assertThat(s.state.circuit.state()).as(as).isEqualTo(CircuitState.HalfOpen);
      assertThat(s.state.circuit.halfOpenAt()).as(as).isEqualTo(s.now);
      // run 3's pod is not running yet: a moment later it is still the trial, not an expired one
      s.advance(Duration.ofSeconds(1));
      assertThat(s.reconcile().deletePod()).as(as).isFalse();
      assertThat(s.state.run).as(as).isEqualTo(3);
      assertThat(s.state.attempt).as(as).isEqualTo(1);
      assertThat(s.state.circuit.trips()).as(as).isEqualTo(1);
      // its own bound holds: not Ready within openDuration of its start is a failed trial
      s.advance(Duration.ofMinutes(4));
      assertThat(s.reconcile().deletePod()).as(as).isFalse();
      s.advance(Duration.ofMinutes(1));
      assertThat(s.reconcile().deletePod()).as(as).isTrue();
      assertThat(s.state.circuit.state()).as(as).isEqualTo(CircuitState.Open);
      assertThat(s.state.circuit.trips()).as(as).isEqualTo(2);
      // the failure says the trial ran out, and that its pod was deleted (on-call tester: it read "not running yet")
      assertThat(s.state.lastFailure.message()).as(as)
          .startsWith("HalfOpen trial neither healthy nor ended within openDuration (5m0s): ");
      assertThat(s.state.lastFailure.podDeleted()).as(as).isTrue();
    }
  }

  /**
   * §3.3: a HalfOpen trial that asks for its restart (exit 42) is restarted at
   * once, the circuit still HalfOpen (the story tester's lost restart was a deferred start's, see
   * DeferredStartTest).
   */
  @Test
  void aHalfOpenTrialThatAsksForItsRestartIsRestartedAtOnce() {
    AgentSim s = sim(circuit(retries(Specs.spec(), 10), 2, "10m", "5m", false)).started();
    s.exit(1);
    s.restartAndRun();
    s.exit(1);
    assertThat(s.state.circuit.state()).isEqualTo(CircuitState.Open);
    s.now = s.state.nextRestartAt;
    assertThat(s.reconcile().start()).isPresent();
    s.running();
    assertThat(s.state.circuit.state()).isEqualTo(CircuitState.HalfOpen);
    int run = s.state.run;

    Decision asked = s.exit(42);
    assertThat(asked.start()).as("at once, the circuit HalfOpen: %s", s.state.phase).isPresent();
    assertThat(s.state.circuit.state()).isEqualTo(CircuitState.HalfOpen);
    assertThat(s.state.run).isEqualTo(run + 1);
  }

  /**
   * §3 j / README "No periodic reconcile": a HalfOpen trial run that is not Ready wakes the operator at its bound
   * (halfOpenAt + openDuration), where it counts as a failed trial and the circuit opens again.
   */
  @Test
  void aHalfOpenTrialThatIsNotReadyWakesAtItsBoundAndFailsThere() {
    AgentRestartPolicySpec spec = circuit(retries(Specs.spec(), 10), 1, "10m", "5m", false);
    spec.resetAfter = "1h"; // no wake-up of its own before the trial's bound
    AgentSim s = sim(spec).started();
    s.exit(1);
    assertThat(s.state.phase).isEqualTo(Phase.CircuitOpen);
    s.restartStillPending();
    Instant trialStart = s.state.circuit.halfOpenAt();
    assertThat(s.state.circuit.state()).isEqualTo(CircuitState.HalfOpen);
    s.advance(Duration.ofSeconds(20));
    s.pod = new PodView(s.pod.name(), s.pod.uid(), PodView.Stage.RUNNING, s.pod.createdAt(), s.now, null, null, false);
    Decision notReady = s.reconcile();
    assertThat(notReady.liveness().ready()).isFalse();
    assertThat(notReady.wakeAt()).contains(trialStart.plus(Duration.ofMinutes(5)));
    Decision expired = s.wake();
    assertThat(expired.deletePod()).isTrue();
    assertThat(s.state.circuit.state()).isEqualTo(CircuitState.Open);
    assertThat(s.state.lastFailure.interruptionClass()).isEqualTo(InterruptionClass.Timeout);
  }

  @Test
  void aCircuitTrialsStartWakesAtTheTrialsBoundWithoutWaitingForThePodToChange() {
    AgentSim s = sim(circuit(Specs.spec(), 1, "10m", "5s", false)).started(); // a bound before QUIET_START
    s.exit(1);
    assertThat(s.state.phase).isEqualTo(Phase.CircuitOpen);
    s.now = s.state.nextRestartAt;
    Decision trial = s.reconcile();
    assertThat(trial.start()).isPresent();
    assertThat(s.state.circuit.state()).isEqualTo(CircuitState.HalfOpen);
    assertThat(trial.wakeAt()).contains(s.state.circuit.halfOpenAt().plus(Duration.ofSeconds(5)));
  }

  /** §8 CircuitBreakerStateChanged: the run that starts as the HalfOpen trial is told (Open -> HalfOpen). */
  @Test
  void theStartOfTheHalfOpenTrialIsTold() {
    AgentSim s = sim(circuit(retries(Specs.spec(), 5), 1, "10m", "5m", false)).started();
    s.exit(1);
    Decision trial = s.restartStillPending();
    assertThat(s.state.circuit.state()).isEqualTo(CircuitState.HalfOpen);
    assertToldCircuitChange(trial, "Open -> HalfOpen");
  }

  /** A restart by hand skips the CircuitOpen wait: its run is the HalfOpen trial, and a failure reopens. */
  @Test
  void aManualRestartDuringCircuitOpenStartsTheHalfOpenTrial() {
    AgentSim s = sim(circuit(retries(Specs.spec(), 10), 1, "10m", "5m", false)).started();
    s.exit(1);
    s.advance(Duration.ofMinutes(1));
    s.restartRequest = new Request("r-1", null);
    assertThat(s.reconcile().start()).isPresent();
    assertThat(s.state.circuit.state()).isEqualTo(CircuitState.HalfOpen);
    s.running();
    s.advance(Duration.ofMinutes(10)); // past the trial time the wait had
    s.exit(1);
    assertThat(s.state.circuit.trips()).isEqualTo(2);
    assertThat(s.state.nextRestartAt).isEqualTo(s.now.plus(Duration.ofMinutes(5)));
    assertThat(s.state.lastDecision.delaySeconds()).isEqualTo(300.0);
  }

  /** api.md §1 circuitBreaker.window: "failures older than this are forgotten", also in what status shows. */
  @Test
  void aStartWrittenAfterTheWindowShowsTheFailuresItForgot() {
    AgentSim s = sim(circuit(retries(Specs.spec(), 10), 5, "3s", "5m", false)).started();
    s.exit(1);
    s.restartAndRun();
    assertThat(s.state.circuit.failureTimes()).hasSize(1);
    s.advance(Duration.ofSeconds(4));
    Decision restarted = s.exit(42);
    assertThat(restarted.start()).isPresent();
    assertThat(s.state.circuit.failureTimes()).as("the failure left the 3s window").isEmpty();
    assertThat(s.state.circuit.state()).isEqualTo(CircuitState.Closed);
    assertThat(s.state.attempt).as("the failure sequence is no circuit window").isEqualTo(1);
  }
}

package dev.respawn.policy;

import static dev.respawn.policy.EvaluatorFixture.reasons;
import static dev.respawn.policy.EvaluatorFixture.sim;
import static dev.respawn.policy.Specs.backoff;
import static dev.respawn.policy.Specs.circuit;
import static dev.respawn.policy.Specs.retries;
import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.api.v1alpha1.HealthVerdict;
import dev.respawn.api.v1alpha1.OperatorRequest;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.api.v1alpha1.TerminalReason;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * api.md §3 steps 1 and 2: spec.suspend stops the run and clearing it starts a fresh one (also around an Open or
 * latched circuit and an ended lifecycle); exit code 0 succeeds.
 */
class SuspendAndCleanExitTest {
  @Test
  void step1SuspendStopsTheRunAndClearingItStartsAFreshOne() {
    AgentSim s = sim(Specs.spec()).started();
    s.suspend = true;
    Decision d = s.reconcile();
    assertThat(d.deletePod()).isTrue();
    assertThat(d.start()).isEmpty();
    assertThat(s.state.phase).isEqualTo(Phase.Suspended);
    assertThat(s.state.terminalReason).isEqualTo(TerminalReason.OperatorShutdown);
    assertThat(s.state.history).last().extracting(InstanceState.RunInfo::outcome).isEqualTo(RunOutcome.Stopped);
    assertThat(s.reconcile().start()).isEmpty(); // stays stopped
    s.suspend = false;
    Decision resumed = s.reconcile();
    assertThat(resumed.start()).hasValueSatisfying(p -> assertThat(p.podName()).isEqualTo("coder-2"));
    assertThat(s.state.terminalReason).isNull();
    assertThat(s.state.attempt).isZero();
  }

  /**
   * The run ends in the reconcile that sees spec.suspend: step 1 decides that ending (Suspended, no restart),
   * and clearing spec.suspend later starts a fresh run, not the failure's backoff (nor a clean exit's end).
   */
  @Test
  void aRunThatEndsAsSuspendIsSetIsNotDecidedAgainWhenItIsCleared() {
    AgentSim s = sim(Specs.spec()).started();
    s.suspend = true;
    s.exit(1);
    assertThat(s.state.phase).isEqualTo(Phase.Suspended);
    assertThat(s.state.attempt).isZero();
    assertThat(s.state.history).last().satisfies(r -> {
      assertThat(r.outcome()).isEqualTo(RunOutcome.Stopped);
      assertThat(r.exitCode()).isEqualTo(1);
    });
    s.advance(Duration.ofMinutes(5));
    s.suspend = false;
    Decision resumed = s.reconcile();
    assertThat(resumed.start()).hasValueSatisfying(p -> assertThat(p.run()).isEqualTo(2));
    assertThat(s.state.attempt).isZero();

    AgentSim clean = sim(Specs.spec()).started();
    clean.suspend = true;
    clean.exit(0);
    clean.suspend = false;
    assertThat(clean.reconcile().start()).as("not Succeeded: the exit was decided as suspended").isPresent();
  }

  /**
   * Escalated by a Stalled verdict, its pod not deleted yet (the operator stopped in between), then suspended: the
   * pod is deleted and the lifecycle stays ended; suspending is no way around a resume (api.md §6).
   */
  @Test
  void suspendingAnEscalatedInstanceWhosePodStillRunsKeepsItEscalated() {
    AgentSim s = sim(Specs.heartbeat(retries(Specs.spec(), 0), "10s", "10s")).started();
    s.heartbeat(HealthVerdict.Stalled);
    s.suspend = true;
    Sighting suspendedPodStillRunning = s.sighting(null);
    s.suspend = false;
    Decision escalated = s.reconcile();
    assertThat(escalated.state().phase).isEqualTo(Phase.Escalated);
    assertThat(escalated.deletePod()).isTrue();

    Decision again = s.evaluator.decide(s.policy, escalated.state(), suspendedPodStillRunning, s.now.plusSeconds(1),
        s.random);

    assertThat(again.deletePod()).isTrue();
    assertThat(again.state().phase).isEqualTo(Phase.Escalated);
    assertThat(again.state().terminalReason).isEqualTo(escalated.state().terminalReason);
    assertThat(again.start()).isEmpty();
  }

  /**
   * Suspended while its policy is refused (missing or invalid): the stand-in the core decides with keeps
   * the restarts status recorded, also one it adopts (a start whose status write was still deferred).
   */
  @Test
  void suspendWhileThePolicyIsRefusedKeepsTheRecordedRestarts() {
    AgentSim s = sim(Specs.window(backoff("Linear", "1s", 1.0, "10s"), 10, "1h")).started();
    Instant earlier = s.now.minus(Duration.ofMinutes(10));
    s.state.recentRestarts = new java.util.ArrayList<>(List.of(earlier));
    s.exit(1);
    InstanceState shown = s.state.copy(); // Backoff, as status shows it
    Decision start = s.restartStillPending();
    assertThat(start.deferStatus()).as("a start with nothing else to tell waits for the run to show").isTrue();
    Instant restarted = s.now;
    s.state = shown; // the deferred write: status still shows the Backoff
    s.suspend = true;

    Decision kept = s.evaluator.decide(s.policy.whileRefused(), s.state, s.sighting(null), s.now, s.random);
    assertThat(kept.state().phase).isEqualTo(Phase.Suspended);
    assertThat(kept.state().run).as("the started run adopted").isEqualTo(2);
    assertThat(kept.state().recentRestarts).containsExactly(earlier, restarted);
    // never more than any policy may allow (api.md §9: recentRestarts <= maxRestarts <= 1000)
    s.state.recentRestarts = new java.util.ArrayList<>(java.util.Collections.nCopies(Bounds.MAX_RESTARTS, earlier));
    Decision bounded = s.evaluator.decide(s.policy.whileRefused(), s.state, s.sighting(null), s.now, s.random);
    assertThat(bounded.state().recentRestarts).hasSize(Bounds.MAX_RESTARTS).last().isEqualTo(restarted);

    RestartPolicy unlimited = AgentSim.policy(Specs.spec()); // what the built-in defaults alone would do
    Decision forgotten = s.evaluator.decide(unlimited, s.state, s.sighting(null), s.now, s.random);
    assertThat(forgotten.state().recentRestarts).isEmpty();
  }

  /** Suspended while a start's status write waits: the adopted run's restart shows it started. */
  @Test
  void suspendDuringADeferredStartShowsTheRestartStarted() {
    AgentSim s = sim(backoff("Linear", "1s", 1.0, "10s")).started();
    s.exit(1);
    InstanceState shown = s.state.copy();
    Decision start = s.restartStillPending();
    assertThat(start.deferStatus()).isTrue();
    Instant started = s.now;
    s.state = shown; // status still shows the Backoff
    s.suspend = true;
    s.reconcile();
    assertThat(s.state.phase).isEqualTo(Phase.Suspended);
    assertThat(s.state.lastRestart.pod()).isEqualTo("coder-2");
    assertThat(s.state.lastRestart.startedAt()).isEqualTo(started);
  }

  /** Suspended while the circuit was Open, unsuspended after openDuration: the next run is the trial. */
  @Test
  void clearingSuspendAfterOpenDurationStartsTheHalfOpenTrial() {
    AgentSim s = sim(circuit(retries(Specs.spec(), 10), 1, "10m", "5m", false)).started();
    s.exit(1);
    Instant trialAt = s.state.nextRestartAt;
    s.suspend = true;
    s.reconcile();
    s.now = trialAt.plusSeconds(30);
    s.suspend = false;
    Decision resumed = s.reconcile();
    assertThat(resumed.start()).hasValueSatisfying(p -> assertThat(p.run()).isEqualTo(2));
    assertThat(s.state.circuit.state()).isEqualTo(CircuitState.HalfOpen);
    assertThat(s.state.circuit.halfOpenAt()).isEqualTo(s.now);
    s.running();
    s.advance(Duration.ofSeconds(10));
    s.exit(1); // a failed trial: the circuit opens again, the next trial is openDuration away
    assertThat(s.state.circuit.state()).isEqualTo(CircuitState.Open);
    assertThat(s.state.circuit.trips()).isEqualTo(2);
    assertThat(s.state.phase).isEqualTo(Phase.CircuitOpen);
    assertThat(s.state.nextRestartAt).isEqualTo(s.now.plus(Duration.ofMinutes(5)));
    assertThat(s.state.lastDecision.delaySeconds()).isEqualTo(300.0);
  }

  /**
   * README "Clearing spec.suspend starts a fresh run at once (not a failure)": with the circuit Open and openDuration
   * over, that decision is a restart now (manual_restart, no delay), not a wait for the circuit.
   */
  @Test
  void clearingSuspendAfterOpenDurationIsDecidedAsARestartNow() {
    AgentSim s = sim(circuit(retries(Specs.spec(), 10), 1, "10m", "5m", false)).started();
    s.exit(1);
    Instant trialAt = s.state.nextRestartAt;
    s.suspend = true;
    s.reconcile();
    s.now = trialAt.plusSeconds(30);
    s.suspend = false;
    s.reconcile();
    assertThat(s.state.lastDecision.action()).isEqualTo(DecisionAction.Restart);
    assertThat(s.state.lastDecision.reasonCode()).isEqualTo(ReasonCode.MANUAL_RESTART);
    assertThat(s.state.lastDecision.delaySeconds()).isZero();
    assertThat(s.state.attempt).as("not a failure").isEqualTo(1);
  }

  /** Unsuspended before the circuit's openDuration is over: it waits for the trial, as it would have. */
  @Test
  void clearingSuspendWhileTheCircuitIsOpenWaitsForTheTrial() {
    AgentSim s = sim(circuit(retries(Specs.spec(), 10), 1, "10m", "5m", false)).started();
    s.exit(1);
    Instant trialAt = s.state.nextRestartAt;
    s.suspend = true;
    s.reconcile();
    s.advance(Duration.ofMinutes(1));
    s.suspend = false;
    Decision waiting = s.reconcile();
    assertThat(waiting.start()).isEmpty();
    assertThat(s.state.phase).isEqualTo(Phase.CircuitOpen);
    assertThat(s.state.nextRestartAt).isEqualTo(trialAt);
    assertThat(s.state.lastDecision.reasonCode()).isEqualTo(dev.respawn.policy.ReasonCode.CIRCUIT_OPEN);
    assertThat(s.state.lastDecision.delaySeconds()).isEqualTo(240.0);
    assertThat(waiting.wakeAt()).contains(trialAt);
    assertThat(s.wake().start()).isPresent();
    assertThat(s.state.circuit.state()).isEqualTo(CircuitState.HalfOpen);
  }

  /** A latched circuit is terminal until forced: suspending and unsuspending does not unlatch it. */
  @Test
  void suspendingALatchedInstanceLeavesItEscalatedUntilAResume() {
    AgentSim s = sim(circuit(retries(Specs.spec(), 10), 1, "10m", "5m", true)).started();
    Decision latched = s.exit(1);
    assertThat(s.state.phase).isEqualTo(Phase.Escalated);
    assertThat(s.state.terminalReason).isEqualTo(TerminalReason.CircuitBreakerOpen);
    assertThat(latched.notices()).anySatisfy(n -> assertThat(n.message())
        .contains("Circuit breaker opened for coder, latched: it stays Open until a resume").doesNotContain("reset in"));
    InstanceState escalated = s.state.copy();
    s.suspend = true;
    Decision suspended = s.reconcile();
    assertThat(s.state).as("no run to stop: the escalation stays as it was").isEqualTo(escalated);
    assertThat(suspended.notices()).isEmpty();
    s.advance(Duration.ofMinutes(30)); // long past openDuration
    s.suspend = false;
    Decision unsuspended = s.reconcile();
    assertThat(unsuspended.start()).isEmpty();
    assertThat(unsuspended.wakeAt()).isEmpty();
    assertThat(s.state).isEqualTo(escalated);
    assertThat(s.reconcile().start()).as("it stays so").isEmpty();

    s.resumeRequest = new Request("r-1", null);
    Decision resumed = s.reconcile();
    assertThat(resumed.start()).hasValueSatisfying(p -> assertThat(p.run()).isEqualTo(2));
    assertThat(s.state.circuit.state()).isEqualTo(CircuitState.Closed);
  }

  /** Unsuspend and resume in one edit: the resume forces the latched circuit, the run starts at once. */
  @Test
  void clearingSuspendTogetherWithAResumeStartsALatchedInstanceAfresh() {
    AgentSim s = sim(circuit(retries(Specs.spec(), 10), 1, "10m", "5m", true)).started();
    s.exit(1);
    s.suspend = true;
    s.reconcile();
    s.suspend = false;
    s.resumeRequest = new Request("r-1", null);
    Decision resumed = s.reconcile();
    assertThat(resumed.start()).hasValueSatisfying(p -> assertThat(p.run()).isEqualTo(2));
    assertThat(s.state.circuit.state()).isEqualTo(CircuitState.Closed);
    assertThat(s.state.attempt).isZero();
    assertThat(resumed.event()).hasValueSatisfying(e -> assertThat(e.type()).isEqualTo(EventType.Normal));
    assertThat(reasons(resumed)).doesNotContain("Escalated");
  }

  /**
   * §6: only a resume continues an instance the policy gave up on (Escalated, Failed), and nothing restarts one
   * that finished (Succeeded): suspending and unsuspending such an instance changes nothing, and a request made
   * while it is suspended is refused.
   */
  @Test
  void suspendingAnEndedLifecycleChangesNothingAndRestartsNothing() {
    AgentSim exhausted = sim(retries(Specs.spec(), 0)).started();
    exhausted.exit(1);
    AgentSim failed = sim(Specs.spec()).started();
    failed.exit(1, "Error", "invalid_configuration: bad key");
    AgentSim done = sim(Specs.spec()).started();
    done.exit(0);
    for (AgentSim s : List.of(exhausted, failed, done)) {
      Phase phase = s.state.phase;
      assertThat(phase).isIn(Phase.Escalated, Phase.Failed, Phase.Succeeded);
      InstanceState ended = s.state.copy();
      s.suspend = true;
      assertThat(s.reconcile().deletePod()).isFalse();
      assertThat(s.state).as(phase + " while suspended").isEqualTo(ended);
      s.resumeRequest = new Request("while-suspended", null);
      Decision refused = s.reconcile();
      assertThat(refused.start()).isEmpty();
      assertThat(reasons(refused)).containsExactly("RestartRequested");
      s.suspend = false;
      Decision unsuspended = s.reconcile();
      assertThat(unsuspended.start()).as(phase + " unsuspended").isEmpty();
      assertThat(s.state.phase).isEqualTo(phase);
      assertThat(s.state.terminalReason).isEqualTo(ended.terminalReason);
      assertThat(s.state.attempt).isEqualTo(ended.attempt);
    }
  }

  /** §6: a restart request while suspended is refused with a Warning, and acted on never (not after unsuspend). */
  @Test
  void aRestartRequestWhileSuspendedIsRefusedAndNotActedOnLater() {
    AgentSim s = sim(Specs.spec()).started();
    s.suspend = true;
    s.reconcile();
    assertThat(s.state.lastDecision.reasonCode()).isEqualTo(ReasonCode.SUSPENDED);
    s.restartRequest = new Request("r-1", null);
    Decision refused = s.reconcile();
    assertThat(refused.start()).isEmpty();
    assertThat(refused.notices()).anySatisfy(n -> {
      assertThat(n.reason()).isEqualTo(EventReason.RestartRequested);
      assertThat(n.type()).isEqualTo(EventType.Warning);
      assertThat(n.message()).contains("r-1", "refused");
    });
    assertThat(s.state.handled(OperatorRequest.RESTART, "r-1")).isTrue();
    s.suspend = false;
    s.reconcile(); // the fresh run of the unsuspend
    assertThat(s.state.lastDecision.reasonCode()).isEqualTo(ReasonCode.MANUAL_RESTART);
    s.running();
    s.advance(Duration.ofMinutes(1));
    assertThat(s.reconcile().deletePod()).as("r-1 was answered while suspended").isFalse();
    assertThat(s.state.run).isEqualTo(2);
  }

  @Test
  void step2ExitZeroSucceeds() {
    AgentSim s = sim(Specs.spec()).started();
    Decision d = s.exit(0);
    assertThat(s.state.phase).isEqualTo(Phase.Succeeded);
    assertThat(s.state.terminalReason).isEqualTo(TerminalReason.CleanExit);
    assertThat(d.start()).isEmpty();
    assertThat(d.wakeAt()).isEmpty();
    assertThat(s.state.restarts).isZero();
  }

  /** §3 step 2 and §2 history: a clean exit is a decision like any other, stored in lastDecision and history. */
  @Test
  void aCleanExitIsStoredInLastDecisionAndHistory() {
    AgentSim s = sim(Specs.spec()).started();
    s.advance(Duration.ofMinutes(5));
    s.exit(0);
    assertThat(s.state.phase).isEqualTo(Phase.Succeeded);
    assertThat(s.state.terminalReason).isEqualTo(TerminalReason.CleanExit);
    assertThat(s.state.lastDecision.reasonCode()).isEqualTo(ReasonCode.CLEAN_EXIT);
    assertThat(s.state.lastDecision.at()).isEqualTo(s.now);
    assertThat(s.state.history).last().satisfies(h -> {
      assertThat(h.pod()).isEqualTo("coder-1");
      assertThat(h.outcome()).isEqualTo(RunOutcome.Success);
      assertThat(h.exitCode()).isZero();
      assertThat(h.reasonCode()).isEqualTo(ReasonCode.CLEAN_EXIT);
    });
  }
}

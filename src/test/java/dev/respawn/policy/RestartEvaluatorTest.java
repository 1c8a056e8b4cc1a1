package dev.respawn.policy;

import static dev.respawn.policy.Specs.backoff;
import static dev.respawn.policy.Specs.circuit;
import static dev.respawn.policy.Specs.retries;
import static dev.respawn.policy.Specs.rule;
import static dev.respawn.policy.Specs.rules;
import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.api.v1alpha1.FailureRule;
import dev.respawn.api.v1alpha1.HealthVerdict;
import dev.respawn.api.v1alpha1.InterruptionClass;
import dev.respawn.api.v1alpha1.OperatorRequest;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.api.v1alpha1.TerminalReason;
import dev.respawn.policy.Decision.Notice;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** api.md §3 steps 1–5 and a–k through the one entry point, run by run. */
class RestartEvaluatorTest {
  static AgentSim sim(AgentRestartPolicySpec spec) {
    return new AgentSim(AgentSim.policy(spec));
  }

  /** An agent that failed twice: out of retries, its latched circuit open, it is Escalated. */
  static AgentSim escalatedTwiceFailed() {
    AgentSim s = sim(Specs.window(circuit(retries(Specs.spec(), 1), 2, "10m", "5m", true), 10, "1h")).started();
    s.exit(1);
    s.restartAndRun();
    s.exit(1);
    assertThat(s.state.phase).isEqualTo(Phase.Escalated);
    return s;
  }

  /** Restarts a running agent once per request id, as a person would; each new run runs. */
  static void restartedByHand(AgentSim s, String... ids) {
    for (String id : ids) {
      s.restartRequest = new Request(id, null);
      assertThat(s.reconcile().deletePod()).as("restart %s", id).isTrue();
      s.reconcile();
      s.running();
    }
  }

  /** The controller's view of a refused create: the spawn-failure decision from the state before it. */
  static Decision refused(AgentSim s) {
    Decision d = s.evaluator.spawnFailed(s.policy, s.state, s.sighting(null), false, "pods \"coder-1\" exists",
        s.now, s.random);
    s.state = d.state();
    return d;
  }

  static List<String> reasons(Decision d) {
    return d.notices().stream().map(n -> n.reason().name()).toList();
  }

  @Nested
  class Lifecycle {
    @Test
    void runsThatEndBeforeRunningLeaveOnlyTheLastFinishedPod() {
      AgentSim s = sim(retries(Specs.spec(), 5));
      s.reconcile(); // coder-1 created, never seen running
      for (int run = 1; run <= 4; run++) {
        s.exit(1);
        if (run < 4) {
          s.restartStillPending();
        }
      }
      // every run started (it ran and ended): the pod before it was deleted, the last one kept for logs
      assertThat(s.decisions.stream().flatMap(d -> d.deletions().stream()).map(PodDeletion::name))
          .containsExactly("coder-1", "coder-2", "coder-3");
      assertThat(s.state.currentPod).isEqualTo("coder-4");
    }

    @Test
    void theFirstReconcileStartsRunOne() {
      AgentSim s = sim(Specs.spec());
      Decision d = s.reconcile();
      assertThat(d.start()).hasValueSatisfying(p -> {
        assertThat(p.run()).isEqualTo(1);
        assertThat(p.podName()).isEqualTo("coder-1");
        assertThat(p.attempt()).isZero();
        assertThat(p.resumeCheckpoint()).isEmpty();
      });
      assertThat(s.state.phase).isEqualTo(Phase.Starting);
      assertThat(s.state.restarts).isZero();
      assertThat(reasons(d)).doesNotContain("RestartStarted");
      s.running();
      assertThat(s.state.phase).isEqualTo(Phase.Running);
      assertThat(s.state.runStartedAt).isEqualTo(s.now);
      assertThat(s.last.liveness().ready()).isTrue();
    }

    /** Suspended or done in an open failure sequence: lastDecision keeps the sequence's maxAttempts (not 0). */
    @Test
    void aStopInAnOpenSequenceKeepsItsMaxAttempts() {
      AgentSim s = sim(Specs.spec()).started(); // maxRetries 3
      s.end(EndingKind.TERMINATED, "OOMKilled"); // capped at 2 retries
      assertThat(s.state.lastDecision.maxAttempts()).isEqualTo(2);
      s.restartAndRun();
      s.suspend = true;
      s.reconcile();
      assertThat(s.state.phase).isEqualTo(Phase.Suspended);
      assertThat(s.state.lastDecision.maxAttempts()).as("the OOM cap of the open sequence").isEqualTo(2);
      AgentSim done = sim(Specs.spec()).started();
      done.exit(1);
      done.restartAndRun();
      done.exit(0);
      assertThat(done.state.phase).isEqualTo(Phase.Succeeded);
      assertThat(done.state.lastDecision.maxAttempts()).isEqualTo(3);
    }

    /**
     * §3: the Escalated message's "kubectl logs" names the run that just ended, also when the last failure is an
     * older run's (runs since restarted themselves with exit 42 until the restart window was full).
     */
    @Test
    void anEscalationAfterRestartsWithoutFailuresPointsAtTheRunThatEnded() {
      AgentSim s = sim(Specs.window(Specs.spec(), 3, "1h")).started();
      s.exit(1);
      s.restartAndRun();
      for (int n = 0; n < 3 && s.state.phase != Phase.Escalated; n++) {
        s.exit(42); // restarted at once, in the same decision
        if (s.state.phase != Phase.Escalated) {
          s.running();
        }
      }
      assertThat(s.state.phase).isEqualTo(Phase.Escalated);
      assertThat(s.state.lastFailure.pod()).isEqualTo("coder-1");
      String pod = s.state.currentPod;
      assertThat(pod).isNotEqualTo("coder-1");
      assertThat(s.last.event()).hasValueSatisfying(e -> assertThat(e.message())
          .contains("Last failure: pod coder-1", "Last run: pod " + pod + ", ended without a failure",
              "Inspect: kubectl logs " + pod + " -n agents")
          .doesNotContain("kubectl logs coder-1 "));
    }

    /**
     * A decision that ends the live run is written to status before its pod is deleted: when the operator stopped in
     * between, the next decision sees the run recorded as ended and its pod still running. It deletes the pod again,
     * and decides nothing else (the run is no live run to take up, nor an ending to decide anew).
     */
    @Test
    void aRunRecordedAsEndedWhosePodStillRunsIsDeletedAndNothingElse() {
      for (boolean suspend : new boolean[] {false, true}) {
        AgentSim s = sim(Specs.spec()).started();
        s.suspend = suspend;
        s.restartRequest = suspend ? null : new Request("r1", null);
        Sighting podStillRunning = s.sighting(null);
        Decision ended = s.reconcile();
        assertThat(ended.deletePod()).as("suspend %s", suspend).isTrue();

        Decision again = s.evaluator.decide(s.policy, ended.state(), podStillRunning, s.now.plusSeconds(1), s.random);

        assertThat(again.deletePod()).as("suspend %s", suspend).isTrue();
        assertThat(again.start()).isEmpty();
        assertThat(again.notices()).isEmpty();
        assertThat(again.state()).as("suspend %s", suspend).isEqualTo(ended.state());
      }
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

    /** api.md §9, recentRestarts <= maxRestarts: a policy edit that lowers maxRestarts bounds the list at once. */
    @Test
    void aLoweredMaxRestartsKeepsOnlyTheNewestRestarts() {
      AgentSim s = sim(Specs.window(backoff("Linear", "1s", 1.0, "10s"), 10, "1h")).started();
      List<Instant> four = List.of(s.now.minusSeconds(40), s.now.minusSeconds(30), s.now.minusSeconds(20),
          s.now.minusSeconds(10));
      s.state.recentRestarts = new java.util.ArrayList<>(four);
      RestartPolicy lowered = AgentSim.policy(Specs.window(backoff("Linear", "1s", 1.0, "10s"), 2, "1h"));

      Decision edited = s.evaluator.decide(lowered, s.state, s.sighting(null), s.now, s.random);
      assertThat(edited.state().recentRestarts).containsExactly(four.get(2), four.get(3));
      assertThat(edited.state().phase).as("nothing else changes").isEqualTo(s.state.phase);
      Decision again = s.evaluator.decide(lowered, edited.state(), s.sighting(null), s.now.plusSeconds(5), s.random);
      assertThat(again.state()).as("bounded once: nothing more to write").isEqualTo(edited.state());
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

    /** A restart request seen with the run's failure: the failure is counted, the request skips its wait. */
    @Test
    void aRestartRequestThatArrivesWithAFailureSkipsTheFailuresWait() {
      AgentSim s = sim(Specs.spec()).started();
      s.restartRequest = new Request("r-1", null);
      Decision d = s.exit(1);
      assertThat(s.state.attempt).as("the failure counts").isEqualTo(1);
      assertThat(d.start()).as("restart now").hasValueSatisfying(p -> assertThat(p.run()).isEqualTo(2));
      assertThat(s.state.lastDecision.reasonCode()).isEqualTo(ReasonCode.MANUAL_RESTART);
      assertThat(s.state.history).last().extracting(InstanceState.RunInfo::outcome).isEqualTo(RunOutcome.Failure);

      AgentSim sidecars = sim(Specs.spec()).started();
      sidecars.restartRequest = new Request("r-1", null);
      Decision ended = sidecars.exitWhileSidecarsRun(1, "boom");
      assertThat(sidecars.state.attempt).as("an ending seen while sidecars run counts too").isEqualTo(1);
      assertThat(sidecars.state.history).last().extracting(InstanceState.RunInfo::outcome)
          .isEqualTo(RunOutcome.Failure);
      assertThat(ended.deletions()).as("its sidecars are ended").extracting(PodDeletion::name).containsExactly("coder-1");
      assertThat(sidecars.state.nextRestartAt).as("restart now, once the pod is gone").isEqualTo(sidecars.now);
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

    /**
     * A restarted operator grants a live run a full timeout from its first look, but a grant is not a renewal:
     * an agent that last renewed before resetAfter ran out does not end its failure sequence by it.
     */
    @Test
    void anOperatorsGrantAfterItsRestartIsNotAHeartbeatHeardAfterResetAfter() {
      AgentSim s = sim(Specs.heartbeat(backoff("Linear", "1s", 1.0, "10s"), "60s", null)).started();
      s.heartbeat(HealthVerdict.Healthy);
      s.exit(1);
      s.restartAndRun();
      s.heartbeat(HealthVerdict.Healthy);
      s.reconcile(); // the first renewal's reconcile (a new holder): Ready, and healthy from now
      s.advance(Duration.ofSeconds(10));
      s.heartbeat(HealthVerdict.Healthy); // the agent's last renewal, then it hangs
      Instant lastRenewal = s.now;
      s.advance(Duration.ofSeconds(51)); // past resetAfter (the default 60 s of run time), within the timeout
      // a new operator process: it first sees that renewTime now
      s.lease = new LeaseView(lastRenewal, s.now, HealthVerdict.Healthy, null, null, null, null, null, true);
      s.reconcile();
      assertThat(s.state.attempt).as("the failure sequence stays open").isEqualTo(1);

      s.advance(Duration.ofSeconds(5));
      s.heartbeat(HealthVerdict.Healthy); // a renewal it hears
      s.reconcile();
      assertThat(s.state.attempt).as("closed by a renewal heard after resetAfter").isZero();
    }

    /**
     * An agent whose clock is an hour behind ours renews, Healthy, and is seen renewing: it is heard when it is
     * seen, and its failure sequence closes after resetAfter like any other's (its renewTime is never compared
     * with our clock).
     */
    @Test
    void anAgentWhoseClockIsBehindOursEndsItsFailureSequenceAfterResetAfter() {
      AgentSim s = sim(Specs.heartbeat(retries(Specs.spec(), 5), "60s", null)).started();
      s.exit(1);
      s.restartAndRun();
      assertThat(s.state.attempt).isEqualTo(1);
      for (int i = 0; i < 6; i++) {
        s.leaseHolder = s.pod.name();
        s.lease = new LeaseView(s.now.minus(Duration.ofHours(1)), s.now, HealthVerdict.Healthy, null, null, null,
            null, null);
        Decision d = s.reconcile();
        assertThat(d.liveness().ready()).isTrue();
        s.advance(Duration.ofSeconds(20));
      }
      assertThat(s.state.phase).isEqualTo(Phase.Running);
      assertThat(s.state.attempt).as("Ready and renewing for 2 minutes, resetAfter 60 s").isZero();
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

    /** §8: the audit line of a resume request names the class it was judged for, also when it is not eligible. */
    @Test
    void theAuditLineOfAResumeRequestNamesTheLastFailuresClassEligibleOrNot() {
      AgentSim s = sim(retries(Specs.spec(), 0)).started();
      s.exit(1);
      assertThat(s.state.phase).isEqualTo(Phase.Escalated);
      s.resumeRequest = new Request("r-1", null);
      Decision resumed = s.reconcile();
      assertThat(resumed.audit()).hasValueSatisfying(a -> {
        assertThat(a.interruptionClass()).isEqualTo(InterruptionClass.ToolFailure);
        assertThat(a.actor()).isEqualTo("operator");
      });
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

    @Test
    void aSidecarPodOfARunThatEndedTheInstanceIsKeptForLogsUntilAResumeStartsTheNextRun() {
      AgentSim s = sim(Specs.spec()).started();
      Decision failed = s.exitWhileSidecarsRun(1, "syntax_error: bad plan");
      assertThat(s.state.phase).isEqualTo(Phase.Failed);
      assertThat(failed.deletions()).as("no next run follows: kept for kubectl logs").isEmpty();
      assertThat(s.reconcile().deletions()).isEmpty();
      s.resumeRequest = new Request("r-1", null);
      Decision resumed = s.reconcile();
      assertThat(resumed.deletions()).extracting(PodDeletion::name, PodDeletion::why)
          .containsExactly(org.assertj.core.groups.Tuple.tuple("coder-1", PodDeletion.Why.ENDED_BUT_LIVE));
      assertThat(resumed.start()).as("never two live pods").isEmpty();
      assertThat(s.reconcile().start()).hasValueSatisfying(p -> assertThat(p.podName()).isEqualTo("coder-2"));
    }

    @Test
    void aSidecarPodOfACleanExitIsKeptForLogs() {
      AgentSim s = sim(Specs.spec()).started();
      Decision succeeded = s.exitWhileSidecarsRun(0, null);
      assertThat(s.state.phase).isEqualTo(Phase.Succeeded);
      assertThat(succeeded.deletions()).isEmpty();
    }

    @Test
    void aSidecarPodOfARunThatIsRestartedIsDeletedAtOnce() {
      AgentSim s = sim(Specs.spec()).started();
      Decision failed = s.exitWhileSidecarsRun(1, "network_timeout: upstream");
      assertThat(s.state.phase).isEqualTo(Phase.Backoff);
      assertThat(failed.deletions()).extracting(PodDeletion::why).containsExactly(PodDeletion.Why.ENDED_BUT_LIVE);
    }

    @Test
    void aRunThatEndedBeforeItWasSeenRunningStartedWithItsPod() {
      AgentSim s = sim(Specs.spec());
      s.reconcile(); // coder-1 created, never seen running
      Instant podStart = s.now.plusSeconds(2);
      s.advance(Duration.ofSeconds(5));
      s.pod = new PodView(s.pod.name(), s.pod.uid(), PodView.Stage.RUNNING, s.pod.createdAt(), podStart, null, null,
          false);
      s.exit(1); // reported only once it ended
      assertThat(s.state.history).last().extracting(InstanceState.RunInfo::startedAt).isEqualTo(podStart);
      s.restartStillPending(); // coder-2 created at nextRestartAt, never seen running
      Instant made = s.state.lastRestart.startedAt();
      s.advance(Duration.ofSeconds(1));
      s.end(EndingKind.DELETED, null); // its pod gone: only its start is known
      assertThat(s.state.history).last().satisfies(r -> {
        assertThat(r.pod()).isEqualTo("coder-2");
        assertThat(r.startedAt()).isEqualTo(made);
      });
    }

    @Test
    void eachEndingIsCountedOnceHoweverOftenItIsReported() {
      AgentSim s = sim(Specs.spec()).started();
      RunEnding e = new RunEnding("coder-1", s.pod.uid(), EndingKind.TERMINATED, 1, "Error", null, s.now);
      s.reconcile(e);
      InstanceState after = s.state;
      Decision again = s.reconcile(e);
      assertThat(again.state()).isEqualTo(after);
      assertThat(again.notices()).isEmpty();
      assertThat(s.state.attempt).isEqualTo(1);
    }

    @Test
    void endingsOfOtherPodsAreIgnored() {
      AgentSim s = sim(Specs.spec()).started();
      Decision d = s.reconcile(new RunEnding("coder-0", "other", EndingKind.TERMINATED, 1, "Error", null, s.now));
      assertThat(d.state().attempt).isZero();
      assertThat(d.state().phase).isEqualTo(Phase.Running);
    }

    @Test
    void theGivenStateIsNeverChanged() {
      AgentSim s = sim(Specs.spec()).started();
      InstanceState before = s.state;
      InstanceState copy = before.copy();
      s.exit(1);
      assertThat(before).isEqualTo(copy);
      assertThat(s.state).isNotSameAs(before);
    }

    @Test
    void theSameInputsGiveTheSameDecision() {
      AgentSim s = new AgentSim(AgentSim.policy(jittered())).started();
      Sighting o = s.sighting(new RunEnding("coder-1", s.pod.uid(), EndingKind.TERMINATED, 1, "Error",
          "network_timeout", s.now));
      RestartEvaluator ev = RestartEvaluator.builtIn();
      Decision a = ev.decide(s.policy, s.state, o, s.now, new java.util.SplittableRandom(5));
      Decision b = ev.decide(s.policy, s.state, o, s.now, new java.util.SplittableRandom(5));
      assertThat(a).isEqualTo(b);
    }

    private AgentRestartPolicySpec jittered() {
      AgentRestartPolicySpec spec = backoff("Exponential", "10s", 2.0, "120s");
      spec.backoff.jitter = 0.5;
      return spec;
    }

    @Test
    void aPodDeletedBySomeoneElseIsAContextReset() {
      AgentSim s = sim(Specs.spec()).started();
      s.end(EndingKind.DELETED, null);
      assertThat(s.state.lastFailure.interruptionClass()).isEqualTo(InterruptionClass.ContextReset);
      assertThat(s.state.phase).isEqualTo(Phase.Backoff);
    }

    @Test
    void restartedOperatorWaitsForNextRestartAtAndStartsOnce() {
      AgentSim s = sim(Specs.spec()).started();
      s.exit(1);
      var due = s.state.nextRestartAt;
      // a fresh operator process reconciles early: nothing happens, it wakes at nextRestartAt
      s.advance(Duration.ofMillis(500));
      Decision early = s.reconcile();
      assertThat(early.start()).isEmpty();
      assertThat(early.wakeAt()).contains(due);
      s.now = due;
      assertThat(s.reconcile().start()).isPresent();
      assertThat(s.reconcile().start()).isEmpty(); // the new pod is live: never a second one
      assertThat(s.starts).hasSize(2);
    }
  }

  @Nested
  class RestartRequests {
    /**
     * A resume asked for before the first decision (or the last id of a manifest that GitOps re-creates: §6 never
     * removes it) is that first run's start, as a restart asked for then is: no Warning that it was refused, no
     * restart counted, and it is not acted on again.
     */
    @Test
    void aResumeAskedForBeforeTheFirstDecisionIsTheFirstRunsStart() {
      AgentSim s = sim(Specs.spec());
      s.resumeRequest = new Request("resume-2026-11-20", null);
      Decision d = s.reconcile();
      assertThat(d.start()).hasValueSatisfying(p -> assertThat(p.podName()).isEqualTo("coder-1"));
      assertThat(d.notices()).noneMatch(n -> n.type() == EventType.Warning);
      assertThat(s.state.lastRestart.kind()).isEqualTo(RestartKind.Resume);
      assertThat(s.state.lastRestart.requestId()).isEqualTo("resume-2026-11-20");
      assertThat(s.state.restarts).isZero();
      assertThat(s.state.handled(OperatorRequest.RESUME, "resume-2026-11-20")).isTrue();
      s.running();
      s.advance(Duration.ofMinutes(1));
      assertThat(s.reconcile().deletePod()).as("the id is answered").isFalse();
      s.resumeRequest = new Request("resume-2026-11-27", null);
      assertThat(s.reconcile().notices()).as("a resume of a live run, after the first decision")
          .anySatisfy(n -> assertThat(n.message()).contains("Resume request resume-2026-11-27 refused"));
    }

    @Test
    void step3ExitCode42RestartsAtOnceWithoutCountingAFailure() {
      AgentSim s = sim(Specs.window(Specs.spec(), 10, "1h")).started();
      Decision d = s.exit(42, "Error", "Load new GitConfig implementation");
      assertThat(d.start()).hasValueSatisfying(p -> assertThat(p.podName()).isEqualTo("coder-2"));
      assertThat(s.state.attempt).isZero();
      assertThat(s.state.circuit.failureTimes()).isEmpty();
      assertThat(s.state.restarts).isEqualTo(1);
      assertThat(s.state.recentRestarts).containsExactly(s.now);
      assertThat(s.state.lastRestart.kind()).isEqualTo(RestartKind.RestartRequest);
      assertThat(s.state.lastRestart.reason()).isEqualTo("Load new GitConfig implementation");
      assertThat(s.state.lastRestart.previousPod()).isEqualTo("coder-1");
      assertThat(s.state.lastRestart.pod()).isEqualTo("coder-2");
      assertThat(s.state.lastDecision.reasonCode()).isEqualTo(dev.respawn.policy.ReasonCode.RESTART_REQUESTED);
      assertThat(reasons(d)).contains("RestartRequested", "RestartStarted");
    }

    /**
     * api.md §6, "restart now: ends a live run": asked for while the next run's pod runs but its start is not in
     * status yet (the write waits for its first sign), the request ends that run; it is not the restart that
     * started it.
     */
    @Test
    void aRestartRequestWhileANewRunsStartIsUnwrittenEndsThatRun() {
      AgentSim s = sim(Specs.window(backoff("Linear", "1s", 1.0, "10s"), 10, "1h")).started();
      s.exit(1);
      InstanceState shown = s.state.copy(); // Backoff, as status shows it
      assertThat(s.restartStillPending().deferStatus()).isTrue();
      s.state = shown; // the deferred write: status still shows the Backoff while coder-2 exists
      s.restartRequest = new Request("end-this-run", null);

      Decision d = s.evaluator.decide(s.policy, s.state, s.sighting(null), s.now, s.random);
      assertThat(d.state().run).as("the start made before is taken up").isEqualTo(2);
      assertThat(d.deletePod()).as("and the run it started is ended").isTrue();
      assertThat(d.deletions()).singleElement().satisfies(x -> assertThat(x.name()).isEqualTo("coder-2"));
      assertThat(d.startsExisting()).as("no pod made: its replacement comes once it is gone").isTrue();
      assertThat(d.start()).hasValueSatisfying(p -> assertThat(p.podName()).isEqualTo("coder-2"));
      assertThat(d.state().lastRestart.kind()).isEqualTo(RestartKind.Manual);
      assertThat(d.state().lastRestart.requestId()).isEqualTo("end-this-run");
      assertThat(d.state().lastRestart.previousPod()).isEqualTo("coder-2");
      assertThat(d.state().restarts).as("the failure's restart, then the request's").isEqualTo(1);
    }

    /**
     * The same request when the unwritten start's run has failed already: that failure is decided first (the
     * request does not end a run that is over), and the instance goes on: a start, or a wake-up for one.
     */
    @Test
    void aRestartRequestAfterAnUnwrittenStartsRunFailedLeavesNoStuckWait() {
      AgentSim s = sim(Specs.window(backoff("Linear", "10s", 1.0, "60s"), 10, "1h")).started();
      s.exit(1);
      InstanceState shown = s.state.copy();
      assertThat(s.restartStillPending().deferStatus()).isTrue();
      s.advance(Duration.ofSeconds(1));
      s.exit(1); // coder-2 fails before any reconcile saw it run
      s.state = shown;
      s.restartRequest = new Request("now-please", null);
      s.advance(Duration.ofMillis(10));

      Decision d = s.evaluator.decide(s.policy, s.state, s.sighting(null), s.now, s.random);
      assertThat(d.state().run).isEqualTo(2);
      assertThat(d.state().attempt).isEqualTo(2);
      assertThat(d.state().handledRequests.get(dev.respawn.api.v1alpha1.OperatorRequest.RESTART)).isEqualTo("now-please");
      assertThat(d.state().phase).isEqualTo(Phase.Backoff);
      assertThat(d.wakeAt()).as("woken for the next start").contains(d.state().nextRestartAt);
      assertThat(d.state().nextRestartAt).isAfter(s.now);
    }

    @Test
    void theRestartExitCodeIsConfigurable() {
      AgentSim s = sim(restartCode(3)).started();
      s.exit(3);
      assertThat(s.state.attempt).isZero();
      assertThat(s.state.run).isEqualTo(2);
      s.running();
      s.exit(42);
      assertThat(s.state.attempt).isEqualTo(1); // 42 is an ordinary failure now
    }

    private AgentRestartPolicySpec restartCode(int code) {
      AgentRestartPolicySpec spec = Specs.spec();
      spec.restartRequestExitCode = code;
      return spec;
    }

    @Test
    void exitCode42CountsInTheRestartWindow() {
      AgentSim s = sim(Specs.window(Specs.spec(), 2, "1h")).started();
      s.exit(42);
      s.running();
      s.exit(42);
      s.running();
      s.exit(42);
      assertThat(s.state.phase).isEqualTo(Phase.Escalated);
      assertThat(s.state.lastDecision.reasonCode()).isEqualTo(dev.respawn.policy.ReasonCode.RESTART_LIMIT_EXCEEDED);
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

    @Test
    void aManualRestartEndsTheLiveRunOnceAndIsRecorded() {
      AgentSim s = sim(Specs.spec()).started();
      s.restartRequest = new Request("r-1", "load new tools");
      Decision d = s.reconcile();
      assertThat(d.deletePod()).isTrue();
      assertThat(s.state.handledRequests.get(dev.respawn.api.v1alpha1.OperatorRequest.RESTART)).isEqualTo("r-1");
      assertThat(s.state.lastRestart.requestId()).isEqualTo("r-1");
      assertThat(s.state.lastRestart.kind()).isEqualTo(RestartKind.Manual);
      assertThat(s.state.attempt).isZero();
      // the pod is gone (the simulation deletes at once): the next reconcile starts run 2
      Decision next = s.reconcile();
      assertThat(next.start()).hasValueSatisfying(p -> assertThat(p.run()).isEqualTo(2));
      s.running();
      // the annotation stays (GitOps): the same id is not acted on again
      assertThat(s.reconcile().deletePod()).isFalse();
      assertThat(s.state.run).isEqualTo(2);
    }

    /**
     * The operator that acted on a request deleted the pod, then stopped before its status write: the next one sees
     * the pod gone and the request still new. That is the request's restart, once, not a failure (api.md §6).
     */
    @Test
    void aPodGoneWhileARestartRequestWaitsIsThatRestartNotAFailure() {
      AgentSim s = sim(Specs.spec()).started();
      s.restartRequest = new Request("r-1", "load new tools");
      Decision d = s.end(EndingKind.DELETED, "Deleted");
      assertThat(d.state().attempt).isZero();
      assertThat(d.state().lastFailure).isNull();
      assertThat(d.state().circuit.failureTimes()).isEmpty();
      assertThat(d.state().history).last().satisfies(h -> {
        assertThat(h.outcome()).isEqualTo(RunOutcome.Restarted);
        assertThat(h.reasonCode()).isEqualTo(ReasonCode.MANUAL_RESTART);
      });
      assertThat(d.state().lastRestart.kind()).isEqualTo(RestartKind.Manual);
      assertThat(d.state().lastRestart.requestId()).isEqualTo("r-1");
      assertThat(d.state().lastRestart.previousPod()).isEqualTo("coder-1");
      assertThat(d.start()).hasValueSatisfying(p -> assertThat(p.run()).isEqualTo(2));
      assertThat(d.state().restarts).isEqualTo(1);
    }

    /** With restartLimit's window full the request is refused, so a pod gone then went for another reason. */
    @Test
    void aPodGoneWhileARefusedRestartRequestWaitsIsAFailure() {
      AgentSim s = sim(Specs.window(Specs.spec(), 1, "1h")).started();
      s.restartRequest = new Request("r-1", null);
      assertThat(s.reconcile().deletePod()).isTrue();
      s.reconcile();
      s.running();
      s.restartRequest = new Request("r-2", null);
      Decision d = s.end(EndingKind.DELETED, "Deleted");
      assertThat(d.state().attempt).isEqualTo(1);
      assertThat(d.state().lastFailure).isNotNull();
      assertThat(d.state().history).last().extracting(InstanceState.RunInfo::outcome).isEqualTo(RunOutcome.Failure);
    }

    @Test
    void anEarlierRequestIdSetAgainIsNotActedOnAgain() {
      AgentSim s = sim(Specs.spec()).started();
      restartedByHand(s, "a", "b");
      assertThat(s.state.run).isEqualTo(3);
      // a GitOps revert puts "a" back: it was acted on already
      s.restartRequest = new Request("a", null);
      assertThat(s.reconcile().deletePod()).isFalse();
      assertThat(s.state.run).isEqualTo(3);
      assertThat(s.state.handledRequests.get(dev.respawn.api.v1alpha1.OperatorRequest.RESTART)).isEqualTo("b");
      assertThat(s.state.earlierRequests.get(dev.respawn.api.v1alpha1.OperatorRequest.RESTART)).containsExactly("a");
    }

    @Test
    void onlyTheLastTenEarlierRequestIdsAreRemembered() {
      InstanceState st = new InstanceState();
      for (int i = 0; i <= Bounds.EARLIER_REQUESTS + 1; i++) {
        st.handle(dev.respawn.api.v1alpha1.OperatorRequest.RESUME, "r" + i);
      }
      assertThat(st.earlierRequests.get(dev.respawn.api.v1alpha1.OperatorRequest.RESUME))
          .hasSize(Bounds.EARLIER_REQUESTS).startsWith("r1").endsWith("r10").doesNotContain("r0", "r11");
      assertThat(st.handled(dev.respawn.api.v1alpha1.OperatorRequest.RESUME, "r0")).isFalse();
      assertThat(st.handled(dev.respawn.api.v1alpha1.OperatorRequest.RESUME, "r5")).isTrue();
      assertThat(st.handled(dev.respawn.api.v1alpha1.OperatorRequest.RESUME, "r11")).isTrue();
    }

    @Test
    void aManualRestartIsRefusedWhenTheRestartWindowIsFullAndTheRunGoesOn() {
      AgentSim s = sim(Specs.window(Specs.spec(), 2, "1h")).started();
      restartedByHand(s, "a", "b");
      assertThat(s.state.recentRestarts).hasSize(2);
      java.time.Instant first = s.state.recentRestarts.get(0);
      s.restartRequest = new Request("c", null);
      Decision refused = s.reconcile();
      assertThat(refused.deletePod()).isFalse();
      assertThat(refused.start()).isEmpty();
      assertThat(refused.notices()).anySatisfy(n -> {
        assertThat(n.type()).isEqualTo(EventType.Warning);
        assertThat(n.message()).contains("Restart request c refused", "2 restarts within 1h",
            "again at " + first.plus(Duration.ofHours(1)));
      });
      assertThat(s.state.phase).isEqualTo(Phase.Running);
      assertThat(s.state.handledRequests.get(dev.respawn.api.v1alpha1.OperatorRequest.RESTART)).isEqualTo("c");
      // once the oldest restart left the window, a new request is acted on
      s.now = first.plus(Duration.ofHours(1)).plusSeconds(1);
      s.restartRequest = new Request("d", null);
      assertThat(s.reconcile().deletePod()).isTrue();
    }

    @Test
    void aManualRestartBetweenRunsSkipsTheWaitEvenWithTheWindowFull() {
      AgentSim s = sim(Specs.window(Specs.spec(), 3, "1h")).started();
      s.exit(1);
      assertThat(s.state.phase).isEqualTo(Phase.Backoff);
      // the window filled meanwhile (e.g. the policy's maxRestarts was lowered): the next run is due anyway
      s.state.recentRestarts = new java.util.ArrayList<>(List.of(s.now.minusSeconds(3), s.now.minusSeconds(2),
          s.now.minusSeconds(1)));
      s.restartRequest = new Request("now", null);
      assertThat(s.reconcile().start()).isPresent();
    }

    @Test
    void aManualRestartSkipsABackoffWait() {
      AgentSim s = sim(Specs.spec()).started();
      s.exit(1);
      assertThat(s.state.phase).isEqualTo(Phase.Backoff);
      s.restartRequest = new Request("skip", null);
      assertThat(s.reconcile().start()).isPresent();
    }

    /**
     * §8: a run started from its checkpoint is told as a ResumeDecision Event (the start in its note), while its
     * audit line is the start's: the resume_decision line with the verdict was the failure's.
     */
    @Test
    void aResumedStartIsAResumeDecisionEventAndARestartStartedAuditLine() {
      AgentSim s = sim(Specs.spec()).started();
      s.checkpoint("ckpt-17", "in_progress", true, true);
      Decision failure = s.exit(1, "Error", "network_timeout");
      assertThat(failure.audit()).hasValueSatisfying(a -> {
        assertThat(a.event()).isEqualTo("resume_decision");
        assertThat(a.eligible()).isTrue();
      });
      s.now = s.state.nextRestartAt;
      Decision start = s.reconcile();
      assertThat(start.start()).hasValueSatisfying(p -> assertThat(p.resumeCheckpoint()).contains("ckpt-17"));
      assertThat(start.event()).hasValueSatisfying(e -> {
        assertThat(e.reason()).isEqualTo(EventReason.ResumeDecision);
        assertThat(e.message()).startsWith("Resumed coder from checkpoint ckpt-17 (resume attempt 1)")
            .contains("RestartStarted: Restart started for coder: pod coder-2 replaces coder-1");
      });
      assertThat(start.audit()).hasValueSatisfying(a -> {
        assertThat(a.event()).isEqualTo("restart_started");
        assertThat(a.eligible()).as("this start resumes from the checkpoint").isTrue();
      });
      s.running();
      s.exit(1, "Error", "network_timeout");
      s.checkpoint(null, null, null, null);
      s.now = s.state.nextRestartAt;
      Decision fresh = s.reconcile();
      assertThat(fresh.start()).hasValueSatisfying(p -> assertThat(p.resumeCheckpoint()).isEmpty());
      assertThat(fresh.audit()).hasValueSatisfying(a -> {
        assertThat(a.event()).isEqualTo("restart_started");
        assertThat(a.eligible()).as("a fresh start").isFalse();
      });
    }

    @Test
    void aManualRestartThatSkipsAResumeCooldownStillResumesFromTheCheckpoint() {
      // api.md §6: restart "skips a Backoff wait"; here the wait is a resume cool-down before resuming (§7)
      AgentSim s = sim(Specs.spec()).started();
      s.checkpoint("ckpt-17", "in_progress", true, true);
      s.exit(1, "Error", "network_timeout");
      assertThat(s.state.lastDecision.reasonCode()).isEqualTo(dev.respawn.policy.ReasonCode.RESUME_BLOCKED_COOLDOWN);
      assertThat(s.state.resume.cooldownRemainingSeconds()).isEqualTo(30);
      s.restartRequest = new Request("skip", null);
      Decision d = s.reconcile();
      assertThat(d.start()).hasValueSatisfying(p -> {
        assertThat(p.resumeCheckpoint()).contains("ckpt-17");
        assertThat(p.interruptionClass()).contains(InterruptionClass.ToolFailure);
      });
      assertThat(s.state.lastRestart.kind()).isEqualTo(RestartKind.Manual);
      assertThat(s.state.resume.cooldownRemainingSeconds()).as("the cool-down was skipped").isZero();
      assertThat(s.state.resume.attempts()).isEqualTo(1);
    }

    @Test
    void aManualRestartOfALiveRunIsAFreshStart() {
      AgentSim s = sim(Specs.spec()).started();
      s.checkpoint("ckpt-17", "in_progress", true, true);
      s.restartRequest = new Request("r-2", null);
      s.reconcile();
      assertThat(s.reconcile().start()).hasValueSatisfying(p -> assertThat(p.resumeCheckpoint()).isEmpty());
    }

    @Test
    void aManualRestartIsRefusedInATerminalPhase() {
      AgentSim s = sim(Specs.spec()).started();
      s.exit(2, "Error", "syntax_error");
      s.restartRequest = new Request("r-9", null);
      Decision d = s.reconcile();
      assertThat(d.start()).isEmpty();
      assertThat(d.notices()).anySatisfy(n -> {
        assertThat(n.type()).isEqualTo(EventType.Warning);
        assertThat(n.message()).contains("refused").contains("respawn.dev/resume");
      });
      assertThat(s.state.handledRequests.get(dev.respawn.api.v1alpha1.OperatorRequest.RESTART)).isEqualTo("r-9");
    }

    @Test
    void aResumeIsRefusedWhileTheInstanceRunsOrWaitsNothingIsEndedOrReset() {
      AgentSim s = sim(Specs.spec()).started();
      s.resumeRequest = new Request("resume-live", null);
      Decision live = s.reconcile();
      assertThat(live.deletePod()).isFalse();
      assertThat(live.start()).isEmpty();
      assertThat(live.notices()).anySatisfy(n -> {
        assertThat(n.type()).isEqualTo(EventType.Warning);
        assertThat(n.message()).contains("resume-live", "refused", "Running", "respawn.dev/restart");
      });
      assertThat(s.state.handledRequests.get(dev.respawn.api.v1alpha1.OperatorRequest.RESUME)).isEqualTo("resume-live");
      assertThat(s.state.phase).isEqualTo(Phase.Running);
      assertThat(s.state.run).isEqualTo(1);
      // its audit line: the retries no failure sequence has used yet, the policy's (it said 0 before any decision)
      assertThat(live.audit()).hasValueSatisfying(a -> {
        assertThat(a.reasonCode()).isEqualTo(dev.respawn.policy.ReasonCode.REQUEST_REFUSED);
        assertThat(a.maxAttempts()).isEqualTo(s.policy.maxRetries()).isPositive();
      });

      s.exit(1);
      assertThat(s.state.phase).isEqualTo(Phase.Backoff);
      s.resumeRequest = new Request("resume-waiting", null);
      Decision waiting = s.reconcile();
      assertThat(waiting.start()).isEmpty();
      assertThat(s.state.attempt).as("not reset: the failure sequence goes on").isEqualTo(1);
      assertThat(reasons(waiting)).contains("RestartRequested");
    }

    @Test
    void aResumeInTheEditThatClearsSuspendStartsANewLifecycle() {
      AgentSim s = escalatedTwiceFailed();
      s.suspend = true;
      s.reconcile();
      assertThat(s.state.phase).as("the escalation stays while suspended").isEqualTo(Phase.Escalated);
      s.suspend = false;
      s.resumeRequest = new Request("after-suspend", null);
      Decision d = s.reconcile();
      assertThat(d.start()).isPresent();
      assertThat(s.state.attempt).isZero();
      assertThat(s.state.circuit.state()).isEqualTo(CircuitState.Closed);
      assertThat(s.state.lastRestart.kind()).isEqualTo(RestartKind.Resume);
    }

    @Test
    void aResumeRunsAFinishedAgentAgain() {
      AgentSim s = sim(Specs.spec()).started();
      s.exit(0);
      assertThat(s.state.phase).isEqualTo(Phase.Succeeded);
      s.resumeRequest = new Request("again", null);
      assertThat(s.reconcile().start()).hasValueSatisfying(p -> assertThat(p.run()).isEqualTo(2));
      assertThat(s.state.terminalReason).isNull();
    }

    @Test
    void aResumeStartsANewLifecycleFromEscalated() {
      AgentSim s = escalatedTwiceFailed();
      s.resumeRequest = new Request("resume-1", null);
      Decision d = s.reconcile();
      assertThat(d.start()).isPresent();
      assertThat(s.state.attempt).isZero();
      assertThat(s.state.circuit.state()).isEqualTo(CircuitState.Closed);
      assertThat(s.state.recentRestarts).hasSize(1); // cleared, then this restart
      assertThat(s.state.terminalReason).isNull();
      assertThat(s.state.handledRequests.get(dev.respawn.api.v1alpha1.OperatorRequest.RESUME)).isEqualTo("resume-1");
      assertThat(s.state.lastRestart.kind()).isEqualTo(RestartKind.Resume);
      s.running();
      assertThat(s.reconcile().start()).isEmpty(); // acted on once
    }
  }

  @Nested
  class FailureBranches {
    @Test
    void aBackoffNoneFails() {
      AgentSim s = sim(backoff("None", "2s", 2.0, "120s")).started();
      Decision d = s.exit(1);
      assertThat(s.state.phase).isEqualTo(Phase.Failed);
      assertThat(s.state.lastDecision.reasonCode()).isEqualTo(dev.respawn.policy.ReasonCode.POLICY_NONE);
      assertThat(d.start()).isEmpty();
      assertThat(reasons(d)).contains("Escalated");
    }

    @Test
    void bActionFailIsUnrecoverableWithARemediationChecklist() {
      AgentSim s = sim(Specs.spec()).started();
      Decision d = s.exit(2, "Error", "syntax_error in agent.py");
      assertThat(s.state.phase).isEqualTo(Phase.Failed);
      assertThat(s.state.terminalReason).isEqualTo(TerminalReason.UnrecoverableError);
      assertThat(s.state.lastDecision.reasonCode()).isEqualTo(dev.respawn.policy.ReasonCode.NON_RETRYABLE_FAILURE);
      assertThat(s.state.lastFailure.retryable()).isFalse();
      assertThat(d.notices()).filteredOn(n -> n.reason() == dev.respawn.policy.EventReason.Escalated).singleElement()
          .satisfies(n -> assertThat(n.message()).contains("pod coder-1", "class ToolFailure", "exit code 2",
              "syntax_error in agent.py", "kubectl logs coder-1", "respawn.dev/resume",
              "kubectl respawn resume coder --force"));
      assertThat(d.liveness().ready()).isFalse();
      assertThat(d.liveness().reason()).isEqualTo("RestartLimitExceeded");
    }

    @Test
    void cAnUnknownEndingEscalatesFailClosed() {
      AgentSim s = sim(Specs.spec()).started();
      s.end(EndingKind.NO_STATE, null);
      assertThat(s.state.phase).isEqualTo(Phase.Escalated);
      assertThat(s.state.lastDecision.reasonCode()).isEqualTo(dev.respawn.policy.ReasonCode.RESUME_UNKNOWN_INTERRUPTION_CLASS);
      assertThat(s.state.lastFailure.interruptionClass()).isEqualTo(InterruptionClass.Unknown);
      // §7: status.resume shows the code too, with the checkpoint it did not resume from (default mode Prefer)
      AgentSim withCheckpoint = sim(Specs.spec()).started();
      withCheckpoint.checkpoint("ckpt-17", "in_progress", true, null);
      withCheckpoint.end(EndingKind.NO_STATE, null);
      assertThat(withCheckpoint.state.resume.reasonCode()).isEqualTo(ReasonCode.RESUME_UNKNOWN_INTERRUPTION_CLASS);
      assertThat(withCheckpoint.state.resume.eligible()).isFalse();
      assertThat(withCheckpoint.state.resume.checkpoint()).isEqualTo("ckpt-17");
    }

    @Test
    void dIgnoreRestartsAtOnceWithoutCounting() {
      FailureRule ignore = rule("flaky-tool", "Ignore");
      ignore.match.exitCodes = List.of(75);
      AgentSim s = sim(rules(Specs.spec(), ignore)).started();
      Decision d = s.exit(75);
      assertThat(d.start()).isPresent();
      assertThat(s.state.attempt).isZero();
      assertThat(s.state.circuit.failureTimes()).isEmpty();
      assertThat(s.state.restarts).isEqualTo(1);
      assertThat(s.state.history).last().extracting(InstanceState.RunInfo::outcome).isEqualTo(RunOutcome.Ignored);
      assertThat(s.state.lastRestart.kind()).isEqualTo(RestartKind.Ignored);
      // the user said this ending is no failure: a scheduled restart is told, no Warning RestartFailed
      assertThat(d.notices()).noneSatisfy(n -> assertThat(n.type()).isEqualTo(EventType.Warning));
      assertThat(d.notices()).anySatisfy(n -> {
        assertThat(n.reason()).isEqualTo(EventReason.RestartScheduled);
        assertThat(n.message()).contains("ignored by rule flaky-tool").contains("exit 75");
      });
    }

    @Test
    void dAnIgnoreRuleUnderBackoffNoneStillFailsAndWarns() {
      // step a. comes before d.: a policy that never restarts a failure does not restart an ignored one either
      FailureRule ignore = rule("flaky-tool", "Ignore");
      ignore.match.exitCodes = List.of(75);
      AgentRestartPolicySpec spec = rules(backoff("None", "1s", 2.0, "10s"), ignore);
      AgentSim s = sim(spec).started();
      Decision d = s.exit(75);
      assertThat(s.state.phase).isEqualTo(Phase.Failed);
      assertThat(s.state.lastDecision.reasonCode()).isEqualTo(ReasonCode.POLICY_NONE);
      assertThat(reasons(d)).contains("RestartFailed");
    }

    @Test
    void dAnIgnoreRulesCooldownIsStillItsMinimumDelay() {
      // api.md §1: a rule's cooldown is its "minimum delay"; Ignore restarts at once otherwise, uncounted
      FailureRule ignore = rule("flaky-tool", "Ignore");
      ignore.match.exitCodes = List.of(75);
      ignore.cooldown = "30s";
      AgentSim s = sim(rules(Specs.spec(), ignore)).started();
      Instant failedAt = s.now;
      Decision d = s.exit(75);
      assertThat(d.start()).isEmpty();
      assertThat(s.state.phase).isEqualTo(Phase.Backoff);
      assertThat(s.state.nextRestartAt).isEqualTo(failedAt.plusSeconds(30));
      assertThat(s.state.lastDecision.reasonCode()).isEqualTo(ReasonCode.FAILURE_IGNORED);
      assertThat(s.state.lastDecision.delaySeconds()).isEqualTo(30.0);
      assertThat(s.state.attempt).isZero();
      s.restartAndRun();
      assertThat(s.state.run).isEqualTo(2);
      assertThat(s.state.lastRestart.kind()).isEqualTo(RestartKind.Ignored);
      assertThat(s.state.attempt).isZero();
    }

    @Test
    void aRequestedRestartInsideAFailureSequenceIsNoFinalAttemptAndShowsTheSequencesMax() {
      AgentSim s = sim(Specs.spec()).started(); // maxRetries 3
      s.exit(1);
      s.restartAndRun();
      s.exit(42);
      assertThat(s.state.lastDecision.reasonCode()).isEqualTo(ReasonCode.RESTART_REQUESTED);
      assertThat(s.state.lastDecision.attempt()).isEqualTo(1);
      assertThat(s.state.lastDecision.maxAttempts()).isEqualTo(3);
      assertThat(s.state.lastDecision.finalAttempt()).isFalse();
      s.running(); // exit 42 restarts at once: the next run's pod exists
      s.restartRequest = new Request("r-1", null);
      s.reconcile();
      assertThat(s.state.lastDecision.reasonCode()).isEqualTo(ReasonCode.MANUAL_RESTART);
      assertThat(s.state.lastDecision.maxAttempts()).isEqualTo(3);
      assertThat(s.state.lastDecision.finalAttempt()).isFalse();
    }

    @Test
    void anExit42RefusedByAFullWindowEscalatesAndItsHistorySaysSo() {
      AgentSim s = sim(Specs.window(Specs.spec(), 1, "1h")).started(); // maxRetries 3
      s.exit(1);
      s.restartAndRun(); // the window's one restart
      s.exit(42);
      assertThat(s.state.phase).isEqualTo(Phase.Escalated);
      assertThat(s.state.lastDecision.reasonCode()).isEqualTo(ReasonCode.RESTART_LIMIT_EXCEEDED);
      assertThat(s.state.lastDecision.maxAttempts()).as("the open sequence's max").isEqualTo(3);
      assertThat(s.state.history).last().satisfies(r -> {
        assertThat(r.outcome()).isEqualTo(RunOutcome.RestartRequest);
        assertThat(r.reasonCode()).isEqualTo(ReasonCode.RESTART_LIMIT_EXCEEDED);
      });
    }

    @Test
    void anIgnoredFailureRefusedByAFullWindowEscalatesAndItsHistorySaysSo() {
      FailureRule ignore = rule("flaky-tool", "Ignore");
      ignore.match.exitCodes = List.of(75);
      AgentSim s = sim(Specs.window(retries(rules(Specs.spec(), ignore), 5), 1, "1h")).started();
      s.exit(75);
      s.running(); // restarted at once: the window's one restart
      s.exit(75);
      assertThat(s.state.phase).isEqualTo(Phase.Escalated);
      assertThat(s.state.lastDecision.reasonCode()).isEqualTo(ReasonCode.RESTART_LIMIT_EXCEEDED);
      assertThat(s.state.lastDecision.maxAttempts()).as("no open sequence: the policy's maxRetries").isEqualTo(5);
      assertThat(s.state.history).extracting(InstanceState.RunInfo::reasonCode)
          .containsExactly(ReasonCode.FAILURE_IGNORED, ReasonCode.RESTART_LIMIT_EXCEEDED);
    }

    @Test
    void aFreshStartWakesAtTheEndOfItsStartupGraceWithoutWaitingForThePodToChange() {
      AgentSim s = sim(Specs.heartbeat(Specs.spec(), "30s", "2m"));
      Decision first = s.reconcile();
      assertThat(first.start()).isPresent();
      assertThat(first.wakeAt()).as("a pod nothing touches still fails on time")
          .contains(s.now.plus(Duration.ofMinutes(2)).plusSeconds(1));
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

    @Test
    void aStartIsWrittenWithTheRunsFirstSignOrAfterTheQuietStartAtTheLatest() {
      AgentSim s = sim(Specs.spec()).started();
      s.exit(1);
      InstanceState waiting = s.state.copy();
      s.now = s.state.nextRestartAt;
      Decision start = s.reconcile();
      assertThat(start.start()).isPresent();
      assertThat(start.deferStatus()).as("api.md §12: no write of its own for a start").isTrue();
      assertThat(start.wakeAt()).contains(s.now.plus(QuietStart.QUIET_START));
      s.state = waiting; // what status still says: the start was not written
      s.advance(QuietStart.QUIET_START.minusSeconds(1));
      Decision quiet = s.reconcile();
      assertThat(quiet.start()).as("the pod exists").hasValueSatisfying(p -> assertThat(p.run()).isEqualTo(2));
      assertThat(quiet.startsExisting()).isTrue();
      assertThat(quiet.deferStatus()).as("its pod still shows no sign, within the quiet start").isTrue();
      s.state = waiting;
      s.advance(Duration.ofSeconds(1));
      Decision shown = s.reconcile();
      assertThat(shown.deferStatus()).as("a pod that nothing starts for so long is news").isFalse();
      assertThat(shown.state().phase).isEqualTo(Phase.Starting);
      assertThat(shown.state().run).isEqualTo(2);
      assertThat(shown.state().currentPod).isEqualTo("coder-2");
    }

    @Test
    void withHeartbeatsARestartIsWrittenOnceItsAgentRenewsRunningAndReadyInOneWrite() {
      AgentSim s = sim(Specs.heartbeat(Specs.spec(), "30s", "2m")).started();
      s.heartbeat(dev.respawn.api.v1alpha1.HealthVerdict.Healthy);
      s.reconcile();
      s.exit(1);
      InstanceState waiting = s.state.copy();
      s.now = s.state.nextRestartAt;
      assertThat(s.reconcile().deferStatus()).isTrue();
      s.state = waiting; // what status still says: the start was not written
      s.advance(Duration.ofSeconds(2));
      Decision running = s.running();
      assertThat(running.startsExisting()).isTrue();
      assertThat(running.state().phase).isEqualTo(Phase.Running);
      assertThat(running.deferStatus()).as("running, but its agent has not renewed yet: not Ready").isTrue();
      assertThat(running.wakeAt()).contains(s.now.plus(QuietStart.FIRST_RENEWAL));
      s.state = waiting;
      s.advance(Duration.ofSeconds(1));
      s.heartbeat(dev.respawn.api.v1alpha1.HealthVerdict.Healthy);
      Decision ready = s.reconcile();
      assertThat(ready.deferStatus()).as("Running and Ready: one write").isFalse();
      assertThat(ready.state().phase).isEqualTo(Phase.Running);
      assertThat(ready.state().run).isEqualTo(2);
      assertThat(ready.liveness().ready()).isTrue();
    }

    @Test
    void withHeartbeatsAPodThatRunsJustBeforeTheQuietStartEndsStillWaitsForItsAgentsFirstRenewal() {
      AgentSim s = sim(Specs.heartbeat(Specs.spec(), "30s", "2m")).started();
      InstanceState waiting = s.failedAndRestartUnwritten();
      Instant made = s.now;
      s.now = made.plus(QuietStart.QUIET_START).minusSeconds(1);
      Decision running = s.running();
      assertThat(running.deferStatus()).as("it runs, within the quiet start").isTrue();
      assertThat(running.wakeAt()).contains(s.now.plus(QuietStart.FIRST_RENEWAL));
      s.state = waiting;
      s.now = made.plus(QuietStart.QUIET_START).plusSeconds(1);
      assertThat(s.reconcile().deferStatus())
          .as("past the quiet start, but its agent still has time to renew: Running and Ready stay one write")
          .isTrue();
      s.state = waiting;
      s.heartbeat(dev.respawn.api.v1alpha1.HealthVerdict.Healthy);
      Decision ready = s.reconcile();
      assertThat(ready.deferStatus()).isFalse();
      assertThat(ready.state().run).isEqualTo(2);
      assertThat(ready.liveness().ready()).isTrue();
    }

    @Test
    void withHeartbeatsARunThatDoesNotRenewSoonAfterItsStartIsShownRunningAndWaitingForIt() {
      AgentSim s = sim(Specs.heartbeat(Specs.spec(), "30s", "2m")).started();
      s.exit(1);
      InstanceState waiting = s.state.copy();
      s.now = s.state.nextRestartAt;
      s.reconcile();
      s.state = waiting;
      s.advance(Duration.ofSeconds(1));
      assertThat(s.running().deferStatus()).isTrue();
      Instant started = s.now;
      s.state = waiting;
      s.now = started.plus(QuietStart.FIRST_RENEWAL).minusMillis(1);
      assertThat(s.reconcile().deferStatus()).isTrue();
      s.state = waiting;
      s.now = started.plus(QuietStart.FIRST_RENEWAL);
      Decision shown = s.reconcile();
      assertThat(shown.deferStatus()).isFalse();
      assertThat(shown.state().phase).isEqualTo(Phase.Running);
      assertThat(shown.liveness().ready()).isFalse();
      assertThat(shown.liveness().reason()).isEqualTo(LivenessGate.STALE);
      assertThat(shown.liveness().message()).startsWith("waiting for the first heartbeat");
    }

    @Test
    void theStartupGraceCountsFromThePodsStartNotFromTheLaterWriteThatShowsItRunning() {
      // api.md §5: fresh "within startupGrace of the pod's start"; the status write waits for a first renewal
      // (half the grace here, 2.5 s), and that wait must not stretch the grace
      AgentSim s = sim(Specs.heartbeat(Specs.spec(), "30s", "5s")).started();
      InstanceState waiting = s.failedAndRestartUnwritten();
      s.advance(Duration.ofSeconds(1));
      Instant started = s.now;
      assertThat(s.running().deferStatus()).isTrue();
      s.state = waiting;
      s.now = started.plus(Duration.ofMillis(2500));
      Decision shown = s.reconcile();
      assertThat(shown.deferStatus()).isFalse();
      assertThat(shown.state().phase).isEqualTo(Phase.Running);
      assertThat(shown.state().runStartedAt).isEqualTo(started);
      s.state = shown.state();
      s.now = started.plus(Duration.ofSeconds(5)).minusMillis(1);
      assertThat(s.reconcile().state().run).as("within the grace").isEqualTo(2);
      assertThat(s.state.phase).isEqualTo(Phase.Running);
      s.now = started.plus(Duration.ofSeconds(5)).plusMillis(1);
      Decision stale = s.reconcile();
      assertThat(stale.state().lastFailure).isNotNull();
      assertThat(stale.state().lastFailure.pod()).isEqualTo(shown.state().currentPod);
      assertThat(stale.state().lastFailure.interruptionClass()).isEqualTo(InterruptionClass.Timeout);
    }

    @Test
    void aNodeClockBehindShortensTheGraceByTheFirstRenewalsWaitAtMost() {
      AgentSim s = sim(Specs.heartbeat(Specs.spec(), "30s", "10s")).started();
      InstanceState waiting = s.failedAndRestartUnwritten();
      s.advance(Duration.ofSeconds(20)); // a slow image pull, then the kubelet stamps its start a minute early
      s.running();
      s.pod = new PodView(s.pod.name(), s.pod.uid(), PodView.Stage.RUNNING, s.pod.createdAt(),
          s.now.minusSeconds(60), null, null, true);
      s.state = waiting;
      Decision shown = s.reconcile();
      assertThat(shown.state().phase).isEqualTo(Phase.Running);
      assertThat(shown.state().runStartedAt).isEqualTo(s.now.minus(QuietStart.FIRST_RENEWAL));
    }

    @Test
    void withHeartbeatsAnImmediateRestartsRunIsWrittenRunningAndReadyInOneWrite() {
      AgentSim s = sim(Specs.heartbeat(backoff("Immediate", "1s", 2.0, "10s"), "30s", "2m"))
          .started();
      Decision failed = s.exit(1);
      assertThat(failed.start()).as("the failure and its Immediate restart: one decision, one write").isPresent();
      assertThat(failed.deferStatus()).isFalse();
      InstanceState starting = s.state.copy();
      assertThat(starting.phase).isEqualTo(Phase.Starting);
      s.advance(Duration.ofSeconds(1));
      Decision running = s.running();
      assertThat(running.state().phase).isEqualTo(Phase.Running);
      assertThat(running.deferStatus()).as("running, its agent has not renewed yet").isTrue();
      assertThat(running.wakeAt()).as("a few seconds for the first renewal")
          .contains(s.now.plus(QuietStart.FIRST_RENEWAL));
      s.state = starting; // not written
      s.advance(Duration.ofSeconds(1));
      s.heartbeat(dev.respawn.api.v1alpha1.HealthVerdict.Healthy);
      Decision ready = s.reconcile();
      assertThat(ready.deferStatus()).isFalse();
      assertThat(ready.state().phase).isEqualTo(Phase.Running);
      assertThat(ready.liveness().ready()).isTrue();
    }

    @Test
    void aRunThatDoesNotRenewIsShownRunningHalfItsStartupGraceAfterItsStartWellBeforeItEndsStale() {
      AgentSim s = sim(Specs.heartbeat(backoff("Immediate", "1s", 2.0, "10s"), "30s", "4s"))
          .started();
      s.exit(1);
      InstanceState starting = s.state.copy();
      Decision running = s.running(); // the pod starts now
      Instant started = s.now;
      assertThat(running.deferStatus()).isTrue();
      assertThat(running.wakeAt()).contains(started.plusSeconds(2));
      s.state = starting;
      s.now = started.plusSeconds(2);
      Decision shown = s.reconcile();
      assertThat(shown.deferStatus()).isFalse();
      assertThat(shown.state().phase).isEqualTo(Phase.Running);
      assertThat(shown.liveness().reason()).isEqualTo(LivenessGate.STALE);
    }

    @Test
    void withoutHeartbeatsARunIsWrittenAsSoonAsItRuns() {
      AgentSim s = sim(backoff("Immediate", "1s", 2.0, "10s")).started();
      s.exit(1);
      s.advance(Duration.ofSeconds(1));
      Decision running = s.running();
      assertThat(running.state().phase).isEqualTo(Phase.Running);
      assertThat(running.deferStatus()).isFalse();
    }

    @Test
    void efMaxRetriesIsRespectedWithoutAnExtraAttempt() {
      AgentSim s = sim(Specs.spec()).started(); // maxRetries 3
      for (int i = 1; i <= 3; i++) {
        s.exit(1);
        assertThat(s.state.attempt).isEqualTo(i);
        assertThat(s.state.phase).isEqualTo(Phase.Backoff);
        assertThat(s.state.lastDecision.finalAttempt()).isEqualTo(i == 3);
        assertThat(s.state.lastDecision.maxAttempts()).isEqualTo(3);
        s.restartAndRun();
      }
      Decision d = s.exit(1);
      assertThat(s.state.phase).isEqualTo(Phase.Escalated);
      assertThat(s.state.terminalReason).isEqualTo(TerminalReason.RestartLimitExceeded);
      assertThat(s.state.lastDecision.reasonCode()).isEqualTo(dev.respawn.policy.ReasonCode.RETRIES_EXHAUSTED);
      assertThat(reasons(d)).contains("RestartExhausted", "Escalated");
      assertThat(s.starts).hasSize(4); // run 1 and exactly 3 restarts
      assertThat(s.state.restarts).isEqualTo(3);
      assertThat(d.notices()).filteredOn(n -> n.reason() == dev.respawn.policy.EventReason.RestartExhausted).singleElement()
          .extracting(Notice::message).isEqualTo("[RST] Restart attempts exhausted for coder after 3 attempts");
    }

    @Test
    void fExhaustionByStallsIsAStallTimeout() {
      AgentSim s = sim(Specs.heartbeat(retries(Specs.spec(), 0), "30s", null)).started();
      s.advance(Duration.ofSeconds(31));
      Decision d = s.reconcile();
      assertThat(d.deletePod()).isTrue();
      assertThat(s.state.terminalReason).isEqualTo(TerminalReason.StallTimeout);
      assertThat(s.state.lastDecision.reasonCode()).isEqualTo(dev.respawn.policy.ReasonCode.RETRIES_EXHAUSTED);
    }

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
      }
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
    void hRequireWithoutACheckpointEscalatesWithItsCode() {
      AgentSim s = sim(Specs.resume(Specs.spec(), "Require", 3)).started();
      s.exit(1);
      assertThat(s.state.phase).isEqualTo(Phase.Escalated);
      assertThat(s.state.lastDecision.reasonCode()).isEqualTo(dev.respawn.policy.ReasonCode.RESUME_MISSING_CHECKPOINT);
      assertThat(s.last.audit()).hasValueSatisfying(a -> {
        assertThat(a.event()).isEqualTo("resume_decision");
        assertThat(a.eligible()).isFalse();
      });
    }

    @Test
    void hPreferResumesFromTheCheckpointAfterTheCooldown() {
      AgentSim s = sim(Specs.spec()).started();
      s.checkpoint("ckpt-17", "in_progress", true, true);
      Decision d = s.exit(1, "Error", "network_timeout");
      assertThat(s.state.lastDecision.reasonCode()).isEqualTo(dev.respawn.policy.ReasonCode.RESUME_BLOCKED_COOLDOWN);
      assertThat(Duration.between(s.now, s.state.nextRestartAt)).isEqualTo(Duration.ofSeconds(30));
      assertThat(s.state.resume.cooldownRemainingSeconds()).isEqualTo(30);
      assertThat(s.state.resume.eligible()).isTrue();
      assertThat(d.audit()).hasValueSatisfying(a -> {
        assertThat(a.reasonCode()).isEqualTo(dev.respawn.policy.ReasonCode.RESUME_BLOCKED_COOLDOWN);
        assertThat(a.cooldownSecondsRemaining()).isEqualTo(30);
        assertThat(a.interruptionClass()).isEqualTo(InterruptionClass.ToolFailure);
        assertThat(a.attempt()).isEqualTo(1);
        assertThat(a.maxAttempts()).isEqualTo(3);
      });
      s.now = s.state.nextRestartAt;
      Decision start = s.reconcile();
      assertThat(start.start()).hasValueSatisfying(p -> {
        assertThat(p.resumeCheckpoint()).contains("ckpt-17");
        assertThat(p.interruptionClass()).contains(InterruptionClass.ToolFailure);
      });
      assertThat(s.state.resume.attempts()).isEqualTo(1);
      assertThat(s.state.resume.cooldownRemainingSeconds()).as("waited out: api.md §2's example").isZero();
    }

    @Test
    void hPreferWithoutEligibilityRestartsFreshAndRecordsTheCode() {
      AgentSim s = sim(Specs.spec()).started();
      s.checkpoint("ckpt-3", "in_progress", false, true);
      Decision d = s.exit(1);
      assertThat(s.state.resume.reasonCode()).isEqualTo(dev.respawn.policy.ReasonCode.RESUME_NON_IDEMPOTENT_STEP);
      assertThat(s.state.lastDecision.reasonCode()).isEqualTo(dev.respawn.policy.ReasonCode.RESTART_SCHEDULED);
      // the resume decision's audit line (the seed's resume_decision event) carries the §7 code, not the restart's
      assertThat(d.audit()).hasValueSatisfying(a -> {
        assertThat(a.event()).isEqualTo("resume_decision");
        assertThat(a.eligible()).isFalse();
        assertThat(a.reasonCode()).isEqualTo(dev.respawn.policy.ReasonCode.RESUME_NON_IDEMPOTENT_STEP);
      });
      assertThat(Duration.between(s.now, s.state.nextRestartAt)).isEqualTo(Duration.ofSeconds(2));
      s.now = s.state.nextRestartAt;
      assertThat(s.reconcile().start()).hasValueSatisfying(p -> assertThat(p.resumeCheckpoint()).isEmpty());
    }

    @Test
    void aResumeDecisionThatWaitsForTheCircuitIsAuditedWithItsOwnCode() {
      AgentSim s = sim(circuit(Specs.spec(), 1, "10m", "5m", false)).started();
      s.checkpoint("ckpt-3", "in_progress", true, true);
      Decision d = s.exit(1);
      assertThat(s.state.phase).isEqualTo(Phase.CircuitOpen);
      assertThat(s.state.resume.reasonCode()).as("the resume verdict is still recorded").isNotNull();
      // README: a resume_decision line carries the resume code when the decision restarts, its own otherwise
      assertThat(d.audit()).hasValueSatisfying(a -> {
        assertThat(a.event()).isEqualTo("resume_decision");
        assertThat(a.reasonCode()).isEqualTo(dev.respawn.policy.ReasonCode.CIRCUIT_OPEN);
      });
    }

    @Test
    void iTheRestartWindowEscalates() {
      AgentSim s = sim(Specs.window(retries(Specs.spec(), 10), 2, "1h")).started();
      s.exit(1);
      s.restartAndRun();
      s.exit(1);
      s.restartAndRun();
      s.exit(1);
      assertThat(s.state.phase).isEqualTo(Phase.Escalated);
      assertThat(s.state.terminalReason).isEqualTo(TerminalReason.RestartLimitExceeded);
      assertThat(s.state.lastDecision.reasonCode()).isEqualTo(dev.respawn.policy.ReasonCode.RESTART_LIMIT_EXCEEDED);
      assertThat(s.state.recentRestarts).hasSize(2);
    }

    @Test
    void kTheExponentialScheduleIsVisibleInNextRestartAt() {
      AgentSim s = sim(circuit(retries(backoff("Exponential", "1s", 2.0, "1h"), 5), 10, "10m", "5m", false)).started();
      List<Long> delays = new java.util.ArrayList<>();
      for (int i = 0; i < 5; i++) {
        s.exit(1);
        delays.add(Duration.between(s.now, s.state.nextRestartAt).toSeconds());
        assertThat(s.last.notices()).filteredOn(n -> n.reason() == dev.respawn.policy.EventReason.RestartScheduled).singleElement()
            .extracting(Notice::message).isEqualTo("[RST] Restart scheduled for coder at " + s.state.nextRestartAt
                + " (attempt " + (i + 1) + ")");
        s.restartAndRun();
      }
      assertThat(delays).containsExactly(1L, 2L, 4L, 8L, 16L);
    }

    @Test
    void kARuleCooldownIsAMinimumDelay() {
      FailureRule slow = rule("rate-limited", "Retry");
      slow.match.messageContains = List.of("429");
      slow.cooldown = "45s";
      AgentSim s = sim(rules(Specs.spec(), slow)).started();
      s.exit(1, "Error", "HTTP 429 from provider");
      assertThat(Duration.between(s.now, s.state.nextRestartAt)).isEqualTo(Duration.ofSeconds(45));
      assertThat(s.state.lastFailure.rule()).isEqualTo("rate-limited");
      assertThat(s.state.lastDecision.reasonCode()).isEqualTo(dev.respawn.policy.ReasonCode.RESTART_SCHEDULED);
    }

    @Test
    void oomKilledIsRetriedAtMostTwice() {
      AgentSim s = sim(retries(Specs.spec(), 10)).started();
      s.exit(137, "OOMKilled", null);
      s.restartAndRun();
      s.exit(137, "OOMKilled", null);
      s.restartAndRun();
      s.exit(137, "OOMKilled", null);
      assertThat(s.state.phase).isEqualTo(Phase.Escalated);
      assertThat(s.state.lastFailure.failureReason()).isEqualTo("ResourceExhaustion");
    }
  }

  @Nested
  class SeedScenarios {
    @Test
    void failsTwiceThenRecoversOnTheThirdRun() {
      AgentSim s = sim(Specs.spec()).started();
      s.exit(1, "Error", "network_timeout");
      s.restartAndRun();
      s.exit(1, "Error", "network_timeout");
      s.restartAndRun();
      assertThat(s.state.run).isEqualTo(3);
      assertThat(s.state.attempt).isEqualTo(2);
      Decision waiting = s.reconcile();
      assertThat(waiting.wakeAt()).contains(s.state.runStartedAt.plus(Duration.ofSeconds(60)));
      s.now = s.state.runStartedAt.plus(Duration.ofSeconds(60));
      Decision healed = s.reconcile();
      assertThat(s.state.phase).isEqualTo(Phase.Running);
      assertThat(s.state.attempt).isZero();
      assertThat(s.state.circuit.state()).isEqualTo(CircuitState.Closed);
      assertThat(s.state.circuit.lastSuccessAt()).isEqualTo(s.now);
      assertThat(healed.notices()).filteredOn(n -> n.reason() == dev.respawn.policy.EventReason.RestartSucceeded).singleElement()
          .extracting(Notice::message).isEqualTo("[RST] Restart succeeded for coder on attempt 2");
      assertThat(s.state.restarts).isEqualTo(2);
    }
  }

  @Nested
  class SharedDependency {
    final AgentRestartPolicySpec spec = io.fabric8.kubernetes.client.utils.Serialization.unmarshal("""
        backoff: {type: Exponential, initialDelay: 2s}
        dependencies:
        - name: model-api
          match: {messageContains: ["HTTP 503"]}
        """, AgentRestartPolicySpec.class);

    @Test
    void aFailureCountedWhileTheCircuitWasClosedWaitsOnceItOpensInsteadOfRestartingIntoTheOutage() {
      AgentSim s = sim(spec).started();
      s.exit(1, "Error", "upstream model API answered HTTP 503");
      // the first failure of the fleet: the circuit is Closed, so it is counted and scheduled as usual
      assertThat(s.state.phase).isEqualTo(Phase.Backoff);
      assertThat(s.state.attempt).isEqualTo(1);
      assertThat(s.state.lastFailure.dependency()).isEqualTo("model-api");
      // meanwhile two other instances failed: the policy's one writer opened the shared circuit
      java.time.Instant opened = s.now.plusMillis(300);
      s.modelApiOpen(1, opened);
      s.now = s.state.nextRestartAt;
      Decision d = s.reconcile();
      assertThat(d.start()).isEmpty();
      assertThat(s.state.phase).isEqualTo(Phase.CircuitOpen);
      assertThat(s.state.waitingFor).isEqualTo("model-api");
      assertThat(s.state.nextRestartAt).isEqualTo(opened.plusSeconds(30));
      assertThat(d.reasonCode()).isEqualTo(ReasonCode.DEPENDENCY_CIRCUIT_OPEN);
      assertThat(s.state.attempt).as("counted once, when it was decided; not again").isEqualTo(1);
      assertThat(d.notices()).singleElement().extracting(Notice::message).asString()
          .contains("waits for dependency model-api (circuit Open) instead of its scheduled restart");
    }

    @Test
    void aProbeWhosePodIsRefusedWaitsOutTheRetryInsteadOfTryingAtEveryDecision() {
      AgentSim s = sim(spec).started();
      s.exit(1, "Error", "upstream model API answered HTTP 503");
      java.time.Instant opened = s.now.plusMillis(300);
      s.modelApiOpen(1, opened);
      s.now = s.state.nextRestartAt;
      s.reconcile();
      assertThat(s.state.waitingFor).isEqualTo("model-api");
      s.now = opened.plusSeconds(30);
      s.dependencies.put("model-api", new DependencyCircuit("model-api", CircuitState.HalfOpen, 1, opened,
          opened.plusSeconds(30), null, s.now, List.of("coder"), List.of(), List.of(), 3, 3));
      assertThat(s.evaluator.decide(s.policy, s.state, s.sighting(null), s.now, s.random).start())
          .as("the probe is due").isPresent();
      refused(s);
      java.time.Instant retry = s.state.nextRestartAt;
      assertThat(retry).isAfter(s.now);
      s.now = s.now.plusMillis(100);
      assertThat(s.reconcile().start()).as("not before the retry").isEmpty();
      assertThat(s.state.nextRestartAt).isEqualTo(retry);
      s.now = retry;
      assertThat(s.reconcile().start()).isPresent();
    }

    /** coder waits in CircuitOpen for model-api, opened by its own and others' failures. */
    AgentSim waiting(java.time.Instant[] opened) {
      return waiting(opened, spec);
    }

    AgentSim waiting(java.time.Instant[] opened, AgentRestartPolicySpec of) {
      AgentSim s = sim(of).started();
      s.exit(1, "Error", "upstream model API answered HTTP 503");
      opened[0] = s.now.plusMillis(300);
      s.modelApiOpen(1, opened[0]);
      s.now = s.state.nextRestartAt;
      s.reconcile();
      assertThat(s.state.phase).isEqualTo(Phase.CircuitOpen);
      return s;
    }

    /** openDuration after it opened, the circuit goes HalfOpen with coder as its probe. */
    DependencyCircuit halfOpen(AgentSim s, java.time.Instant opened) {
      s.now = opened.plusSeconds(30);
      DependencyCircuit c = new DependencyCircuit("model-api", CircuitState.HalfOpen, 1, opened,
          opened.plusSeconds(30), null, s.now, List.of("coder"), List.of(), List.of(), 3, 3);
      s.dependencies.put("model-api", c);
      return c;
    }

    @Test
    void aBlameThatOnlyAgedOutOfTheWindowLeavesTheCircuitAsStatusShowsIt() {
      AgentSim s = sim(spec).started();
      s.exit(1, "Error", "upstream model API answered HTTP 503"); // Closed: counted, and recorded for model-api
      DependencyCircuit recorded = FleetCircuits.step(s.policy, java.util.Map.of(),
          List.of(new FleetCircuits.Member("coder", s.state, false)), s.now).circuits().get(0);
      assertThat(recorded.blamed()).isEqualTo(1);
      // minutes later, nothing else happened: time passing is no change to write (api.md §12)
      java.time.Instant later = s.now.plus(Duration.ofMinutes(5));
      assertThat(FleetCircuits.step(s.policy, java.util.Map.of("model-api", recorded),
          List.of(new FleetCircuits.Member("coder", s.state, false)), later).circuits()).containsExactly(recorded);
      // a real change (another instance waits) shows the blames of the window only
      DependencyCircuit changed = FleetCircuits.step(s.policy, java.util.Map.of("model-api", recorded),
          List.of(new FleetCircuits.Member("coder", s.state, false), new FleetCircuits.Member("other",
              blamedAt(s.state, later), false)), later).circuits().get(0);
      assertThat(changed.blamed()).isEqualTo(1);
      assertThat(changed.recentBlame()).extracting(DependencyCircuit.Blame::instance).containsExactly("other");
    }

    private static InstanceState blamedAt(InstanceState like, java.time.Instant at) {
      InstanceState s = like.copy();
      InstanceState.FailureInfo f = like.lastFailure;
      s.lastFailure = new InstanceState.FailureInfo(f.pod(), f.podUid(), f.interruptionClass(), f.failureReason(),
          f.reason(), f.exitCode(), f.message(), f.rule(), f.retryable(), at, "model-api");
      return s;
    }

    @Test
    void aReleasedInstanceShowsItsReleaseTimeInStatusBeforeItRestarts() {
      java.time.Instant[] opened = new java.time.Instant[1];
      AgentSim s = waiting(opened);
      // HalfOpen with another probe: coder waits without a time of its own
      s.now = opened[0].plusSeconds(30);
      s.dependencies.put("model-api", new DependencyCircuit("model-api", CircuitState.HalfOpen, 1, opened[0],
          opened[0].plusSeconds(30), null, s.now, List.of("other"), List.of(), List.of(), 2, 2));
      assertThat(s.reconcile().start()).isEmpty();
      assertThat(s.state.nextRestartAt).isNull();
      // the probe closed it: coder is the first of the release, its turn is closedAt
      java.time.Instant closedAt = s.now.plusSeconds(5);
      s.dependencies.put("model-api", new DependencyCircuit("model-api", CircuitState.Closed, 1, opened[0],
          opened[0].plusSeconds(30), closedAt, closedAt, List.of(), List.of("coder", "late"), List.of(), 1, 0));
      s.now = closedAt;
      Decision shows = s.reconcile();
      assertThat(shows.start()).as("not before status shows its time").isEmpty();
      assertThat(s.state.nextRestartAt).isEqualTo(closedAt);
      assertThat(shows.wakeAt()).hasValueSatisfying(t -> assertThat(t).isBefore(closedAt.plusMillis(10)));
      s.now = shows.wakeAt().get();
      assertThat(s.reconcile().start()).as("status showed it: its turn").isPresent();
      assertThat(s.state.run).isEqualTo(2);
    }

    @Test
    void aReleasedInstanceSeenAfterItsTurnShowsItsTimeFirstAlsoWithoutARate() {
      for (String rate : List.of("5", "0")) {
        java.time.Instant[] opened = new java.time.Instant[1];
        AgentSim s = waiting(opened, io.fabric8.kubernetes.client.utils.Serialization.unmarshal("""
            backoff: {type: Exponential, initialDelay: 2s}
            dependencies:
            - name: model-api
              match: {messageContains: ["HTTP 503"]}
              releaseRate: %s
            """.formatted(rate), AgentRestartPolicySpec.class));
        assertThat(s.policy.dependency("model-api").get().releaseRate()).isEqualTo(Double.parseDouble(rate));
        java.time.Instant closedAt = opened[0].plusSeconds(40);
        s.dependencies.put("model-api", new DependencyCircuit("model-api", CircuitState.Closed, 1, opened[0],
            opened[0].plusSeconds(30), closedAt, closedAt, List.of(), List.of("first", "coder"), List.of(), 1, 0));
        java.time.Instant turn = s.policy.dependency("model-api").get().releaseAt(closedAt, 1);
        s.now = turn.plusSeconds(2); // a late look (the operator restarted)
        Decision shows = s.reconcile();
        assertThat(shows.start()).as("releaseRate %s", rate).isEmpty();
        assertThat(s.state.nextRestartAt).isEqualTo(turn);
        s.now = shows.wakeAt().orElseThrow();
        assertThat(s.reconcile().start()).as("releaseRate %s", rate).isPresent();
      }
    }

    @Test
    void aProbeThatExitsCleanlyWaitsForNothingAndTheCircuitPicksAnotherProbe() {
      java.time.Instant[] opened = new java.time.Instant[1];
      AgentSim s = waiting(opened);
      InstanceState other = s.state.copy(); // another instance, waiting the same way
      DependencyCircuit halfOpen = halfOpen(s, opened[0]);
      assertThat(s.reconcile().start()).as("the probe runs").isPresent();
      s.running();
      s.advance(Duration.ofSeconds(5));
      s.exit(0);
      assertThat(s.state.phase).isEqualTo(Phase.Succeeded);
      assertThat(s.state.waitingFor).as("a finished probe waits for nothing").isNull();
      FleetCircuits.Result fleet = FleetCircuits.step(s.policy, java.util.Map.of("model-api", halfOpen),
          List.of(new FleetCircuits.Member("coder", s.state, false), new FleetCircuits.Member("other", other, false)),
          s.now);
      assertThat(fleet.circuits()).singleElement().satisfies(c -> {
        assertThat(c.state()).isEqualTo(CircuitState.HalfOpen);
        assertThat(c.probes()).as("the next waiter probes instead").containsExactly("other");
      });
      // a status written before the fix (Succeeded, still waitingFor) does not hold the circuit either
      InstanceState old = s.state.copy();
      old.waitingFor = "model-api";
      assertThat(FleetCircuits.step(s.policy, java.util.Map.of("model-api", halfOpen),
          List.of(new FleetCircuits.Member("coder", old, false), new FleetCircuits.Member("other", other, false)),
          s.now).circuits().get(0).probes()).containsExactly("other");
    }

    @Test
    void aProbeHealthyForResetAfterIsOneSuccessOneNotice() {
      java.time.Instant[] opened = new java.time.Instant[1];
      AgentSim s = waiting(opened);
      halfOpen(s, opened[0]);
      s.reconcile();
      s.running();
      s.now = s.state.runStartedAt.plus(s.policy.resetAfter());
      Decision healed = s.reconcile();
      assertThat(s.state.waitingFor).isNull();
      assertThat(healed.notices()).filteredOn(n -> n.reason() == EventReason.RestartSucceeded)
          .as("counted once in respawn.restart.attempts{result=succeeded}").singleElement()
          .extracting(Notice::message).asString().contains("probed dependency model-api");
    }

    @Test
    void aRestartRequestWhileWaitingForAnOpenDependencyRestartsNow() {
      AgentSim s = waiting(new java.time.Instant[1]);
      s.now = s.now.plusSeconds(1);
      s.restartRequest = new Request("r-1", "upstream is back for us");
      Decision d = s.reconcile();
      assertThat(d.start()).as("api.md §6: restart now").isPresent();
      assertThat(s.state.phase).isEqualTo(Phase.Starting);
      assertThat(s.state.waitingFor).isNull();
      assertThat(s.state.lastRestart.kind()).isEqualTo(RestartKind.Manual);
    }

    @Test
    void aProbeRestartedByHandStaysTheProbeAndProvesNothingYet() {
      java.time.Instant[] opened = new java.time.Instant[1];
      AgentSim s = waiting(opened);
      DependencyCircuit halfOpen = halfOpen(s, opened[0]);
      s.reconcile();
      s.running();
      s.advance(Duration.ofSeconds(2));
      s.restartRequest = new Request("r-1", null);
      assertThat(s.reconcile().deletePod()).isTrue();
      assertThat(s.reconcile().start()).as("the next reconcile, the pod gone").isPresent();
      s.running();
      assertThat(s.state.waitingFor).isEqualTo("model-api");
      FleetCircuits.Result fleet = FleetCircuits.step(s.policy, java.util.Map.of("model-api", halfOpen),
          List.of(new FleetCircuits.Member("coder", s.state, false)), s.now);
      assertThat(fleet.circuits().get(0).state()).as("not closed by a run that was not healthy for resetAfter")
          .isEqualTo(CircuitState.HalfOpen);
      assertThat(fleet.circuits().get(0).probes()).containsExactly("coder");
    }

    @Test
    void aProbeWhoseStartWasRefusedAndThatIsRestartedByHandStartsAsTheProbe() {
      java.time.Instant[] opened = new java.time.Instant[1];
      AgentSim s = waiting(opened);
      DependencyCircuit halfOpen = halfOpen(s, opened[0]);
      refused(s); // its probe run's pod was refused: it waits for the retry, still CircuitOpen
      assertThat(s.state.phase).isEqualTo(Phase.CircuitOpen);
      s.now = s.now.plusMillis(100);
      s.restartRequest = new Request("r-1", null);
      assertThat(s.reconcile().start()).isPresent();
      assertThat(s.state.waitingFor).as("it runs as the probe").isEqualTo("model-api");
      s.running();
      FleetCircuits.Result fleet = FleetCircuits.step(s.policy, java.util.Map.of("model-api", halfOpen),
          List.of(new FleetCircuits.Member("coder", s.state, false)), s.now);
      assertThat(fleet.circuits().get(0).state()).as("a run of no time proves nothing").isEqualTo(CircuitState.HalfOpen);
    }

    @Test
    void aResumeOfAnInstanceEscalatedByAFailureBlamedOnANowOpenDependencyRestartsNow() {
      AgentSim s = sim(retries(spec, 0)).started();
      s.exit(1, "Error", "upstream model API answered HTTP 503"); // the circuit was still Closed: counted
      assertThat(s.state.phase).isEqualTo(Phase.Escalated);
      assertThat(s.state.lastFailure.dependency()).isEqualTo("model-api");
      java.time.Instant opened = s.now.plusMillis(300);
      s.modelApiOpen(1, opened);
      s.now = opened.plusSeconds(1);
      s.resumeRequest = new Request("go", null);
      Decision d = s.reconcile();
      assertThat(d.start()).as("api.md §6: a new lifecycle, restarted now").isPresent();
      assertThat(s.state.phase).isEqualTo(Phase.Starting);
      assertThat(s.state.waitingFor).isNull();
    }

    @Test
    void aBackoffBlamedOnAClosedCircuitRestartsAsScheduled() {
      AgentSim s = sim(spec).started();
      s.exit(1, "Error", "upstream model API answered HTTP 503");
      s.now = s.state.nextRestartAt;
      assertThat(s.reconcile().start()).isPresent();
      assertThat(s.state.waitingFor).isNull();
    }
  }

  @Nested
  class AuditTrail {
    @Test
    void everyDecisionThatTellsSomethingIsOneAuditLine() {
      AgentSim s = sim(Specs.spec()).started();
      Decision failed = s.exit(1, "Error", "network_timeout");
      // the default resume mode (Prefer) decides on resuming at every failure, and says why (no checkpoint)
      assertThat(failed.audit()).hasValueSatisfying(a -> {
        assertThat(a.event()).isEqualTo("resume_decision");
        assertThat(a.reasonCode()).isEqualTo(dev.respawn.policy.ReasonCode.RESUME_MISSING_CHECKPOINT);
      });

      Decision started = s.restartStillPending();
      assertThat(reasons(started)).contains("RestartStarted");
      assertThat(started.audit()).hasValueSatisfying(a -> {
        assertThat(a.event()).isEqualTo("restart_started");
        assertThat(a.run()).isEqualTo(2);
        assertThat(a.attempt()).isEqualTo(1);
        assertThat(a.actor()).isEqualTo("system");
        assertThat(a.interruptionClass()).isEqualTo(InterruptionClass.ToolFailure);
        assertThat(a.reasonCode()).isNotNull();
        assertThat(a.at()).isEqualTo(s.now);
      });

      s.running();
      Decision quiet = s.reconcile();
      assertThat(quiet.notices()).isEmpty();
      assertThat(quiet.audit()).as("a decision that changes nothing is no audit line").isEmpty();

      s.now = s.state.runStartedAt.plus(Duration.ofSeconds(60));
      Decision healed = s.reconcile();
      assertThat(reasons(healed)).contains("RestartSucceeded");
      assertThat(healed.audit()).hasValueSatisfying(a -> {
        assertThat(a.event()).isEqualTo("restart_succeeded");
        assertThat(a.attempt()).isZero();
      });
    }

    @Test
    void theStartOfARunARequestCausedIsTheOperatorsAndOneTheAgentAskedForIsTheAgents() {
      AgentSim manual = sim(Specs.spec()).started();
      manual.restartRequest = new Request("r-1", null);
      manual.reconcile();
      Decision started = manual.reconcile();
      assertThat(started.start()).isPresent();
      assertThat(started.audit()).hasValueSatisfying(a -> assertThat(a.actor()).isEqualTo("operator"));

      AgentSim asked = sim(Specs.spec()).started();
      asked.exit(42);
      assertThat(asked.last.audit()).hasValueSatisfying(a -> assertThat(a.actor()).isEqualTo("agent"));
    }

    @Test
    void aRefusedRequestIsAnAuditLineByTheOperator() {
      AgentSim s = sim(Specs.spec()).started();
      s.exit(2, "Error", "syntax_error");
      s.restartRequest = new Request("r-9", null);
      Decision refused = s.reconcile();
      assertThat(refused.audit()).hasValueSatisfying(a -> {
        assertThat(a.event()).isEqualTo("restart_requested");
        assertThat(a.actor()).isEqualTo("operator");
      });
    }
  }

  @Nested
  class SpawnRetries {

    @Test
    void anImmediateBackoffStillWaitsAndWakesAndARefusalInARowWaitsTwiceAsLongUpToFiveMinutes() {
      AgentSim s = sim(backoff("Immediate", null, 2.0, null));
      Decision first = refused(s);
      assertThat(s.state.phase).isEqualTo(Phase.Backoff);
      assertThat(s.state.nextRestartAt).isEqualTo(s.now.plusSeconds(1));
      assertThat(first.wakeAt()).as("a zero wait would never wake").contains(s.now.plusSeconds(1));
      List<Duration> waits = new java.util.ArrayList<>();
      for (int i = 0; i < 12; i++) {
        s.now = s.state.nextRestartAt;
        Instant at = s.now;
        refused(s);
        waits.add(Duration.between(at, s.state.nextRestartAt));
      }
      assertThat(waits).startsWith(Duration.ofSeconds(2), Duration.ofSeconds(4), Duration.ofSeconds(8))
          .endsWith(Duration.ofMinutes(5), Duration.ofMinutes(5));
      assertThat(s.state.attempt).as("not a failure of the agent").isZero();
    }

    @Test
    void aRestartRequestWhoseStartIsRefusedIsRecordedAndNotActedOnAgainAtTheRetry() {
      AgentSim s = sim(backoff("Exponential", "10m", 2.0, "1h")).started();
      s.exit(1);
      assertThat(s.state.phase).isEqualTo(Phase.Backoff);
      s.restartRequest = new Request("r-1", null);
      refused(s);
      assertThat(s.state.handledRequests.get(dev.respawn.api.v1alpha1.OperatorRequest.RESTART)).isEqualTo("r-1");
      assertThat(s.state.run).as("the run that never started is not counted").isEqualTo(1);
      assertThat(s.state.restarts).isZero();
      assertThat(s.state.phase).isEqualTo(Phase.Backoff);
      assertThat(s.state.nextRestartAt).isAfter(s.now);

      s.now = s.state.nextRestartAt;
      Decision retried = s.reconcile();
      assertThat(retried.start()).hasValueSatisfying(p -> assertThat(p.run()).isEqualTo(2));
      assertThat(reasons(retried)).doesNotContain("RestartRequested");
      assertThat(s.state.restarts).isEqualTo(1);
    }

    @Test
    void aResumeOutOfEscalatedWhoseStartIsRefusedLeavesTheTerminalPhaseBehind() {
      AgentSim s = escalatedTwiceFailed();
      s.resumeRequest = new Request("resume-1", null);
      refused(s);
      assertThat(s.state.phase).isEqualTo(Phase.Backoff);
      assertThat(s.state.terminalReason).isNull();
      assertThat(s.state.circuit.state()).isEqualTo(CircuitState.Closed);
      assertThat(s.state.attempt).isZero();
      assertThat(s.state.handledRequests.get(dev.respawn.api.v1alpha1.OperatorRequest.RESUME)).isEqualTo("resume-1");
      assertThat(s.state.run).isEqualTo(2);

      s.now = s.state.nextRestartAt;
      Decision retried = s.reconcile();
      assertThat(retried.start()).hasValueSatisfying(p -> assertThat(p.run()).isEqualTo(3));
      assertThat(s.state.lastRestart.kind()).isEqualTo(RestartKind.Resume);
      assertThat(s.state.recentRestarts).hasSize(1);
    }

    @Test
    void aFailureWhoseImmediateRestartIsRefusedIsRecordedAtOnceAndCountedOnce() {
      AgentSim s = sim(backoff("Immediate", null, 2.0, null)).started();
      RunEnding exit = new RunEnding(s.pod.name(), s.pod.uid(), EndingKind.TERMINATED, 1, "Error", null, s.now);
      s.pod = new PodView(s.pod.name(), s.pod.uid(), PodView.Stage.FINISHED, s.pod.createdAt(), s.pod.startedAt(),
          null, null, false);
      Decision d = s.evaluator.spawnFailed(s.policy, s.state, s.sighting(exit), false, "exceeded quota", s.now,
          s.random);
      s.state = d.state();
      assertThat(s.state.attempt).isEqualTo(1);
      assertThat(s.state.lastFailure).isNotNull();
      assertThat(s.state.history).hasSize(1);
      assertThat(s.state.run).isEqualTo(1);
      assertThat(s.state.lastDecision.reasonCode()).isEqualTo(ReasonCode.SPAWN_FAILED);
      assertThat(reasons(d)).contains("RestartFailed");

      s.now = s.state.nextRestartAt;
      assertThat(s.reconcile().start()).isPresent();
      assertThat(s.state.attempt).as("the failure is counted once").isEqualTo(1);
      assertThat(s.state.history).hasSize(1);
    }

    @Test
    void aRefusedTrialRunStaysAWaitForTheCircuit() {
      AgentSim s = sim(circuit(Specs.spec(), 1, "10m", "1m", false)).started();
      s.exit(1);
      assertThat(s.state.phase).isEqualTo(Phase.CircuitOpen);
      s.now = s.state.nextRestartAt;
      refused(s);
      assertThat(s.state.phase).isEqualTo(Phase.CircuitOpen);
      assertThat(s.state.circuit.state()).isEqualTo(CircuitState.Open);
      assertThat(s.state.nextRestartAt).isAfter(s.now);
      s.now = s.state.nextRestartAt;
      assertThat(s.reconcile().start()).isPresent();
      assertThat(s.state.circuit.state()).isEqualTo(CircuitState.HalfOpen);
    }
  }

  @Test
  void aStatusThatMissedTwoStartsCountsBothRestartsWhenItMeetsTheNewestPod() {
    AgentSim s = sim(Specs.window(new AgentRestartPolicySpec(), 5, "1h")).started();
    InstanceState stale = s.state.copy(); // run 1 running: the status writes of the next two starts were lost
    s.advance(Duration.ofMinutes(1));
    s.exit(42);
    assertThat(s.state.recentRestarts).containsExactly(s.now);
    s.running();
    s.advance(Duration.ofMinutes(1));
    s.exit(42);
    Instant third = s.now;
    s.running();
    assertThat(s.state.run).isEqualTo(3);
    assertThat(s.state.restarts).isEqualTo(2);
    assertThat(s.state.recentRestarts).hasSize(2).last().isEqualTo(third);
    s.advance(Duration.ofMinutes(1));
    s.state = stale;
    Decision d = s.reconcile();
    assertThat(d.state().run).isEqualTo(3);
    assertThat(d.state().currentPod).isEqualTo("coder-3");
    assertThat(d.state().restarts).as("restarts of every kind: runs 2 and 3").isEqualTo(2);
    // run 2's pod was deleted once run 3 started: its start is dated by coder-3's, the latest it can have been
    assertThat(d.state().recentRestarts).as("both restarts in the restartLimit window").containsExactly(third, third);
    assertThat(d.start()).isEmpty();
  }

  @Test
  void startsAStatusMissedStillFillTheRestartLimitWindow() {
    AgentSim s = sim(Specs.window(new AgentRestartPolicySpec(), 2, "1h")).started();
    InstanceState stale = s.state.copy(); // the status writes of the next two starts were lost
    for (int i = 0; i < 2; i++) {
      s.advance(Duration.ofMinutes(1));
      s.exit(42);
      s.running();
    }
    s.state = stale;
    s.reconcile();
    s.advance(Duration.ofMinutes(1));
    s.exit(42);
    assertThat(s.state.phase).as("a third restart within the hour exceeds maxRestarts 2").isEqualTo(Phase.Escalated);
    assertThat(s.state.lastDecision.reasonCode()).isEqualTo(ReasonCode.RESTART_LIMIT_EXCEEDED);
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

  /** §2: firstFailureAt is "when the current failure sequence began", not when its latest failure was. */
  @Test
  void firstFailureAtStaysAtTheFailureThatBeganTheSequence() {
    AgentSim s = sim(retries(Specs.spec(), 5)).started();
    Instant first = s.now;
    s.exit(1);
    assertThat(s.state.firstFailureAt).isEqualTo(first);
    s.restartAndRun();
    s.advance(Duration.ofSeconds(10));
    s.exit(1);
    assertThat(s.state.attempt).isEqualTo(2);
    assertThat(s.state.firstFailureAt).isEqualTo(first);
  }

  /**
   * §3 k: the reason is resume_blocked_cooldown only "when the resume cooldown is the longer"; a class cooldown
   * equal to the backoff delays nothing, so the restart is plainly restart_scheduled (and still resumes).
   */
  @Test
  void aResumeCooldownEqualToTheBackoffIsNotABlockedCooldown() {
    // ToolFailure's resume cooldown is 30s; a Linear backoff of 30s gives attempt 1 exactly that
    AgentSim s = sim(backoff("Linear", "30s", 2.0, "120s")).started();
    s.checkpoint("ckpt-17", "in_progress", true, true);
    Instant failedAt = s.now;
    s.exit(1);
    assertThat(s.state.phase).isEqualTo(Phase.Backoff);
    assertThat(s.state.nextRestartAt).isEqualTo(failedAt.plusSeconds(30));
    assertThat(s.state.resume.eligible()).isTrue();
    assertThat(s.state.lastDecision.reasonCode()).isEqualTo(ReasonCode.RESTART_SCHEDULED);
    assertThat(s.restartStillPending().start()).hasValueSatisfying(p ->
        assertThat(p.resumeCheckpoint()).contains("ckpt-17"));
  }

  /** §2 status.resume: the checkpoint, its status and idempotence the verdict was judged on are shown. */
  @Test
  void statusResumeShowsTheCheckpointItWasJudgedOn() {
    AgentSim s = sim(Specs.spec()).started();
    s.checkpoint("ckpt-17", "failed", true, true);
    s.exit(1);
    assertThat(s.state.resume.checkpoint()).isEqualTo("ckpt-17");
    assertThat(s.state.resume.checkpointStatus()).isEqualTo("failed");
    assertThat(s.state.resume.idempotent()).isTrue();
    assertThat(s.state.resume.eligible()).isTrue();
    assertThat(s.state.resume.reasonCode()).isEqualTo(ReasonCode.RESUME_BLOCKED_COOLDOWN); // 30s > 2s backoff
  }

  /**
   * README "A pod stuck Pending": a pod that never started within startupGrace keeps why in lastFailure.reason
   * (ErrImagePull, ...), which a rule's match.reasons can name.
   */
  @Test
  void aPodThatNeverStartedKeepsItsWaitingReasonForLastFailureAndRules() {
    FailureRule badImage = rule("bad-image", "Fail");
    badImage.match.reasons = List.of("ErrImagePull");
    AgentSim s = sim(rules(Specs.heartbeat(Specs.spec(), "60s", "120s"), badImage));
    s.reconcile();
    s.pod = new PodView(s.pod.name(), s.pod.uid(), PodView.Stage.PENDING, s.now, null, "ErrImagePull",
        "pull access denied", false);
    s.advance(Duration.ofSeconds(121));
    assertThat(s.reconcile().deletePod()).isTrue();
    assertThat(s.state.lastFailure.reason()).isEqualTo("ErrImagePull");
    assertThat(s.state.lastFailure.failureReason()).isEqualTo("InitializationFailed");
    assertThat(s.state.lastFailure.rule()).isEqualTo("bad-image");
    assertThat(s.state.phase).isEqualTo(Phase.Failed);
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

  /** §6: each request is acted on once: a resume refused while Running does not swallow a restart of the same edit. */
  @Test
  void aRefusedResumeDoesNotSwallowARestartRequestedInTheSameEdit() {
    AgentSim s = sim(Specs.spec()).started();
    s.resumeRequest = new Request("a", null);
    s.restartRequest = new Request("b", null);
    Decision d = s.reconcile();
    assertThat(d.deletePod()).as("the restart ends the live run").isTrue();
    assertThat(d.notices()).anySatisfy(n -> assertThat(n.message()).contains("Resume request a refused"));
    assertThat(s.state.lastRestart.kind()).isEqualTo(RestartKind.Manual);
    assertThat(s.state.lastRestart.requestId()).isEqualTo("b");
  }

  /** README §6 table: a resume from Escalated "resumes from the checkpoint when eligible". */
  @Test
  void aResumeRequestResumesFromAnEligibleCheckpoint() {
    AgentSim s = sim(retries(Specs.spec(), 0)).started();
    s.checkpoint("ckpt-9", "in_progress", true, true);
    s.exit(1);
    assertThat(s.state.phase).isEqualTo(Phase.Escalated);
    s.resumeRequest = new Request("go", null);
    Decision d = s.reconcile();
    assertThat(d.start()).hasValueSatisfying(p -> assertThat(p.resumeCheckpoint()).contains("ckpt-9"));
    assertThat(s.state.lastRestart.kind()).isEqualTo(RestartKind.Resume);
    assertThat(s.state.resume.checkpoint()).isEqualTo("ckpt-9");
    assertThat(s.state.resume.reasonCode()).isEqualTo(ReasonCode.RESUME_ALLOWED);
  }

  /**
   * api.md §1 resume.maxAttempts is "per failure sequence", §6 a resume request starts "a new lifecycle": the
   * checkpoint it hands over is no attempt of the next sequence, which gets all of its own.
   */
  @Test
  void aResumeRequestsCheckpointUsesNoneOfTheNextSequencesResumeAttempts() {
    AgentSim s = sim(Specs.resume(Specs.spec(), "Require", 1)).started();
    s.checkpoint("ckpt-1", "in_progress", true, true);
    s.exit(1);
    s.restartAndRun();
    assertThat(s.state.resume.attempts()).isEqualTo(1);
    s.checkpoint("ckpt-1", "in_progress", true, true);
    s.exit(1);
    assertThat(s.state.phase).isEqualTo(Phase.Escalated);
    assertThat(s.state.lastDecision.reasonCode()).isEqualTo(ReasonCode.RESUME_ATTEMPT_LIMIT_REACHED);
    s.resumeRequest = new Request("again", null);
    Decision resumed = s.reconcile();
    assertThat(resumed.start()).hasValueSatisfying(p -> assertThat(p.resumeCheckpoint()).contains("ckpt-1"));
    assertThat(resumed.notices()).anySatisfy(n -> assertThat(n.message()).contains("from checkpoint ckpt-1")
        .contains("resume request"));
    s.running();
    assertThat(s.state.resume.attempts()).isZero();
    s.checkpoint("ckpt-2", "in_progress", true, true);
    s.exit(1);
    assertThat(s.state.phase).as("the new sequence's first failure may resume").isEqualTo(Phase.Backoff);
    assertThat(s.state.resume.eligible()).isTrue();
    Decision again = s.restartAndRun();
    assertThat(s.starts).last().satisfies(p -> assertThat(p.resumeCheckpoint()).contains("ckpt-2"));
    assertThat(s.state.resume.attempts()).isEqualTo(1);
    assertThat(again.state().phase).isEqualTo(Phase.Running);
  }

  /**
   * README §6 table: a restart request that skips a Backoff wait skips only the wait: "a restart decided to resume
   * from a checkpoint still resumes from it". It is recorded as a manual restart, and the run it followed in history.
   */
  @Test
  void aRestartThatSkipsABackoffWaitStillResumesFromTheCheckpoint() {
    AgentSim s = sim(Specs.spec()).started();
    s.checkpoint("ckpt-3", "in_progress", true, true);
    s.exit(1);
    assertThat(s.state.phase).isEqualTo(Phase.Backoff);
    s.advance(Duration.ofSeconds(1));
    s.restartRequest = new Request("now", "operator says so");
    Decision d = s.reconcile();
    assertThat(d.start()).hasValueSatisfying(p -> assertThat(p.resumeCheckpoint()).contains("ckpt-3"));
    assertThat(s.state.lastRestart.kind()).isEqualTo(RestartKind.Manual);
    assertThat(s.state.lastRestart.reason()).isEqualTo("operator says so");
  }

  /** §2 history: a live run ended by a restart request is in history as restarted, not as a failure. */
  @Test
  void aRunEndedByARestartRequestIsInHistoryAsRestarted() {
    AgentSim s = sim(Specs.spec()).started();
    s.restartRequest = new Request("r-1", null);
    s.reconcile();
    assertThat(s.state.history).last().satisfies(h -> {
      assertThat(h.pod()).isEqualTo("coder-1");
      assertThat(h.outcome()).isEqualTo(RunOutcome.Restarted);
      assertThat(h.reasonCode()).isEqualTo(ReasonCode.MANUAL_RESTART);
    });
    assertThat(s.state.attempt).isZero();
    assertThat(s.state.lastRestart.reason()).isEqualTo("restart requested");
  }

  /**
   * §4: "a template the server rejects as invalid (422) is not retried (phase Failed, reason code invalid_template,
   * the server's message in the condition)"; README: the message is kept in status.lastDecision.message.
   */
  @Test
  void aPodTemplateRejectedAsInvalidFailsWithTheServersMessage() {
    AgentSim s = sim(Specs.spec());
    String why = "Pod \"coder-1\" is invalid: spec.containers[0].image: Required value";
    Decision d = s.evaluator.spawnFailed(s.policy, s.state, s.sighting(null), true, why, s.now, s.random);
    assertThat(d.state().phase).isEqualTo(Phase.Failed);
    assertThat(d.state().terminalReason).isEqualTo(TerminalReason.UnrecoverableError);
    assertThat(d.state().lastDecision.reasonCode()).isEqualTo(ReasonCode.INVALID_TEMPLATE);
    assertThat(d.state().lastDecision.message()).isEqualTo(why);
    assertThat(d.state().lastDecision.maxAttempts()).as("the sequence's, as every decision says it (not \"attempt 1 "
        + "of 0\" in Recovering)").isEqualTo(s.policy.maxRetries());
    assertThat(d.state().nextRestartAt).isNull();
    assertThat(d.wakeAt()).as("not retried").isEmpty();
    assertThat(d.event()).hasValueSatisfying(e -> assertThat(e.message()).contains(why)
        .contains("Inspect: kubectl describe agentinstance coder", "kubectl respawn resume coder --force")
        .as("no pod ran: no logs to read").doesNotContain("kubectl logs"));
  }

  /** §4 spawn_failed (quota, admission): retried with the backoff, a Warning, the server's message kept (README). */
  @Test
  void aRefusedPodCreateIsRetriedWithAWarningAndKeepsTheServersMessage() {
    AgentSim s = sim(Specs.spec());
    String why = "exceeded quota: compute-resources, requested: pods=1";
    Decision d = s.evaluator.spawnFailed(s.policy, s.state, s.sighting(null), false, why, s.now, s.random);
    assertThat(d.state().phase).isEqualTo(Phase.Backoff);
    assertThat(d.state().lastDecision.reasonCode()).isEqualTo(ReasonCode.SPAWN_FAILED);
    assertThat(d.state().lastDecision.message()).isEqualTo(why);
    assertThat(d.state().nextRestartAt).isEqualTo(s.now.plusSeconds(2)); // the backoff's first delay
    assertThat(d.event()).hasValueSatisfying(e -> {
      assertThat(e.type()).isEqualTo(EventType.Warning);
      assertThat(e.reason()).isEqualTo(EventReason.RestartFailed);
      assertThat(e.message()).contains("spawn_failed", why);
    });
  }

  /** §2 status.resume: a resumed run that waited for its class cooldown shows resume_allowed once it has started. */
  @Test
  void aResumedRunThatWaitedForItsCooldownShowsResumeAllowedOnceStarted() {
    AgentSim s = sim(Specs.spec()).started();
    s.checkpoint("ckpt-17", "in_progress", true, true);
    s.exit(1);
    assertThat(s.state.resume.reasonCode()).isEqualTo(ReasonCode.RESUME_BLOCKED_COOLDOWN);
    assertThat(s.state.resume.cooldownRemainingSeconds()).isEqualTo(30);
    s.restartAndRun();
    assertThat(s.state.resume.reasonCode()).isEqualTo(ReasonCode.RESUME_ALLOWED);
    assertThat(s.state.resume.cooldownRemainingSeconds()).isZero();
    assertThat(s.state.resume.attempts()).isEqualTo(1);
    assertThat(s.state.history).last().satisfies(h ->
        assertThat(h.reasonCode()).as("the decision that waited keeps its code").isEqualTo(ReasonCode.RESUME_BLOCKED_COOLDOWN));
  }

  /**
   * README (shared dependencies): a respawn.dev/restart of an agent that waits for the dependency restarts it now,
   * outside the dependency's release; also while the circuit is HalfOpen with another probe, where it runs as no
   * probe and waits for nothing any more.
   */
  @Test
  void aWaiterRestartedByHandDuringHalfOpenRunsOutsideTheDependency() {
    AgentSim s = sim(io.fabric8.kubernetes.client.utils.Serialization.unmarshal("""
        backoff: {type: Exponential, initialDelay: 2s}
        dependencies:
        - name: model-api
          match: {messageContains: ["HTTP 503"]}
        """, AgentRestartPolicySpec.class)).started();
    s.exit(1, "Error", "upstream model API answered HTTP 503");
    Instant opened = s.now.plusMillis(300);
    s.modelApiOpen(1, opened);
    s.now = s.state.nextRestartAt;
    s.reconcile();
    assertThat(s.state.waitingFor).isEqualTo("model-api");
    s.now = opened.plusSeconds(30);
    s.dependencies.put("model-api", new DependencyCircuit("model-api", CircuitState.HalfOpen, 1, opened,
        opened.plusSeconds(30), null, s.now, List.of("other"), List.of(), List.of(), 2, 2));
    assertThat(s.reconcile().start()).as("another instance probes").isEmpty();
    s.advance(Duration.ofSeconds(1));
    s.restartRequest = new Request("r-1", null);
    Decision d = s.reconcile();
    assertThat(d.start()).isPresent();
    assertThat(s.state.waitingFor).as("restarted by a person: it waits for nothing").isNull();
    assertThat(s.state.lastRestart.kind()).isEqualTo(RestartKind.Manual);
  }

  /**
   * §6: a resume and a restart set in one edit on an Escalated instance restart it once, as the resume (a new
   * lifecycle); its circuit is told closed (CircuitBreakerStateChanged).
   */
  @Test
  void aResumeAndARestartInOneEditRestartOnceAsTheResume() {
    AgentSim s = escalatedTwiceFailed();
    assertThat(s.state.circuit.state()).isEqualTo(CircuitState.Open);
    s.resumeRequest = new Request("a", null);
    s.restartRequest = new Request("b", null);
    Decision d = s.reconcile();
    assertThat(d.start()).isPresent();
    assertThat(s.state.lastRestart.kind()).isEqualTo(RestartKind.Resume);
    assertThat(s.state.lastRestart.requestId()).isEqualTo("a");
    assertThat(s.state.handled(OperatorRequest.RESTART, "b")).isTrue();
    assertThat(s.state.circuit.state()).isEqualTo(CircuitState.Closed);
    assertToldCircuitChange(d, "Open -> Closed");
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

  /**
   * README (shared dependencies): "a failure at openedAt or later that was counted is taken back out of its
   * instance's count", also one whose restart was to resume from a checkpoint after its class cooldown
   * (resume_blocked_cooldown).
   */
  @Test
  void aCountedFailureThatOpenedTheDependencyIsTakenBackAlsoWhenItWaitedForAResumeCooldown() {
    AgentSim s = sim(io.fabric8.kubernetes.client.utils.Serialization.unmarshal("""
        backoff: {type: Exponential, initialDelay: 2s}
        dependencies:
        - name: model-api
          match: {messageContains: ["HTTP 503"]}
        """, AgentRestartPolicySpec.class)).started();
    s.checkpoint("ckpt-1", "in_progress", true, true);
    Instant failedAt = s.now;
    s.exit(1, "Error", "upstream model API answered HTTP 503");
    assertThat(s.state.phase).isEqualTo(Phase.Backoff);
    assertThat(s.state.attempt).isEqualTo(1);
    assertThat(s.state.lastDecision.reasonCode()).isEqualTo(ReasonCode.RESUME_BLOCKED_COOLDOWN);
    // its failure was the one that brought model-api to its threshold: the circuit opened at its time
    s.modelApiOpen(1, failedAt);
    s.advance(Duration.ofSeconds(1));
    s.reconcile();
    assertThat(s.state.phase).isEqualTo(Phase.CircuitOpen);
    assertThat(s.state.waitingFor).isEqualTo("model-api");
    assertThat(s.state.attempt).isZero();
    assertThat(s.state.circuit.failureTimes()).isEmpty();
    assertThat(s.state.history).last().satisfies(h ->
        assertThat(h.reasonCode()).isEqualTo(ReasonCode.DEPENDENCY_CIRCUIT_OPEN));
  }

  /**
   * §2: "The operator adopts, ends or deletes only pods whose controller ownerReference is the instance's UID: a pod
   * that merely carries the labels is never touched" (not even one named as the next run and labelled with it).
   */
  @Test
  void aPodThatMerelyCarriesTheLabelsIsNeverAdoptedNorDeleted() {
    AgentSim s = sim(Specs.spec()).started();
    s.exit(1);
    s.now = s.state.nextRestartAt;
    PodView foreign = new PodView("coder-2", "foreign-uid", PodView.Stage.RUNNING, s.now.minusSeconds(1),
        s.now.minusSeconds(1), null, null, true);
    Sighting seen = s.sighting(null).withPod(new PodFacts(foreign, 2, "someone-else", java.util.Optional.empty()));
    Decision d = s.evaluator.decide(s.policy, s.state, seen, s.now, s.random);
    assertThat(d.startsExisting()).as("not adopted as run 2").isFalse();
    assertThat(d.deletions()).extracting(PodDeletion::uid).doesNotContain("foreign-uid");
    assertThat(d.state().phase).isNotEqualTo(Phase.Running);
  }

  /**
   * README (Heartbeat): "a Stalled or Crashed verdict stays shown" after the run it ended, also once the next run has
   * started, until a run renews again; a Healthy verdict is not carried over to a run that has not renewed yet.
   */
  @Test
  void aStalledVerdictStaysShownAcrossTheNextStartAHealthyOneDoesNot() {
    AgentSim stalled = sim(Specs.heartbeat(retries(Specs.spec(), 5), "60s", "120s")).started();
    stalled.heartbeat(HealthVerdict.Stalled);
    assertThat(stalled.reconcile().deletePod()).isTrue();
    stalled.restartStillPending();
    assertThat(stalled.state.heartbeat.verdict()).isEqualTo(HealthVerdict.Stalled);
    AgentSim healthy = sim(Specs.heartbeat(retries(Specs.spec(), 5), "60s", "120s")).started();
    healthy.heartbeat(HealthVerdict.Healthy);
    healthy.reconcile();
    healthy.exit(1);
    assertThat(healthy.state.heartbeat.verdict()).isEqualTo(HealthVerdict.Healthy);
    healthy.restartStillPending();
    assertThat(healthy.state.heartbeat).isNull();
  }

  /**
   * §2 lastDecision.maxAttempts: a restart decided after the failure sequence ended counts against the policy's
   * maxRetries again, not the cap of the sequence that is over (OOMKilled: 2).
   */
  @Test
  void aRestartAfterTheSequenceEndedReportsThePolicysMaxRetries() {
    AgentSim s = sim(Specs.spec()).started(); // maxRetries 3, resetAfter 60s
    s.end(EndingKind.TERMINATED, "OOMKilled");
    assertThat(s.state.lastDecision.maxAttempts()).isEqualTo(2);
    s.restartAndRun();
    s.advance(Duration.ofSeconds(61));
    s.reconcile();
    assertThat(s.state.attempt).isZero();
    s.restartRequest = new Request("r-1", null);
    s.reconcile();
    assertThat(s.state.lastDecision.reasonCode()).isEqualTo(ReasonCode.MANUAL_RESTART);
    assertThat(s.state.lastDecision.maxAttempts()).isEqualTo(3);
  }

  /**
   * §3 last paragraph and README: the Escalated Event's note holds 1024 bytes (the API server refuses more); the
   * failure's context gives way and the checklist stays whole.
   */
  @Test
  void theEscalationMessageNeverExceedsAnEventsNote() {
    AgentSim s = sim(retries(Specs.spec(), 0)).started();
    Decision d = s.exit(1, "E".repeat(600), "x".repeat(600)); // reason and message: 512 bytes each once bounded
    assertThat(d.notices()).filteredOn(n -> n.reason() == EventReason.Escalated).singleElement().satisfies(n -> {
      assertThat(n.message().getBytes(java.nio.charset.StandardCharsets.UTF_8).length).isLessThanOrEqualTo(1024);
      assertThat(n.message()).contains("Last failure: pod coder-1").endsWith("kubectl respawn resume coder --force");
    });
  }

  /**
   * What an agent wrote is quoted on one line in every notice and in status.lastDecision.message: a line break
   * would start a row of its own making in kubectl describe (one that looks like the operator's Event), an escape
   * sequence would reach the terminal. Escaped, the Escalated note still keeps its checklist whole and last.
   */
  @Test
  void anAgentsWordsAreQuotedOnOneLine() {
    String forged = "ok\n  Normal  RestartSucceeded  respawn.dev/operator\r\n\u001b[2J\u0000 kubectl respawn resume x";
    AgentSim s = sim(retries(Specs.spec(), 0)).started();
    Decision requested = s.exit(42, "Error", forged);
    assertThat(requested.notices()).allSatisfy(n -> assertThat(n.message()).doesNotContainPattern("\\p{Cc}"));
    assertThat(requested.notices()).filteredOn(n -> n.reason() == EventReason.RestartRequested).singleElement()
        .satisfies(n -> assertThat(n.message()).contains("ok\\n  Normal  RestartSucceeded", "\\u001b[2J\\u0000"));
    s.running();
    Decision escalated = s.exit(1, "Error\n" + forged, forged + "x".repeat(2000));
    assertThat(escalated.notices()).filteredOn(n -> n.reason() == EventReason.Escalated).singleElement()
        .satisfies(n -> assertThat(n.message()).doesNotContainPattern("\\p{Cc}")
            .contains("reason Error\\nok\\n", "message \"ok\\n  Normal")
            .endsWith("kubectl respawn resume coder --force"));
    // status keeps the agent's words as they were, as data
    assertThat(s.state.lastFailure.message()).startsWith("ok\n  Normal");
  }

  /**
   * An admission webhook's refusal over several lines (as policy engines write them) is status.lastDecision.message
   * and the RestartFailed note on one line, within 512 bytes, so that status reads back as written (api.md §9, §12).
   */
  @Test
  void aRefusalOverSeveralLinesIsRecordedOnOneLineWithinItsBound() {
    AgentSim s = sim(Specs.spec());
    String why = "admission webhook \"validate.kyverno.svc\" denied the request:\n\nresource Pod/agents/coder-1 was"
        + " blocked due to the following policies\n\nrequire-labels:\n  check-team: " + "label missing; ".repeat(40);
    Decision d = s.evaluator.spawnFailed(s.policy, s.state, s.sighting(null), false, why, s.now, s.random);
    String message = d.state().lastDecision.message();
    assertThat(message).doesNotContainPattern("\\p{Cc}").startsWith("admission webhook")
        .contains("denied the request:\\n\\nresource Pod/agents/coder-1");
    assertThat(message.getBytes(java.nio.charset.StandardCharsets.UTF_8).length).isLessThanOrEqualTo(512);
    assertThat(Bounds.truncateUtf8(message, Bounds.MESSAGE_BYTES)).as("reads back as written").isEqualTo(message);
    assertThat(d.notices()).allSatisfy(n -> assertThat(n.message()).doesNotContainPattern("\\p{Cc}"));
  }

  /** §2: "A finished pod is kept for kubectl logs until the next run of the same instance has started". */
  @Test
  void aFinishedPodIsKeptForLogsUntilTheNextRunRuns() {
    AgentSim s = sim(Specs.spec()).started();
    s.exit(1);
    Decision created = s.restartStillPending(); // coder-2 created, not running yet
    assertThat(created.deletions()).isEmpty();
    s.advance(Duration.ofSeconds(1));
    assertThat(s.reconcile().deletions()).as("coder-2 still pending").isEmpty();
    Decision running = s.running();
    assertThat(running.deletions()).extracting(PodDeletion::name).containsExactly("coder-1");
    assertThat(running.deletions()).extracting(PodDeletion::why).containsExactly(PodDeletion.Why.FINISHED_EARLIER_RUN);
  }

  /**
   * README §6 table: a restart request that skips a wait "skips only the wait": a restart decided to resume from a
   * checkpoint still resumes from it, also when the wait was for the circuit breaker's HalfOpen trial (CircuitOpen).
   */
  @Test
  void aRestartThatSkipsACircuitOpenWaitStillResumesFromTheCheckpoint() {
    AgentSim s = sim(circuit(retries(Specs.spec(), 5), 1, "10m", "5m", false)).started();
    s.checkpoint("ckpt-5", "in_progress", true, true);
    s.exit(1);
    assertThat(s.state.phase).isEqualTo(Phase.CircuitOpen);
    s.advance(Duration.ofSeconds(40)); // past the ToolFailure cooldown, well before the trial
    s.restartRequest = new Request("now", null);
    Decision d = s.reconcile();
    assertThat(d.start()).hasValueSatisfying(p -> assertThat(p.resumeCheckpoint()).contains("ckpt-5"));
    assertThat(s.state.circuit.state()).isEqualTo(CircuitState.HalfOpen);
  }

  /** §2 lastDecision.finalAttempt: also a restart that waits for its resume cooldown can be the last retry. */
  @Test
  void aResumeThatWaitsForItsCooldownCanBeTheFinalAttempt() {
    AgentSim s = sim(retries(Specs.spec(), 1)).started();
    s.checkpoint("ckpt-1", "in_progress", true, true);
    s.exit(1);
    assertThat(s.state.lastDecision.reasonCode()).isEqualTo(ReasonCode.RESUME_BLOCKED_COOLDOWN);
    assertThat(s.state.lastDecision.finalAttempt()).isTrue();
  }

  /**
   * README (shared dependencies): an agent waiting for a dependency restarts from its checkpoint when eligible, "and
   * its class cooldown still holds as a minimum delay": a probe slot sooner than that does not start it early.
   */
  @Test
  void aWaiterResumingFromItsCheckpointStillWaitsOutItsClassCooldown() {
    AgentSim s = sim(io.fabric8.kubernetes.client.utils.Serialization.unmarshal("""
        backoff: {type: Exponential, initialDelay: 2s}
        dependencies:
        - name: model-api
          match: {messageContains: ["HTTP 503"]}
          failureThreshold: 1
          openDuration: 5s
        """, AgentRestartPolicySpec.class)).started();
    s.checkpoint("ckpt-7", "in_progress", true, true);
    Instant failedAt = s.now;
    s.exit(1, "Error", "upstream model API answered HTTP 503"); // opens it: waits, resume eligible (30s cooldown)
    assertThat(s.state.waitingFor).isEqualTo("model-api");
    s.now = failedAt.plusSeconds(5);
    s.dependencies.put("model-api", new DependencyCircuit("model-api", CircuitState.HalfOpen, 1, failedAt,
        s.now, null, s.now, List.of("coder"), List.of(), List.of(), 1, 1));
    Decision early = s.reconcile();
    assertThat(early.start()).as("the probe slot comes before the ToolFailure cooldown").isEmpty();
    assertThat(s.state.nextRestartAt).isEqualTo(failedAt.plusSeconds(30));
    s.now = failedAt.plusSeconds(30);
    assertThat(s.reconcile().start()).hasValueSatisfying(p -> assertThat(p.resumeCheckpoint()).contains("ckpt-7"));
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

  /**
   * README (shared dependencies): a failure counted while the circuit was Closed waits with the others once it opens;
   * its decision shows the wait until the circuit's halfOpenAt and keeps the sequence's maxAttempts.
   */
  @Test
  void aCountedFailureHeldForTheOpenDependencyShowsItsWaitInLastDecision() {
    AgentSim s = sim(io.fabric8.kubernetes.client.utils.Serialization.unmarshal("""
        backoff: {type: Exponential, initialDelay: 2s}
        maxRetries: 4
        dependencies:
        - name: model-api
          match: {messageContains: ["HTTP 503"]}
        """, AgentRestartPolicySpec.class)).started();
    s.exit(1, "Error", "upstream model API answered HTTP 503");
    Instant opened = s.now.plusMillis(300);
    s.modelApiOpen(1, opened);
    s.now = s.state.nextRestartAt;
    s.reconcile();
    assertThat(s.state.lastDecision.reasonCode()).isEqualTo(ReasonCode.DEPENDENCY_CIRCUIT_OPEN);
    assertThat(s.state.lastDecision.maxAttempts()).isEqualTo(4);
    assertThat(s.state.lastDecision.delaySeconds())
        .isEqualTo(Duration.between(s.now, opened.plusSeconds(30)).toMillis() / 1000.0);
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

  /**
   * §3 "a restart scheduled before the operator died happens at nextRestartAt, once": a start whose status write was
   * lost is taken up from its pod, and dated no earlier than it was due, although the pod's creationTimestamp (whole
   * seconds) reads earlier.
   */
  @Test
  void aStartTakenUpFromItsPodIsNeverDatedBeforeItWasDue() {
    AgentSim s = sim(Specs.window(backoff("Exponential", "1500ms", 2.0, "120s"), 10, "1h")).started();
    s.exit(1);
    Instant due = s.state.nextRestartAt;
    assertThat(due).isEqualTo(AgentSim.T0.plusMillis(1500));
    InstanceState stale = s.state.copy(); // the status write of the start below is lost
    s.restartStillPending();
    s.pod = new PodView(s.pod.name(), s.pod.uid(), PodView.Stage.PENDING,
        due.truncatedTo(java.time.temporal.ChronoUnit.SECONDS), null, null, null, false);
    s.state = stale;
    s.advance(Duration.ofSeconds(2));
    Decision d = s.reconcile();
    assertThat(d.startsExisting()).as("coder-2 is taken up, not made again").isTrue();
    assertThat(s.state.run).isEqualTo(2);
    assertThat(s.state.restarts).isEqualTo(1);
    assertThat(s.state.lastRestart.startedAt()).isEqualTo(due);
    assertThat(s.state.recentRestarts).containsExactly(due);
  }

  /** The decision tells the instance's circuit change (§8 CircuitBreakerStateChanged), e.g. "Open -> Closed". */
  private static void assertToldCircuitChange(Decision d, String change) {
    assertThat(d.notices()).anySatisfy(n -> {
      assertThat(n.reason()).isEqualTo(EventReason.CircuitBreakerStateChanged);
      assertThat(n.message()).contains(change);
    });
  }
}

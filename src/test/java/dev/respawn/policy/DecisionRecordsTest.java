package dev.respawn.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.FailureRule;
import dev.respawn.api.v1alpha1.Phase;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What a decision records of the run it ended: history and the audit line. */
class DecisionRecordsTest {
  /** Ignore rule on a run whose pod vanished before it was seen running: history startedAt. */
  @Test
  void ignoredEndingKeepsItsRunsStart() {
    FailureRule ignore = Specs.rule("evictions", "Ignore");
    ignore.match.classes = List.of("ContextReset");
    AgentSim s = new AgentSim(AgentSim.policy(Specs.rules(Specs.retries(Specs.spec(), 5), ignore))).started();
    s.exit(1);
    s.restartStillPending();
    Instant made = s.state.lastRestart.startedAt();
    s.advance(Duration.ofSeconds(1));
    s.end(EndingKind.DELETED, null);
    assertThat(s.state.history).last().satisfies(r -> {
      assertThat(r.pod()).isEqualTo("coder-2");
      assertThat(r.startedAt()).isEqualTo(made);
    });
  }

  /** An escalation by restartLimit after a resume verdict: the audit line's reason_code. */
  @Test
  void escalationAuditLineCarriesItsCode() {
    AgentSim s = new AgentSim(AgentSim.policy(Specs.window(Specs.resume(Specs.retries(Specs.spec(), 5), "Prefer", 3),
        1, "1h"))).started();
    s.checkpoint("ckpt-1", "in_progress", true, true);
    s.exit(1);
    s.restartAndRun();
    s.checkpoint("ckpt-2", "in_progress", true, true);
    Decision d = s.exit(1);
    assertThat(d.state().phase).isEqualTo(Phase.Escalated);
    assertThat(d.audit().orElseThrow().reasonCode()).isEqualTo(ReasonCode.RESTART_LIMIT_EXCEEDED);
  }

  /** §2 / §9: history keeps the last 10 runs, exactly 10 once more have ended. */
  @Test
  void historyKeepsExactlyTheLastTenRuns() {
    AgentSim s = new AgentSim(AgentSim.policy(Specs.spec())).started();
    for (int i = 0; i < 11; i++) {
      s.advance(Duration.ofMinutes(1));
      s.exit(42); // a restart request: the runs end without a failure, and the restarts are at once
      s.running();
    }
    s.advance(Duration.ofMinutes(1));
    s.exit(42);
    assertThat(s.state.history).hasSize(10);
    assertThat(s.state.history).first().satisfies(r -> assertThat(r.run()).isEqualTo(3));
    assertThat(s.state.history).last().satisfies(r -> assertThat(r.run()).isEqualTo(12));
  }

  /**
   * §8: one decision writes one Event, under the reason of its most significant notice; a Warning outweighs a
   * Normal notice whatever their reasons, and the note carries the others.
   */
  @Test
  void theEventOfADecisionIsItsWeightiestNoticeWarningsFirst() {
    Decision.Notice scheduled = Decision.Notice.normal(EventReason.RestartScheduled, "scheduled");
    Decision.Notice requested = Decision.Notice.normal(EventReason.RestartRequested, "requested");
    Decision.Notice started = Decision.Notice.warning(EventReason.RestartStarted, "started, with a warning");
    AgentSim s = new AgentSim(AgentSim.policy(Specs.spec())).started();
    Decision quiet = s.reconcile();
    Decision mixed = quiet.withNotice(scheduled).withNotice(started).withNotice(requested);
    assertThat(mixed.event()).hasValueSatisfying(e -> {
      assertThat(e.type()).isEqualTo(EventType.Warning);
      assertThat(e.reason()).isEqualTo(EventReason.RestartStarted);
      assertThat(e.message()).startsWith("started, with a warning").contains("scheduled", "requested");
    });
    Decision normals = quiet.withNotice(scheduled).withNotice(requested);
    assertThat(normals.event()).hasValueSatisfying(e -> {
      assertThat(e.type()).isEqualTo(EventType.Normal);
      assertThat(e.reason()).as("RestartRequested ranks before RestartScheduled").isEqualTo(EventReason.RestartRequested);
    });
  }

  /** §3 f + §8: a failure that exhausts the retries is told as one Warning Event, Escalated, carrying the failure. */
  @Test
  void anEscalatingFailureIsToldUnderEscalated() {
    AgentSim s = new AgentSim(AgentSim.policy(Specs.retries(Specs.spec(), 0))).started();
    Decision d = s.exit(1);
    assertThat(d.event()).hasValueSatisfying(e -> {
      assertThat(e.type()).isEqualTo(EventType.Warning);
      assertThat(e.reason()).isEqualTo(EventReason.Escalated);
      assertThat(e.message()).contains("RestartFailed", "RestartExhausted");
    });
  }

  /** §2 lastDecision.finalAttempt: true exactly for the restart that uses the sequence's last retry. */
  @Test
  void finalAttemptMarksTheRestartThatUsesTheLastRetry() {
    AgentSim s = new AgentSim(AgentSim.policy(Specs.retries(Specs.spec(), 2))).started();
    s.exit(1);
    assertThat(s.state.lastDecision.attempt()).isEqualTo(1);
    assertThat(s.state.lastDecision.finalAttempt()).isFalse();
    s.restartAndRun();
    s.exit(1);
    assertThat(s.state.lastDecision.attempt()).isEqualTo(2);
    assertThat(s.state.lastDecision.maxAttempts()).isEqualTo(2);
    assertThat(s.state.lastDecision.finalAttempt()).isTrue();
  }

  /** §8: an ordinary failure is told as one Warning Event, RestartFailed, its schedule carried in the note. */
  @Test
  void aRetriedFailureIsToldAsRestartFailedWithTheScheduleInTheNote() {
    AgentSim s = new AgentSim(AgentSim.policy(Specs.spec())).started();
    Decision d = s.exit(1);
    assertThat(d.event()).hasValueSatisfying(e -> {
      assertThat(e.type()).isEqualTo(EventType.Warning);
      assertThat(e.reason()).isEqualTo(EventReason.RestartFailed);
      assertThat(e.message()).contains("ToolFailure", "exit 1", "RestartScheduled");
    });
  }

  /**
   * §3 a, b: a failure nothing retries (backoff None, action Fail) is decided Fail, phase Failed; one that ran out
   * of retries is decided Escalate, phase Escalated.
   */
  @Test
  void failuresNothingRetriesAreDecidedFailAndExhaustedOnesEscalate() {
    AgentSim none = new AgentSim(AgentSim.policy(Specs.backoff("None", "2s", 2.0, "120s"))).started();
    none.exit(1);
    assertThat(none.state.phase).isEqualTo(Phase.Failed);
    assertThat(none.state.lastDecision.action()).isEqualTo(DecisionAction.Fail);
    assertThat(none.state.lastDecision.reasonCode()).isEqualTo(ReasonCode.POLICY_NONE);
    AgentSim fail = new AgentSim(AgentSim.policy(Specs.spec())).started();
    fail.exit(2, "Error", "invalid_configuration");
    assertThat(fail.state.phase).isEqualTo(Phase.Failed);
    assertThat(fail.state.lastDecision.action()).isEqualTo(DecisionAction.Fail);
    assertThat(fail.state.lastDecision.reasonCode()).isEqualTo(ReasonCode.NON_RETRYABLE_FAILURE);
    AgentSim exhausted = new AgentSim(AgentSim.policy(Specs.retries(Specs.spec(), 0))).started();
    exhausted.exit(1);
    assertThat(exhausted.state.phase).isEqualTo(Phase.Escalated);
    assertThat(exhausted.state.lastDecision.action()).isEqualTo(DecisionAction.Escalate);
  }

  /** §7 "Reason codes, exactly", as status and the audit line spell them, and read back from status. */
  @Test
  void reasonCodesAreSpelledExactlyAsTheContractSpellsThem() {
    for (String code : List.of("resume_allowed", "resume_missing_checkpoint", "resume_unknown_interruption_class",
        "resume_non_idempotent_step", "resume_missing_runtime_artifacts", "resume_blocked_cooldown",
        "resume_attempt_limit_reached", "restart_scheduled", "circuit_open", "retries_exhausted",
        "restart_limit_exceeded", "non_retryable_failure", "policy_none", "dependency_circuit_open", "spawn_failed",
        "invalid_template")) {
      assertThat(ReasonCode.of(code)).as(code).hasValueSatisfying(r -> assertThat(r.toString()).isEqualTo(code));
    }
    assertThat(ReasonCode.of("Restart_Scheduled")).isEmpty();
    assertThat(ReasonCode.of(null)).isEmpty();
  }

  /** §8 respawn.circuit.trips: the decision that opens the instance's circuit counts one trip, later ones none. */
  @Test
  void theDecisionThatOpensTheCircuitCountsOneTrip() {
    AgentSim s = new AgentSim(AgentSim.policy(Specs.circuit(Specs.retries(Specs.spec(), 5), 2, "10m", "5m", false)))
        .started();
    assertThat(s.exit(1).circuitTrips()).isZero();
    s.restartAndRun();
    assertThat(s.exit(1).circuitTrips()).isEqualTo(1);
    assertThat(s.reconcile().circuitTrips()).isZero();
  }

  /** §5: the operator creates the heartbeat Lease (owned by the instance) when there is none, and only then. */
  @Test
  void theLeaseIsCreatedWhenMissingAndOnlyThen() {
    RestartPolicy p = AgentSim.policy(Specs.heartbeat(Specs.spec(), "60s", "120s"));
    for (boolean exists : new boolean[] {false, true}) {
      Sighting seen = new Sighting("agents", "coder", dev.respawn.simulate.SimulatedPods.INSTANCE_UID, false,
          List.of(), exists, java.util.Optional.empty(), null, java.util.Map.of(), java.util.Map.of());
      Decision d = RestartEvaluator.builtIn().decide(p, new InstanceState(), seen, AgentSim.T0,
          new java.util.SplittableRandom(1));
      assertThat(d.start()).isPresent();
      assertThat(d.createLease()).as("lease exists: %s", exists).isEqualTo(!exists);
    }
  }
}

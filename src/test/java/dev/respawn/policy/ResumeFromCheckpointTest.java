package dev.respawn.policy;

import static dev.respawn.policy.EvaluatorFixture.sim;
import static dev.respawn.policy.Specs.backoff;
import static dev.respawn.policy.Specs.circuit;
import static dev.respawn.policy.Specs.retries;
import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.api.v1alpha1.InterruptionClass;
import dev.respawn.api.v1alpha1.Phase;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * api.md §3 step h and §7: a restart resumes from the agent's checkpoint when eligible, after its class cooldown;
 * Require without one escalates; a restart by hand skips only the wait, never the checkpoint.
 */
class ResumeFromCheckpointTest {
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
}

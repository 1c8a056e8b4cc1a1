package dev.respawn.policy;

import static dev.respawn.policy.EvaluatorFixture.reasons;
import static dev.respawn.policy.EvaluatorFixture.sim;
import static dev.respawn.policy.Specs.backoff;
import static dev.respawn.policy.Specs.retries;
import static dev.respawn.policy.Specs.rule;
import static dev.respawn.policy.Specs.rules;
import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.api.v1alpha1.FailureRule;
import dev.respawn.api.v1alpha1.InterruptionClass;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.api.v1alpha1.TerminalReason;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * api.md §3 step 4 a–d: a failure classified (§4) under its first matching rule: backoff None fails, action Fail is
 * unrecoverable, class Unknown escalates fail-closed, action Ignore restarts without counting.
 */
class FailureRulesTest {
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
  void aPodDeletedBySomeoneElseIsAContextReset() {
    AgentSim s = sim(Specs.spec()).started();
    s.end(EndingKind.DELETED, null);
    assertThat(s.state.lastFailure.interruptionClass()).isEqualTo(InterruptionClass.ContextReset);
    assertThat(s.state.phase).isEqualTo(Phase.Backoff);
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

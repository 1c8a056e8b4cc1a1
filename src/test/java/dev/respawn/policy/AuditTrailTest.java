package dev.respawn.policy;

import static dev.respawn.policy.EvaluatorFixture.reasons;
import static dev.respawn.policy.EvaluatorFixture.sim;
import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.InterruptionClass;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * api.md §8 audit: every decision that tells something is one audit line, with its actor (system, operator or agent); a
 * decision that changes nothing is none.
 */
class AuditTrailTest {
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

package dev.respawn.policy;

import static dev.respawn.policy.EvaluatorFixture.reasons;
import static dev.respawn.policy.EvaluatorFixture.sim;
import static dev.respawn.policy.Specs.retries;
import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.api.v1alpha1.TerminalReason;
import dev.respawn.policy.Decision.Notice;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * api.md §3 steps e and f: each counted failure is an attempt, maxRetries of them are retried and the next escalates;
 * the Escalated note carries the last failure's context, on one line and within an Event's note.
 */
class RetriesAndEscalationTest {
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
}

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
}

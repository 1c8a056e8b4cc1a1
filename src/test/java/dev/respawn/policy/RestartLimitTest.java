package dev.respawn.policy;

import static dev.respawn.policy.EvaluatorFixture.restartedByHand;
import static dev.respawn.policy.EvaluatorFixture.sim;
import static dev.respawn.policy.Specs.backoff;
import static dev.respawn.policy.Specs.retries;
import static dev.respawn.policy.Specs.rule;
import static dev.respawn.policy.Specs.rules;
import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.api.v1alpha1.FailureRule;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.api.v1alpha1.TerminalReason;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * api.md §3 step i: restartLimit, a sliding window over restarts of every kind, escalates the restart that would exceed
 * it and refuses a restart by hand; restarts a status missed still count in it.
 */
class RestartLimitTest {
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
}

package dev.respawn.policy;

import static dev.respawn.policy.EvaluatorFixture.escalatedTwiceFailed;
import static dev.respawn.policy.EvaluatorFixture.reasons;
import static dev.respawn.policy.EvaluatorFixture.refused;
import static dev.respawn.policy.EvaluatorFixture.sim;
import static dev.respawn.policy.Specs.backoff;
import static dev.respawn.policy.Specs.circuit;
import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.api.v1alpha1.TerminalReason;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * api.md §4 spawn_failed and invalid_template: a pod create the API server refuses is retried with a growing wait
 * (never a failure of the agent), one it rejects as invalid fails; the server's message is kept on one line.
 */
class SpawnFailureTest {
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

  /**
   * A restart asked for to take up a template the server then rejects: the run the request ended had its pod deleted,
   * so the checklist does not send one to kubectl logs of it (review: the pod it names is that run's).
   */
  @Test
  void aTemplateRejectedAfterARestartRequestDoesNotSendOneToTheLogsOfTheDeletedPod() {
    AgentSim s = sim(Specs.spec()).started();
    s.restartRequest = new Request("new-template", null);
    Decision ended = s.reconcile();
    assertThat(ended.deletions()).extracting(PodDeletion::why).containsExactly(PodDeletion.Why.END_RUN);
    Decision d = s.evaluator.spawnFailed(s.policy, s.state, s.sighting(null), true, "Pod \"coder-2\" is invalid",
        s.now, s.random);
    assertThat(d.state().phase).isEqualTo(Phase.Failed);
    assertThat(d.event()).hasValueSatisfying(e -> assertThat(e.message())
        .contains("Inspect: pod coder-1 was deleted to end the run, its logs with it")
        .doesNotContain("kubectl logs"));
  }

  /**
   * A run that exited as spec.suspend was set is recorded Stopped with its exit code, and its pod is kept: the
   * checklist after a template the server then rejects sends one to its logs (review: it said "deleted").
   */
  @Test
  void aRunThatExitedWhileSuspendedKeepsItsPodForTheChecklistsLogs() {
    AgentSim s = sim(Specs.spec()).started();
    s.suspend = true;
    Decision stopped = s.exit(1);
    assertThat(stopped.deletions()).isEmpty();
    s.suspend = false;
    Decision d = s.evaluator.spawnFailed(s.policy, s.state, s.sighting(null), true, "Pod \"coder-2\" is invalid",
        s.now, s.random);
    assertThat(d.state().phase).isEqualTo(Phase.Failed);
    assertThat(d.event()).hasValueSatisfying(e -> assertThat(e.message()).contains("Inspect: kubectl logs coder-1")
        .doesNotContain("was deleted"));
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
}

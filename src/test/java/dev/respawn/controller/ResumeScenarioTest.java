package dev.respawn.controller;

import static dev.respawn.controller.OperatorFixture.at;
import static dev.respawn.controller.OperatorFixture.condition;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.InterruptionClass;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.sandbox.Run;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.junit.jupiter.api.Test;

/** api.md §3 h and §7: resume from the checkpoint the agent left on its Lease. */
class ResumeScenarioTest extends MockClusterScenario {
  static List<String> env(Pod pod) {
    return pod.getSpec().getContainers().get(0).getEnv().stream().map(e -> e.getName() + "=" + e.getValue())
        .toList();
  }

  @Test
  void requireWithoutCheckpointEscalates() {
    f.policy("require", """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
        resume: {mode: Require}
        """);
    f.kubelet.script("h-require", Run.exit(1, "Error", "network_timeout: upstream").after(Duration.ofMillis(100)));
    f.instance("h-require", "require");
    AgentInstance escalated = f.awaitInstance("h-require", i -> i.getStatus().phase == Phase.Escalated);
    var st = escalated.getStatus();
    assertThat(st.lastDecision.reasonCode).isEqualTo("resume_missing_checkpoint");
    assertThat(st.resume.reasonCode).isEqualTo("resume_missing_checkpoint");
    assertThat(st.resume.eligible).isFalse();
    assertThat(condition(escalated, "Escalated").status).isEqualTo("True");
    assertThat(condition(escalated, "Escalated").message).contains("h-require-1", "resume_missing_checkpoint");
    f.holdsFor(Duration.ofMillis(700), () -> f.podsEverCreated("h-require"), p -> p.size() == 1);
  }

  @Test
  void preferWithACheckpointResumesAfterTheClassCooldown() {
    f.policy("prefer", """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
        resume:
          mode: Prefer
          cooldowns: {ToolFailure: 1500ms}
        """);
    f.kubelet.script("h-prefer",
        Run.exit(1, "Error", "temporary_error: tool crashed").after(Duration.ofMillis(400))
            .heartbeat(Duration.ofMillis(50), "respawn.dev/checkpoint", "ckpt-17",
                "respawn.dev/checkpoint-status", "in_progress", "respawn.dev/step-idempotent", "true"),
        Run.runForever());
    f.instance("h-prefer", "prefer");
    Pod first = await().atMost(OperatorFixture.AT_MOST).until(() -> f.pod("h-prefer-1"), Objects::nonNull);
    assertThat(env(first)).noneMatch(e -> e.startsWith("RESPAWN_RESUME_CHECKPOINT"));

    AgentInstance waiting = f.awaitInstance("h-prefer", i -> i.getStatus().phase == Phase.Backoff);
    var st = waiting.getStatus();
    assertThat(st.lastDecision.reasonCode).isEqualTo("resume_blocked_cooldown");
    assertThat(st.resume.reasonCode).isEqualTo("resume_blocked_cooldown");
    assertThat(st.resume.eligible).isTrue();
    assertThat(st.resume.checkpoint).isEqualTo("ckpt-17");
    assertThat(st.resume.checkpointStatus).isEqualTo("in_progress");
    assertThat(st.resume.cooldownRemainingSeconds).isEqualTo(2L); // 1.5 s, rounded up
    Instant decided = Instant.parse(st.lastDecision.at);
    Instant next = Instant.parse(st.nextRestartAt);
    assertThat(Duration.between(decided, next)).isEqualTo(Duration.ofMillis(1500));
    assertThat(st.lastRestart.resumeCheckpoint).isEqualTo("ckpt-17");

    AgentInstance resumed = f.awaitInstance("h-prefer", i -> at(i, 2, Phase.Running));
    assertThat(Instant.parse(resumed.getStatus().lastRestart.startedAt)).isAfterOrEqualTo(next);
    assertThat(resumed.getStatus().lastRestart.interruptionClass).isEqualTo(InterruptionClass.ToolFailure);
    assertThat(resumed.getStatus().resume.attempts).isEqualTo(1);
    // the cooldown is over and the run resumed: status.resume says so (api.md §2), the decision keeps its code
    assertThat(resumed.getStatus().resume.reasonCode).isEqualTo("resume_allowed");
    assertThat(resumed.getStatus().resume.cooldownRemainingSeconds).isZero();
    assertThat(resumed.getStatus().lastDecision.reasonCode).isEqualTo("resume_blocked_cooldown");
    assertThat(env(f.pod("h-prefer-2"))).contains("RESPAWN_RESUME_CHECKPOINT=ckpt-17",
        "RESPAWN_INTERRUPTION_CLASS=ToolFailure", "RESPAWN_RUN=2", "RESPAWN_ATTEMPT=1");
  }

  @Test
  void preferWithoutCheckpointRestartsFreshOnThePlainBackoff() {
    f.policy("prefer", """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
        resume: {mode: Prefer}
        """);
    f.kubelet.script("h-fresh", Run.exit(1), Run.runForever());
    f.instance("h-fresh", "prefer");
    AgentInstance running = f.awaitInstance("h-fresh", i -> at(i, 2, Phase.Running));
    assertThat(running.getStatus().resume.reasonCode).isEqualTo("resume_missing_checkpoint");
    assertThat(running.getStatus().lastDecision.reasonCode).isEqualTo("restart_scheduled");
    assertThat(running.getStatus().lastDecision.delaySeconds).isEqualTo(0.1);
    assertThat(env(f.pod("h-fresh-2"))).noneMatch(e -> e.startsWith("RESPAWN_RESUME_CHECKPOINT")
        || e.startsWith("RESPAWN_INTERRUPTION_CLASS"));
  }

  /**
   * api.md §7: eligible when "a checkpoint exists with status in_progress or failed" (idempotent step, attempts
   * left, known class). Run 1 leaves ckpt-17 on the Lease; run 2 is resumed from it and fails before it renews
   * the Lease: the checkpoint still exists (README: the checkpoint annotations stay on the Lease), and
   * resume.maxAttempts is 3, so run 3 must be resumed from it too.
   */
  @Test
  void aResumedRunThatFailsBeforeItsFirstRenewalIsResumedAgainFromTheSameCheckpoint() {
    checkpointThenAFailureBeforeRenewing("again", "Prefer");
    f.awaitInstance("again", i -> at(i, 2, Phase.Running));
    assertThat(env(f.pod("again-2"))).contains("RESPAWN_RESUME_CHECKPOINT=ckpt-17");
    AgentInstance third = f.awaitInstance("again", i -> at(i, 3, Phase.Running));
    assertThat(third.getStatus().resume.reasonCode).as("status.resume.reasonCode after run 2 failed")
        .isEqualTo("resume_allowed");
    assertThat(env(f.pod("again-3"))).contains("RESPAWN_RESUME_CHECKPOINT=ckpt-17",
        "RESPAWN_INTERRUPTION_CLASS=ToolFailure");
  }

  /** The same under resume.mode Require: the run that failed before renewing is resumed, not escalated. */
  @Test
  void underRequireAResumedRunThatFailsBeforeItsFirstRenewalIsNotEscalated() {
    checkpointThenAFailureBeforeRenewing("req", "Require");
    AgentInstance later = f.awaitInstance("req", i -> (i.getStatus().run != null && i.getStatus().run >= 3)
        || i.getStatus().phase == Phase.Escalated);
    assertThat(later.getStatus().phase).as(f.describe("req")).isNotEqualTo(Phase.Escalated);
    assertThat(later.getStatus().lastDecision.reasonCode).isNotEqualTo("resume_missing_checkpoint");
  }

  /**
   * api.md §5/§7: the checkpoint annotations on the Lease are what the resume reads. An agent of a policy without
   * heartbeats (no heartbeat.timeout) that only annotates its checkpoint, never renewing, has a checkpoint that
   * exists.
   */
  @Test
  void aCheckpointAnnotatedWithoutARenewalIsResumedFrom() {
    f.policy("nohb", """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
        resume:
          mode: Prefer
          cooldowns: {ToolFailure: 0s}
        """);
    f.kubelet.script("nohb", Run.runForever(), Run.runForever());
    f.instance("nohb", "nohb");
    f.awaitInstance("nohb", i -> at(i, 1, Phase.Running));
    await().atMost(OperatorFixture.AT_MOST).until(() -> f.lease("nohb"), Objects::nonNull);
    f.client.leases().inNamespace(OperatorFixture.NS).withName("nohb").edit(l -> {
      Map<String, String> a = new HashMap<>(l.getMetadata().getAnnotations() == null ? Map.of()
          : l.getMetadata().getAnnotations());
      a.put("respawn.dev/checkpoint", "ckpt-17");
      a.put("respawn.dev/checkpoint-status", "in_progress");
      a.put("respawn.dev/step-idempotent", "true");
      l.getMetadata().setAnnotations(a);
      return l;
    });
    f.kubelet.terminate("nohb-1", 1, "Error", "temporary_error: boom");
    AgentInstance second = f.awaitInstance("nohb", i -> at(i, 2, Phase.Running));
    assertThat(second.getStatus().resume.reasonCode).isEqualTo("resume_allowed");
    assertThat(env(f.pod("nohb-2"))).contains("RESPAWN_RESUME_CHECKPOINT=ckpt-17");
  }

  /**
   * api.md §8 lists ResumeDecision among the Event reasons on the AgentInstance, and §7's decisions are resume
   * decisions. A failure resumed from its checkpoint must be findable as a ResumeDecision Event
   * (kubectl get events --field-selector reason=ResumeDecision): the start of the resumed run is told under it
   * (the failure before it is a RestartFailed, its resume verdict in the note).
   */
  @Test
  void aResumeDecisionIsWrittenAsAResumeDecisionEvent() {
    f.policy("ev", """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
        resume:
          mode: Prefer
          cooldowns: {ToolFailure: 0s}
        """);
    f.kubelet.script("ev",
        Run.exit(1, "Error", "temporary_error: tool crashed").after(Duration.ofMillis(400))
            .heartbeat(Duration.ofMillis(50), "respawn.dev/checkpoint", "ckpt-17",
                "respawn.dev/checkpoint-status", "in_progress", "respawn.dev/step-idempotent", "true"),
        Run.runForever());
    f.instance("ev", "ev");
    f.awaitInstance("ev", i -> at(i, 2, Phase.Running));
    assertThat(env(f.pod("ev-2"))).contains("RESPAWN_RESUME_CHECKPOINT=ckpt-17");
    await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> assertThat(f.events("ev"))
        .as("Events regarding ev").filteredOn(e -> "ResumeDecision".equals(e.getReason()))
        .singleElement().satisfies(e -> assertThat(e.getNote()).contains("Resumed ev from checkpoint ckpt-17",
            "RestartStarted: Restart started for ev: pod ev-2 replaces ev-1")));
  }

  /**
   * Instance {@code name} under resume mode {@code mode}: run 1 leaves ckpt-17 on the Lease and fails, run 2 fails
   * before its first renewal, run 3 runs on.
   */
  private void checkpointThenAFailureBeforeRenewing(String name, String mode) {
    f.policy(name, """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
        resume:
          mode: %s
          cooldowns: {ToolFailure: 0s}
        """.formatted(mode));
    f.kubelet.script(name,
        Run.exit(1, "Error", "temporary_error: tool crashed").after(Duration.ofMillis(400))
            .heartbeat(Duration.ofMillis(50), "respawn.dev/checkpoint", "ckpt-17",
                "respawn.dev/checkpoint-status", "in_progress", "respawn.dev/step-idempotent", "true"),
        Run.exit(1, "Error", "temporary_error: tool crashed again").after(Duration.ofMillis(300)),
        Run.runForever());
    f.instance(name, name);
  }
}

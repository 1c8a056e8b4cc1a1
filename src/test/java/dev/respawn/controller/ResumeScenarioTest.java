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
import java.time.Duration;
import java.time.Instant;
import java.util.List;
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
}

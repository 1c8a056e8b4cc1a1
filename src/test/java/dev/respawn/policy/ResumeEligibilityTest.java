package dev.respawn.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.api.v1alpha1.HealthVerdict;
import dev.respawn.api.v1alpha1.InterruptionClass;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ResumeEligibilityTest {
  static final RestartPolicy.ResumeSettings SETTINGS = AgentSim.policy(new AgentRestartPolicySpec()).resume();

  static LeaseView lease(String checkpoint, String status, Boolean idempotent, Boolean artifacts) {
    return new LeaseView(Instant.EPOCH, Instant.EPOCH, HealthVerdict.Healthy, null, checkpoint, status, idempotent,
        artifacts);
  }

  /** All seven reason codes of api.md §7. */
  @ParameterizedTest(name = "{6}")
  @CsvSource(nullValues = "-", value = {
      "ToolFailure, ckpt-1, in_progress, true, true, 0, resume_blocked_cooldown, true, 30",
      "ToolFailure, ckpt-1, failed, true, -, 0, resume_blocked_cooldown, true, 30",
      "Unknown, ckpt-1, in_progress, true, true, 0, resume_unknown_interruption_class, false, 0",
      "ToolFailure, -, in_progress, true, true, 0, resume_missing_checkpoint, false, 0",
      "ToolFailure, ckpt-1, complete, true, true, 0, resume_missing_checkpoint, false, 0",
      "ToolFailure, '', in_progress, true, true, 0, resume_missing_checkpoint, false, 0",
      "ToolFailure, ckpt-1, in_progress, false, true, 0, resume_non_idempotent_step, false, 0",
      "ToolFailure, ckpt-1, in_progress, -, true, 0, resume_non_idempotent_step, false, 0",
      "ToolFailure, ckpt-1, in_progress, true, false, 0, resume_missing_runtime_artifacts, false, 0",
      "ToolFailure, ckpt-1, in_progress, true, true, 3, resume_attempt_limit_reached, false, 0",
  })
  void reasonCodes(InterruptionClass cls, String checkpoint, String status, Boolean idempotent, Boolean artifacts,
      int attempts, String code, boolean eligible, long cooldownSeconds) {
    var v = ResumeEligibility.evaluate(SETTINGS, cls, lease(checkpoint, status, idempotent, artifacts), attempts,
        Duration.ofSeconds(2));
    assertThat(v.reasonCode().code()).isEqualTo(code);
    assertThat(v.eligible()).isEqualTo(eligible);
    assertThat(v.cooldown()).isEqualTo(Duration.ofSeconds(cooldownSeconds));
  }

  @Test
  void allowedWhenTheDelayAlreadyCoversTheCooldown() {
    var v = ResumeEligibility.evaluate(SETTINGS, InterruptionClass.ContextReset, lease("c", "in_progress", true, true),
        1, Duration.ofSeconds(10));
    assertThat(v.reasonCode()).isEqualTo(dev.respawn.policy.ReasonCode.RESUME_ALLOWED);
    assertThat(v.eligible()).isTrue();
  }

  @Test
  void noLeaseMeansNoCheckpoint() {
    assertThat(ResumeEligibility.evaluate(SETTINGS, InterruptionClass.Timeout, null, 0, Duration.ZERO).reasonCode())
        .isEqualTo(dev.respawn.policy.ReasonCode.RESUME_MISSING_CHECKPOINT);
  }

  @ParameterizedTest
  @CsvSource({"ToolFailure, 30", "Timeout, 120", "ContextReset, 10", "ProcessCrash, 60"})
  void cooldownsPerClass(InterruptionClass cls, long seconds) {
    var v = ResumeEligibility.evaluate(SETTINGS, cls, lease("c", "failed", true, true), 0, Duration.ZERO);
    assertThat(v.cooldown()).isEqualTo(Duration.ofSeconds(seconds));
  }

  /**
   * §5 respawn.dev/checkpoint (<= 256 bytes); README: "A checkpoint longer than api.md's 256 bytes is no checkpoint
   * (resume_missing_checkpoint)". Exactly 256 bytes is a checkpoint.
   */
  @Test
  void aCheckpointOfExactly256BytesIsOneOf257IsNone() {
    var fits = ResumeEligibility.evaluate(SETTINGS, InterruptionClass.ToolFailure,
        lease("c".repeat(256), "in_progress", true, true), 0, Duration.ofMinutes(1));
    assertThat(fits.reasonCode()).isEqualTo(ReasonCode.RESUME_ALLOWED);
    var over = ResumeEligibility.evaluate(SETTINGS, InterruptionClass.ToolFailure,
        lease("c".repeat(257), "in_progress", true, true), 0, Duration.ofMinutes(1));
    assertThat(over.reasonCode()).isEqualTo(ReasonCode.RESUME_MISSING_CHECKPOINT);
    assertThat(over.eligible()).isFalse();
  }

  /** §7: "resume attempts < resume.maxAttempts": one below the limit is still eligible. */
  @Test
  void theLastResumeAttemptBelowTheLimitIsStillEligible() {
    var last = ResumeEligibility.evaluate(SETTINGS, InterruptionClass.ToolFailure, lease("c", "in_progress", true, true),
        SETTINGS.maxAttempts() - 1, Duration.ofMinutes(1));
    assertThat(last.reasonCode()).isEqualTo(ReasonCode.RESUME_ALLOWED);
  }
}

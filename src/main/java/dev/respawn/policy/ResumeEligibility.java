package dev.respawn.policy;

import dev.respawn.api.v1alpha1.InterruptionClass;
import dev.respawn.policy.RestartPolicy.ResumeSettings;
import java.time.Duration;

/** Resume eligibility of api.md §7, with its seven reason codes. */
public final class ResumeEligibility {

  private ResumeEligibility() {}

  /**
   * The verdict. eligible is true for {@code resume_allowed} and {@code resume_blocked_cooldown}
   * (a cool-down delays a resume, it does not forbid it); cooldown is the class's minimum delay.
   *
   * @param lease the heartbeat Lease's checkpoint annotations, or null when no Lease was seen
   * @param delay the delay the restart would have anyway (backoff and rule cool-down)
   */
  public static Verdict evaluate(ResumeSettings settings, InterruptionClass cls, LeaseView lease, int attempts,
      Duration delay) {
    Duration cooldown = settings.cooldown(cls);
    if (cls == InterruptionClass.Unknown) {
      return new Verdict(false, ReasonCode.RESUME_UNKNOWN_INTERRUPTION_CLASS, Duration.ZERO);
    }
    // one longer than api.md §5 allows (256 bytes) names no checkpoint the agent can be handed: none, fail-closed
    if (lease == null || lease.checkpoint() == null || lease.checkpoint().isEmpty()
        || !Bounds.fitsUtf8(lease.checkpoint(), Bounds.CHECKPOINT_BYTES)
        || !("in_progress".equals(lease.checkpointStatus()) || "failed".equals(lease.checkpointStatus()))) {
      return new Verdict(false, ReasonCode.RESUME_MISSING_CHECKPOINT, Duration.ZERO);
    }
    if (!Boolean.TRUE.equals(lease.stepIdempotent())) {
      return new Verdict(false, ReasonCode.RESUME_NON_IDEMPOTENT_STEP, Duration.ZERO);
    }
    if (Boolean.FALSE.equals(lease.artifactsReady())) {
      return new Verdict(false, ReasonCode.RESUME_MISSING_RUNTIME_ARTIFACTS, Duration.ZERO);
    }
    if (attempts >= settings.maxAttempts()) {
      return new Verdict(false, ReasonCode.RESUME_ATTEMPT_LIMIT_REACHED, Duration.ZERO);
    }
    if (cooldown.compareTo(delay) > 0) {
      return new Verdict(true, ReasonCode.RESUME_BLOCKED_COOLDOWN, cooldown);
    }
    return new Verdict(true, ReasonCode.RESUME_ALLOWED, cooldown);
  }

  /** eligible: the restart resumes from the checkpoint; cooldown: the minimum delay before it. */
  public record Verdict(boolean eligible, ReasonCode reasonCode, Duration cooldown) {}
}

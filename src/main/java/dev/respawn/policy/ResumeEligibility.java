package dev.respawn.policy;

import dev.respawn.api.v1alpha1.InterruptionClass;
import dev.respawn.policy.RestartPolicy.ResumeSettings;
import java.time.Duration;

/** Resume eligibility of api.md §7, with its seven reason codes. */
public final class ResumeEligibility {
  public static final String ALLOWED = "resume_allowed";
  public static final String MISSING_CHECKPOINT = "resume_missing_checkpoint";
  public static final String UNKNOWN_CLASS = "resume_unknown_interruption_class";
  public static final String NON_IDEMPOTENT = "resume_non_idempotent_step";
  public static final String MISSING_ARTIFACTS = "resume_missing_runtime_artifacts";
  public static final String BLOCKED_COOLDOWN = "resume_blocked_cooldown";
  public static final String ATTEMPT_LIMIT = "resume_attempt_limit_reached";

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
      return new Verdict(false, UNKNOWN_CLASS, Duration.ZERO);
    }
    if (lease == null || lease.checkpoint() == null || lease.checkpoint().isEmpty()
        || !("in_progress".equals(lease.checkpointStatus()) || "failed".equals(lease.checkpointStatus()))) {
      return new Verdict(false, MISSING_CHECKPOINT, Duration.ZERO);
    }
    if (!Boolean.TRUE.equals(lease.stepIdempotent())) {
      return new Verdict(false, NON_IDEMPOTENT, Duration.ZERO);
    }
    if (Boolean.FALSE.equals(lease.artifactsReady())) {
      return new Verdict(false, MISSING_ARTIFACTS, Duration.ZERO);
    }
    if (attempts >= settings.maxAttempts()) {
      return new Verdict(false, ATTEMPT_LIMIT, Duration.ZERO);
    }
    if (cooldown.compareTo(delay) > 0) {
      return new Verdict(true, BLOCKED_COOLDOWN, cooldown);
    }
    return new Verdict(true, ALLOWED, cooldown);
  }

  /** eligible: the restart resumes from the checkpoint; cooldown: the minimum delay before it. */
  public record Verdict(boolean eligible, String reasonCode, Duration cooldown) {}
}

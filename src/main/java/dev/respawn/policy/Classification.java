package dev.respawn.policy;

import dev.respawn.api.v1alpha1.FailureAction;
import dev.respawn.api.v1alpha1.InterruptionClass;
import java.time.Duration;
import java.util.Optional;

/**
 * A classified failure: its interruption class and finer failure reason (§4), the action that
 * applies (from the first matching rule, a custom evaluator, or the built-in table), the retry
 * limit for this failure and the rule's minimum delay.
 */
public record Classification(InterruptionClass interruptionClass, String failureReason, FailureAction action,
    String rule, int maxRetries, Optional<Duration> cooldown) {

  /** False for a failure no rule retries: action Fail, or class Unknown, which escalates (api.md §3 c). */
  public boolean retryable() {
    return action != FailureAction.Fail && interruptionClass != InterruptionClass.Unknown;
  }
}

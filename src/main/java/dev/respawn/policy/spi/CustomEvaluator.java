package dev.respawn.policy.spi;

import dev.respawn.api.v1alpha1.FailureAction;
import dev.respawn.api.v1alpha1.InterruptionClass;
import dev.respawn.policy.RunEnding;
import java.time.Duration;
import java.util.Optional;

/**
 * A custom failure evaluator (Enterprise tier only), found with {@link java.util.ServiceLoader}:
 * list the implementation in {@code META-INF/services/dev.respawn.policy.spi.CustomEvaluator} on
 * the operator's class path. Evaluators are consulted in class-path order for failures that no
 * user rule matched, before the built-in table. Implementations must be pure and deterministic:
 * the same ending must always give the same verdict.
 */
public interface CustomEvaluator {
  /** A short name, recorded as {@code evaluator:<name>} in status.lastFailure.rule. */
  String name();

  /** A verdict for this failure, or empty to leave it to the next evaluator and the built-in table. */
  Optional<Verdict> evaluate(RunEnding ending, InterruptionClass builtInClass);

  /** What to do with the failure, and an optional minimum delay before its restart. */
  record Verdict(FailureAction action, Optional<Duration> cooldown) {}
}

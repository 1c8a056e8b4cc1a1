package dev.respawn.policy;

import dev.respawn.api.v1alpha1.FailureAction;
import dev.respawn.api.v1alpha1.InterruptionClass;
import dev.respawn.policy.spi.CustomEvaluator;
import java.time.Duration;
import java.util.Optional;

/** A custom evaluator registered through META-INF/services in the test class path. */
public class QuotaEvaluator implements CustomEvaluator {
  @Override
  public String name() {
    return "quota";
  }

  @Override
  public Optional<Verdict> evaluate(RunEnding ending, InterruptionClass builtInClass) {
    if (ending.message() != null && ending.message().contains("quota_exceeded")) {
      return Optional.of(new Verdict(FailureAction.Retry, Optional.of(Duration.ofMinutes(15))));
    }
    return Optional.empty();
  }
}

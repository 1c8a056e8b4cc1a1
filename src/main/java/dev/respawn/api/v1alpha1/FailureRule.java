package dev.respawn.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.crd.generator.annotation.SchemaFrom;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/** One ordered failure rule; the first rule whose match holds decides. */
// An unchanged value passes: duration() fails on a value past 2562047h, and Kubernetes lets an unchanged value
// past a rule that is false but not past one that fails, so an object stored before this rule would refuse every
// later apply and the operator's status write (its InvalidSpec refusal).
@ValidationRule(
    value = "oldSelf.hasValue() && has(oldSelf.value().cooldown) && has(self.cooldown) "
        + "&& oldSelf.value().cooldown == self.cooldown "
        + "|| !has(self.cooldown) || duration(self.cooldown) >= duration('0s')",
    optionalOldSelf = true,
    message = "a failure rule's cooldown must be a duration of at most 2562047h",
    fieldPath = ".cooldown",
    reason = "FieldValueInvalid")
public class FailureRule {
  @JsonPropertyDescription("Name of the rule, unique within the policy; recorded in status.lastFailure.rule.")
  @Required
  @Size(min = 1, max = 63)
  public String name;

  @JsonPropertyDescription("Criteria; every listed criterion must hold. An empty match matches every failure.")
  public FailureMatch match;

  @JsonPropertyDescription("Retry (restart with backoff), Fail (no restart, phase Failed) or Ignore "
      + "(restart at once, not counted as a failure).")
  @Required
  @SchemaFrom(type = FailureAction.class)
  public String action;

  @JsonPropertyDescription("Overrides spec.maxRetries (and the built-in caps) for failures this rule matches, 0..1000.")
  @Min(0)
  @Max(1000)
  public Integer maxRetries;

  @JsonPropertyDescription("Minimum delay before restarting a failure this rule matches (Go duration).")
  @Pattern(Durations.PATTERN)
  @Size(max = Durations.MAX_LENGTH)
  public String cooldown;
}

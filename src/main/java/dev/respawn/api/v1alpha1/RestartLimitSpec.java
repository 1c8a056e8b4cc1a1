package dev.respawn.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

@ValidationRule(
    value = "duration(self.window) > duration('0s')",
    message = "spec.restartLimit.window must be greater than 0 and at most 2562047h",
    fieldPath = ".window",
    reason = "FieldValueInvalid")
public class RestartLimitSpec {
  @JsonPropertyDescription("Most restarts of any kind allowed inside the sliding window, 1..1000.")
  @Required
  @Min(1)
  @Max(1000)
  public Integer maxRestarts;

  @JsonPropertyDescription("Length of the sliding window (Go duration, e.g. 1h).")
  @Required
  @Pattern(Durations.PATTERN)
  @Size(max = Durations.MAX_LENGTH)
  public String window;
}

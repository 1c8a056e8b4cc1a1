package dev.respawn.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.crd.generator.annotation.SchemaFrom;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

@ValidationRule(
    value = "!has(self.initialDelay) || !has(self.maxDelay) || duration(self.maxDelay) >= duration(self.initialDelay)",
    message = "spec.backoff.maxDelay must be >= spec.backoff.initialDelay (maxDelay defaults to 120s; both at most "
        + "2562047h)",
    fieldPath = ".maxDelay",
    reason = "FieldValueInvalid")
public class BackoffSpec {
  @JsonPropertyDescription("Backoff type: None (never restart a failure), Immediate (no delay), "
      + "Linear (initialDelay * n) or Exponential (initialDelay * multiplier^(n-1)). Default Exponential.")
  @Default("Exponential")
  @SchemaFrom(type = BackoffType.class)
  public String type;

  @JsonPropertyDescription("Delay before the first restart of a failure sequence (Go duration, e.g. 2s); at most "
      + "maxDelay (which defaults to 120s: a longer initialDelay needs a maxDelay too). Default 2s.")
  @Default("2s")
  @Pattern(Durations.PATTERN)
  @Size(max = Durations.MAX_LENGTH)
  public String initialDelay;

  @JsonPropertyDescription("Growth factor per attempt for Exponential backoff, 1.0..10.0. Default 2.0.")
  @Default("2.0")
  @Min(1.0)
  @Max(10.0)
  public Double multiplier;

  @JsonPropertyDescription("Cap on the delay before jitter (Go duration); must be >= initialDelay. Default 120s.")
  @Default("120s")
  @Pattern(Durations.PATTERN)
  @Size(max = Durations.MAX_LENGTH)
  public String maxDelay;

  @JsonPropertyDescription("Jitter fraction 0..1: the capped delay is multiplied by a uniform factor in "
      + "[1-jitter, 1+jitter]. Default 0 (no jitter).")
  @Default("0.0")
  @Min(0.0)
  @Max(1.0)
  public Double jitter;
}

package dev.respawn.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

@ValidationRule(
    value = "!has(self.window) || duration(self.window) > duration('0s')",
    message = "spec.circuitBreaker.window must be greater than 0 and at most 2562047h",
    fieldPath = ".window",
    reason = "FieldValueInvalid")
@ValidationRule(
    value = "!has(self.openDuration) || duration(self.openDuration) > duration('0s')",
    message = "spec.circuitBreaker.openDuration must be greater than 0 and at most 2562047h",
    fieldPath = ".openDuration",
    reason = "FieldValueInvalid")
public class CircuitBreakerSpec {
  @JsonPropertyDescription("Failures within the window that open the circuit, 1..100. Default 5.")
  @Default("5")
  @Min(1)
  @Max(100)
  public Integer failureThreshold;

  @JsonPropertyDescription("Failures older than this are forgotten (Go duration). Default 10m.")
  @Default("10m")
  @Pattern(Durations.PATTERN)
  @Size(max = Durations.MAX_LENGTH)
  public String window;

  @JsonPropertyDescription("How long the circuit stays Open before a HalfOpen trial run (Go duration). Default 5m.")
  @Default("5m")
  @Pattern(Durations.PATTERN)
  @Size(max = Durations.MAX_LENGTH)
  public String openDuration;

  @JsonPropertyDescription("true: once Open the circuit never closes by itself; only a resume request continues. Default false.")
  @Default("false")
  public Boolean latch;
}

package dev.respawn.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/** Something every instance of the policy uses (a model API, a tool server): one circuit for the fleet. */
@ValidationRule(
    value = "!has(self.window) || duration(self.window) > duration('0s')",
    message = "spec.dependencies[].window must be greater than 0 and at most 2562047h",
    fieldPath = ".window",
    reason = "FieldValueInvalid")
@ValidationRule(
    value = "!has(self.openDuration) || duration(self.openDuration) > duration('0s')",
    message = "spec.dependencies[].openDuration must be greater than 0 and at most 2562047h",
    fieldPath = ".openDuration",
    reason = "FieldValueInvalid")
public class DependencySpec {
  @JsonPropertyDescription("Name of the dependency (a DNS-1123 label), unique within the policy; shown in "
      + "status.waitingFor of the instances that wait for it.")
  @Required
  @Size(min = 1, max = 63)
  @Pattern("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
  public String name;

  @JsonPropertyDescription("Which failures are blamed on it: the criteria of failureRules[].match. Checked after "
      + "failureRules chose the action, for action Retry only; the first dependency that matches is blamed.")
  @Required
  public FailureMatch match;

  @JsonPropertyDescription("Distinct instances blamed within window that open the circuit, 1..1000. Default 3.")
  @Default("3")
  @Min(1)
  @Max(1000)
  public Integer failureThreshold;

  @JsonPropertyDescription("Blamed failures older than this are forgotten (Go duration). Default 1m.")
  @Default("1m")
  @Pattern(Durations.PATTERN)
  @Size(max = Durations.MAX_LENGTH)
  public String window;

  @JsonPropertyDescription("How long the circuit stays Open before probe instances are restarted (Go duration). "
      + "Default 30s.")
  @Default("30s")
  @Pattern(Durations.PATTERN)
  @Size(max = Durations.MAX_LENGTH)
  public String openDuration;

  @JsonPropertyDescription("Instances restarted as probes in HalfOpen, 1..100. Default 1.")
  @Default("1")
  @Min(1)
  @Max(100)
  public Integer probes;

  @JsonPropertyDescription("Waiting instances restarted per second once the circuit closes, 0..10000; 0 = no limit. "
      + "Default 5.")
  @Default("5")
  @Min(0)
  @Max(10000)
  public Double releaseRate;
}

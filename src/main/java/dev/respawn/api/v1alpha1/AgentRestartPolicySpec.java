package dev.respawn.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonClassDescription;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.List;

@JsonClassDescription("Restart rules for the AgentInstances that reference this policy.")
@ValidationRule(
    value = "!has(self.resetAfter) || duration(self.resetAfter) > duration('0s')",
    message = "spec.resetAfter must be greater than 0 and at most 2562047h",
    fieldPath = ".resetAfter",
    reason = "FieldValueInvalid")
public class AgentRestartPolicySpec {
  @JsonPropertyDescription("How the delay before a restart grows with the attempt number.")
  @Default("{}")
  public BackoffSpec backoff;

  @JsonPropertyDescription("Restarts allowed per failure sequence, 0..1000. Default 3.")
  @Default("3")
  @Min(0)
  @Max(1000)
  public Integer maxRetries;

  @JsonPropertyDescription("A run healthy this long ends the failure sequence: attempt back to 0, "
      + "circuit Closed (Go duration). Default 60s.")
  @Default("60s")
  @Pattern(Durations.PATTERN)
  @Size(max = Durations.MAX_LENGTH)
  public String resetAfter;

  @JsonPropertyDescription("Sliding window over all restarts, of every kind. Omitted: no window limit.")
  public RestartLimitSpec restartLimit;

  @JsonPropertyDescription("Circuit breaker over failures: Closed, Open after failureThreshold failures "
      + "within window, HalfOpen trial after openDuration.")
  @Default("{}")
  public CircuitBreakerSpec circuitBreaker;

  @JsonPropertyDescription("Ordered failure rules; the first match wins; unmatched failures use the "
      + "built-in classification table.")
  @Size(max = 64)
  @ValidationRule(
      value = "self.all(r, self.exists_one(o, o.name == r.name))",
      message = "spec.failureRules[].name must be unique",
      reason = "FieldValueInvalid")
  public List<FailureRule> failureRules;

  @JsonPropertyDescription("Heartbeat (Lease) requirements of the agent.")
  public PolicyHeartbeatSpec heartbeat;

  @JsonPropertyDescription("Exit code that means \"restart me\": restarts at once, not a failure, 1..255. Default 42.")
  @Default("42")
  @Min(1)
  @Max(255)
  public Integer restartRequestExitCode;

  @JsonPropertyDescription("Dependencies every instance of the policy uses (a model API, a tool server, a "
      + "database): failures blamed on one share one circuit for the whole fleet (api.md §11).")
  @Size(max = 16)
  @ValidationRule(
      value = "self.all(d, self.exists_one(o, o.name == d.name))",
      message = "spec.dependencies[].name must be unique",
      reason = "FieldValueInvalid")
  @ValidationRule(
      value = "self.map(d, has(d.failureThreshold) ? d.failureThreshold : 3).sum() <= 4000",
      message = "spec.dependencies[].failureThreshold must add up to at most 4000 over all dependencies (the "
          + "policy's status keeps the latest blame of up to failureThreshold instances per dependency)",
      reason = "FieldValueInvalid")
  public List<DependencySpec> dependencies;

  @JsonPropertyDescription("Resume-from-checkpoint rules.")
  @Default("{}")
  public ResumeSpec resume;
}

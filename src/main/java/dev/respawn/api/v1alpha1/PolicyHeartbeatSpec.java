package dev.respawn.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

@ValidationRule(
    value = "!has(self.timeout) || duration(self.timeout) > duration('0s')",
    message = "spec.heartbeat.timeout must be greater than 0",
    fieldPath = ".timeout",
    reason = "FieldValueInvalid")
@ValidationRule(
    value = "!has(self.startupGrace) || duration(self.startupGrace) >= duration('0s')",
    message = "spec.heartbeat.startupGrace must be a duration of at most 2562047h",
    fieldPath = ".startupGrace",
    reason = "FieldValueInvalid")
public class PolicyHeartbeatSpec {
  @JsonPropertyDescription("A heartbeat older than this is stale and ends the run (Go duration). "
      + "Omit to not require heartbeats.")
  @Pattern(Durations.PATTERN)
  @Size(max = Durations.MAX_LENGTH)
  public String timeout;

  @JsonPropertyDescription("Time after the pod starts before the first heartbeat is due, and how long a pod "
      + "may take to start before that counts as a failure (Go duration). Default: the timeout.")
  @Pattern(Durations.PATTERN)
  @Size(max = Durations.MAX_LENGTH)
  public String startupGrace;
}

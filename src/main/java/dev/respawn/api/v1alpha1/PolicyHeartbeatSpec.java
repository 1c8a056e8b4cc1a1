package dev.respawn.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

@ValidationRule(
    value = "!has(self.timeout) || duration(self.timeout) > duration('0s')",
    message = "spec.heartbeat.timeout must be greater than 0 and at most 2562047h",
    fieldPath = ".timeout",
    reason = "FieldValueInvalid")
// An unchanged value passes: duration() fails on a value past 2562047h, and Kubernetes lets an unchanged value
// past a rule that is false but not past one that fails, so an object stored before this rule would refuse every
// later apply and the operator's status write (its InvalidSpec refusal).
@ValidationRule(
    value = "oldSelf.hasValue() && has(oldSelf.value().startupGrace) && has(self.startupGrace) "
        + "&& oldSelf.value().startupGrace == self.startupGrace "
        + "|| !has(self.startupGrace) || duration(self.startupGrace) >= duration('0s')",
    optionalOldSelf = true,
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

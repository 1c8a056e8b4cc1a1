package dev.respawn.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/**
 * Minimum delay before a resume, per interruption class: one field per class that can be resumed
 * (every class but Unknown, which escalates). A new class gets its field, its default and its case
 * below; the compiler and the sandbox read them through {@link #of} and {@link #defaultOf}.
 */
// An unchanged value passes: duration() fails on a value past 2562047h, and Kubernetes lets an unchanged value
// past a rule that is false but not past one that fails, so an object stored before this rule would refuse every
// later apply and the operator's status write (its InvalidSpec refusal).
@ValidationRule(
    value = "oldSelf.hasValue() && has(oldSelf.value().ToolFailure) && has(self.ToolFailure) "
        + "&& oldSelf.value().ToolFailure == self.ToolFailure "
        + "|| !has(self.ToolFailure) || duration(self.ToolFailure) >= duration('0s')",
    optionalOldSelf = true,
    message = "spec.resume.cooldowns.ToolFailure must be a duration of at most 2562047h",
    fieldPath = ".ToolFailure",
    reason = "FieldValueInvalid")
@ValidationRule(
    value = "oldSelf.hasValue() && has(oldSelf.value().Timeout) && has(self.Timeout) "
        + "&& oldSelf.value().Timeout == self.Timeout "
        + "|| !has(self.Timeout) || duration(self.Timeout) >= duration('0s')",
    optionalOldSelf = true,
    message = "spec.resume.cooldowns.Timeout must be a duration of at most 2562047h",
    fieldPath = ".Timeout",
    reason = "FieldValueInvalid")
@ValidationRule(
    value = "oldSelf.hasValue() && has(oldSelf.value().ContextReset) && has(self.ContextReset) "
        + "&& oldSelf.value().ContextReset == self.ContextReset "
        + "|| !has(self.ContextReset) || duration(self.ContextReset) >= duration('0s')",
    optionalOldSelf = true,
    message = "spec.resume.cooldowns.ContextReset must be a duration of at most 2562047h",
    fieldPath = ".ContextReset",
    reason = "FieldValueInvalid")
@ValidationRule(
    value = "oldSelf.hasValue() && has(oldSelf.value().ProcessCrash) && has(self.ProcessCrash) "
        + "&& oldSelf.value().ProcessCrash == self.ProcessCrash "
        + "|| !has(self.ProcessCrash) || duration(self.ProcessCrash) >= duration('0s')",
    optionalOldSelf = true,
    message = "spec.resume.cooldowns.ProcessCrash must be a duration of at most 2562047h",
    fieldPath = ".ProcessCrash",
    reason = "FieldValueInvalid")
public class ResumeCooldowns {
  static final String TOOL_FAILURE = "30s";
  static final String TIMEOUT = "120s";
  static final String CONTEXT_RESET = "10s";
  static final String PROCESS_CRASH = "60s";

  @JsonProperty("ToolFailure")
  @JsonPropertyDescription("Cool-down before resuming after a ToolFailure (Go duration). Default 30s.")
  @Default(TOOL_FAILURE)
  @Pattern(Durations.PATTERN)
  @Size(max = Durations.MAX_LENGTH)
  public String toolFailure;

  @JsonProperty("Timeout")
  @JsonPropertyDescription("Cool-down before resuming after a Timeout (Go duration). Default 120s.")
  @Default(TIMEOUT)
  @Pattern(Durations.PATTERN)
  @Size(max = Durations.MAX_LENGTH)
  public String timeout;

  @JsonProperty("ContextReset")
  @JsonPropertyDescription("Cool-down before resuming after a ContextReset (Go duration). Default 10s.")
  @Default(CONTEXT_RESET)
  @Pattern(Durations.PATTERN)
  @Size(max = Durations.MAX_LENGTH)
  public String contextReset;

  @JsonProperty("ProcessCrash")
  @JsonPropertyDescription("Cool-down before resuming after a ProcessCrash (Go duration). Default 60s.")
  @Default(PROCESS_CRASH)
  @Pattern(Durations.PATTERN)
  @Size(max = Durations.MAX_LENGTH)
  public String processCrash;

  /** The cool-down set for this class (null: its default). */
  public String of(InterruptionClass c) {
    return switch (c) {
      case ToolFailure -> toolFailure;
      case Timeout -> timeout;
      case ContextReset -> contextReset;
      case ProcessCrash -> processCrash;
      case Unknown -> null;
    };
  }

  /** Sets the cool-down of a class that has one. */
  public void set(InterruptionClass c, String value) {
    switch (c) {
      case ToolFailure -> toolFailure = value;
      case Timeout -> timeout = value;
      case ContextReset -> contextReset = value;
      case ProcessCrash -> processCrash = value;
      case Unknown -> throw new IllegalArgumentException("an Unknown interruption is never resumed");
    }
  }

  /** The default cool-down of a class, empty for a class that is never resumed (Unknown). */
  public static java.util.Optional<String> defaultOf(InterruptionClass c) {
    return java.util.Optional.ofNullable(switch (c) {
      case ToolFailure -> TOOL_FAILURE;
      case Timeout -> TIMEOUT;
      case ContextReset -> CONTEXT_RESET;
      case ProcessCrash -> PROCESS_CRASH;
      case Unknown -> null;
    });
  }
}

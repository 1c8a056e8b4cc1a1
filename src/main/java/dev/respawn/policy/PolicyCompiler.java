package dev.respawn.policy;

import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.api.v1alpha1.BackoffSpec;
import dev.respawn.api.v1alpha1.BackoffType;
import dev.respawn.api.v1alpha1.CircuitBreakerSpec;
import dev.respawn.api.v1alpha1.FailureAction;
import dev.respawn.api.v1alpha1.FailureMatch;
import dev.respawn.api.v1alpha1.FailureRule;
import dev.respawn.api.v1alpha1.InterruptionClass;
import dev.respawn.api.v1alpha1.PolicyHeartbeatSpec;
import dev.respawn.api.v1alpha1.ResumeCooldowns;
import dev.respawn.api.v1alpha1.ResumeMode;
import dev.respawn.api.v1alpha1.ResumeSpec;
import dev.respawn.policy.RestartPolicy.BackoffSettings;
import dev.respawn.policy.RestartPolicy.CircuitSettings;
import dev.respawn.policy.RestartPolicy.HeartbeatSettings;
import dev.respawn.policy.RestartPolicy.RestartLimit;
import dev.respawn.policy.RestartPolicy.ResumeSettings;
import dev.respawn.policy.RestartPolicy.Rule;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Turns a user's AgentRestartPolicy spec into a {@link RestartPolicy}: fills in the defaults of
 * api.md §1 and re-checks every rule the CRD schema enforces (a spec can bypass it: older clusters,
 * disabled validation), so an invalid policy is refused with the field and the rule and never
 * restarts anything.
 */
public final class PolicyCompiler {
  final List<Violation> violations = new ArrayList<>();

  private PolicyCompiler() {}

  /** Compiles a spec (null means {@code spec: {}}). */
  public static RestartPolicy compile(AgentRestartPolicySpec spec) throws PolicyInvalidException {
    PolicyCompiler c = new PolicyCompiler();
    RestartPolicy policy = c.build(spec == null ? new AgentRestartPolicySpec() : spec);
    if (!c.violations.isEmpty()) {
      throw new PolicyInvalidException(c.violations);
    }
    return policy;
  }

  private RestartPolicy build(AgentRestartPolicySpec spec) {
    BackoffSettings backoff = backoff(spec.backoff == null ? new BackoffSpec() : spec.backoff);
    int maxRetries = range("spec.maxRetries", spec.maxRetries, 3, 0, Bounds.MAX_RETRIES);
    Duration resetAfter = spec.resetAfter == null ? Duration.ofSeconds(60) : positive("spec.resetAfter", spec.resetAfter);
    Optional<RestartLimit> limit = Optional.empty();
    if (spec.restartLimit != null) {
      Integer max = required("spec.restartLimit.maxRestarts", spec.restartLimit.maxRestarts);
      String window = required("spec.restartLimit.window", spec.restartLimit.window);
      int m = max == null ? 1 : range("spec.restartLimit.maxRestarts", max, 1, 1, Bounds.MAX_RESTARTS);
      Duration w = window == null ? Duration.ZERO : positive("spec.restartLimit.window", window);
      limit = Optional.of(new RestartLimit(m, w));
    }
    CircuitSettings circuit = circuit(spec.circuitBreaker == null ? new CircuitBreakerSpec() : spec.circuitBreaker);
    List<Rule> rules = rules(spec.failureRules == null ? List.of() : spec.failureRules);
    HeartbeatSettings heartbeat = heartbeat(spec.heartbeat == null ? new PolicyHeartbeatSpec() : spec.heartbeat);
    int exitCode = range("spec.restartRequestExitCode", spec.restartRequestExitCode, 42, 1, 255);
    ResumeSettings resume = resume(spec.resume == null ? new ResumeSpec() : spec.resume);
    List<DependencySettings> dependencies = DependencyRules.compile(this, spec.dependencies == null ? List.of()
        : spec.dependencies);
    return new RestartPolicy(backoff, maxRetries, resetAfter, limit, circuit, rules, heartbeat, exitCode, resume,
        dependencies);
  }

  private BackoffSettings backoff(BackoffSpec b) {
    BackoffType type = enumValue("spec.backoff.type", b.type, BackoffType.class, BackoffType.Exponential);
    Duration initial = duration("spec.backoff.initialDelay", b.initialDelay, "2s");
    double multiplier = range("spec.backoff.multiplier", b.multiplier, 2.0, 1.0, 10.0);
    Duration max = duration("spec.backoff.maxDelay", b.maxDelay, "120s");
    double jitter = range("spec.backoff.jitter", b.jitter, 0.0, 0.0, 1.0);
    if (max.compareTo(initial) < 0) {
      violations.add(new Violation("spec.backoff.maxDelay", "must be >= spec.backoff.initialDelay"));
    }
    return new BackoffSettings(type, initial, multiplier, max, jitter);
  }

  private CircuitSettings circuit(CircuitBreakerSpec c) {
    int threshold = range("spec.circuitBreaker.failureThreshold", c.failureThreshold, 5, 1,
        Bounds.MAX_FAILURE_THRESHOLD);
    Duration window = c.window == null ? Duration.ofMinutes(10) : positive("spec.circuitBreaker.window", c.window);
    Duration open = c.openDuration == null ? Duration.ofMinutes(5)
        : positive("spec.circuitBreaker.openDuration", c.openDuration);
    return new CircuitSettings(threshold, window, open, Boolean.TRUE.equals(c.latch));
  }

  private List<Rule> rules(List<FailureRule> specs) {
    if (specs.size() > 64) {
      violations.add(new Violation("spec.failureRules", "must have at most 64 rules"));
    }
    List<Rule> rules = new ArrayList<>();
    Set<String> names = new HashSet<>();
    for (int i = 0; i < specs.size(); i++) {
      FailureRule r = specs.get(i);
      String at = "spec.failureRules[" + i + "]";
      if (r == null) {
        violations.add(new Violation(at, "must be an object"));
        continue;
      }
      String name = required(at + ".name", r.name);
      if (name != null && (name.isEmpty() || chars(name) > 63)) {
        violations.add(new Violation(at + ".name", "must be 1..63 characters"));
      } else if (name != null && !names.add(name)) {
        violations.add(new Violation(at + ".name", "must be unique (\"" + name + "\" is used twice)"));
      }
      FailureAction action = r.action == null ? FailureAction.Retry
          : enumValue(at + ".action", r.action, FailureAction.class, FailureAction.Retry);
      required(at + ".action", r.action);
      Optional<Integer> maxRetries = r.maxRetries == null ? Optional.empty()
          : Optional.of(range(at + ".maxRetries", r.maxRetries, 0, 0, Bounds.MAX_RETRIES));
      Optional<Duration> cooldown = r.cooldown == null ? Optional.empty()
          : Optional.of(duration(at + ".cooldown", r.cooldown, "0s"));
      FailureMatch m = r.match == null ? new FailureMatch() : r.match;
      rules.add(new Rule(name == null ? "" : name, exitCodes(at + ".match.exitCodes", m.exitCodes),
          strings(at + ".match.reasons", m.reasons, 32, 0, 128), strings(at + ".match.messageContains",
          m.messageContains, 32, 1, 256), classes(at + ".match.classes", m.classes), action, maxRetries,
          cooldown));
    }
    return rules;
  }

  Set<Integer> exitCodes(String field, List<Integer> codes) {
    Set<Integer> result = new LinkedHashSet<>();
    if (codes == null) {
      return result;
    }
    if (codes.size() > 64) {
      violations.add(new Violation(field, "must have at most 64 entries"));
    }
    for (int i = 0; i < codes.size(); i++) {
      Integer code = codes.get(i);
      if (code == null || code < 0 || code > 255) {
        violations.add(new Violation(field + "[" + i + "]", "must be an exit code 0..255"));
      } else {
        result.add(code);
      }
    }
    return result;
  }

  List<String> strings(String field, List<String> values, int maxItems, int minLength, int maxLength) {
    if (values == null) {
      return List.of();
    }
    if (values.size() > maxItems) {
      violations.add(new Violation(field, "must have at most " + maxItems + " entries"));
    }
    List<String> result = new ArrayList<>();
    for (int i = 0; i < values.size(); i++) {
      String v = values.get(i);
      if (v == null || chars(v) < minLength || chars(v) > maxLength) {
        violations.add(new Violation(field + "[" + i + "]", "must be a string of " + minLength + ".." + maxLength
            + " characters"));
      } else {
        result.add(v);
      }
    }
    return result;
  }

  Set<InterruptionClass> classes(String field, List<String> values) {
    Set<InterruptionClass> result = new HashSet<>();
    if (values == null) {
      return result;
    }
    if (values.size() > FailureMatch.MAX_CLASSES) {
      violations.add(new Violation(field, "must have at most " + FailureMatch.MAX_CLASSES + " entries"));
    }
    for (int i = 0; i < values.size(); i++) {
      InterruptionClass c = enumValue(field + "[" + i + "]", values.get(i), InterruptionClass.class, null);
      if (c != null) {
        result.add(c);
      }
    }
    return result;
  }

  private HeartbeatSettings heartbeat(PolicyHeartbeatSpec h) {
    Optional<Duration> timeout = h.timeout == null ? Optional.empty()
        : Optional.of(positive("spec.heartbeat.timeout", h.timeout));
    Optional<Duration> grace = h.startupGrace == null ? timeout
        : Optional.of(duration("spec.heartbeat.startupGrace", h.startupGrace, "0s"));
    return new HeartbeatSettings(timeout, grace);
  }

  private ResumeSettings resume(ResumeSpec r) {
    ResumeMode mode = enumValue("spec.resume.mode", r.mode, ResumeMode.class, ResumeMode.Prefer);
    int maxAttempts = range("spec.resume.maxAttempts", r.maxAttempts, 3, 0, 1000);
    ResumeCooldowns c = r.cooldowns == null ? new ResumeCooldowns() : r.cooldowns;
    Map<InterruptionClass, Duration> cooldowns = new EnumMap<>(InterruptionClass.class);
    for (InterruptionClass cls : InterruptionClass.values()) {
      ResumeCooldowns.defaultOf(cls).ifPresent(dflt -> cooldowns.put(cls,
          duration("spec.resume.cooldowns." + cls.name(), c.of(cls), dflt)));
    }
    return new ResumeSettings(mode, maxAttempts, cooldowns);
  }

  /** Length in characters (code points), as the API server's schema validation counts it. */
  static int chars(String s) {
    return s.codePointCount(0, s.length());
  }

  <T> T required(String field, T value) {
    if (value == null) {
      violations.add(new Violation(field, "is required"));
    }
    return value;
  }

  int range(String field, Integer value, int dflt, int min, int max) {
    if (value == null) {
      return dflt;
    }
    if (value < min || value > max) {
      violations.add(new Violation(field, "must be between " + min + " and " + max + " (got " + value + ")"));
      return dflt;
    }
    return value;
  }

  double range(String field, Double value, double dflt, double min, double max) {
    if (value == null) {
      return dflt;
    }
    if (!(value >= min && value <= max)) {
      violations.add(new Violation(field, "must be between " + min + " and " + max + " (got " + value + ")"));
      return dflt;
    }
    return value;
  }

  Duration duration(String field, String text, String dflt) {
    if (text != null && text.codePointCount(0, text.length()) > dev.respawn.api.v1alpha1.Durations.MAX_LENGTH) {
      violations.add(new Violation(field, "must be at most " + dev.respawn.api.v1alpha1.Durations.MAX_LENGTH
          + " characters"));
      return Duration.ZERO;
    }
    try {
      return GoDuration.parse(text == null ? dflt : text);
    } catch (IllegalArgumentException e) {
      violations.add(new Violation(field, e.getMessage() + " (got \"" + Bounds.truncateUtf8(text, 64) + "\")"));
      return Duration.ZERO;
    }
  }

  Duration positive(String field, String text) {
    int before = violations.size();
    Duration d = duration(field, text, "0s");
    if (violations.size() == before && (d.isZero() || d.isNegative())) {
      violations.add(new Violation(field, "must be greater than 0"));
    }
    return d;
  }

  private <E extends Enum<E>> E enumValue(String field, String text, Class<E> type, E dflt) {
    if (text == null) {
      return dflt;
    }
    for (E e : type.getEnumConstants()) {
      if (e.name().equals(text)) {
        return e;
      }
    }
    List<String> allowed = new ArrayList<>();
    for (E e : type.getEnumConstants()) {
      allowed.add(e.name());
    }
    violations.add(new Violation(field, "must be one of " + String.join(", ", allowed)
        + " (got \"" + Bounds.truncateUtf8(text, 64) + "\")"));
    return dflt;
  }
}

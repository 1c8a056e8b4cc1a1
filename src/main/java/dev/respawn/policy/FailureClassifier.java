package dev.respawn.policy;

import dev.respawn.api.v1alpha1.FailureAction;
import dev.respawn.api.v1alpha1.InterruptionClass;
import dev.respawn.policy.RestartPolicy.Rule;
import dev.respawn.policy.spi.CustomEvaluator;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/** The built-in classification table of api.md §4, refined by the termination message, then user rules. */
public final class FailureClassifier {
  static final List<String> PERMANENT = List.of("syntax_error", "git_conflict", "spec_not_found",
      "invalid_configuration");
  static final List<String> TRANSIENT = List.of("network_timeout", "database_lock", "resource_exhaustion",
      "temporary_error");
  static final int OOM_RETRY_CAP = 2;
  static final int TIMEOUT_RETRY_CAP = 2;

  private FailureClassifier() {}

  /** Classifies a failed run under a policy; rules first, then custom evaluators, then the table. */
  public static Classification classify(RunEnding e, RestartPolicy policy, List<CustomEvaluator> evaluators) {
    BuiltIn b = builtIn(e);
    for (Rule rule : policy.failureRules()) {
      if (matches(rule, e, b.cls)) {
        int max = rule.maxRetries().orElse(Math.min(policy.maxRetries(), b.cap));
        return new Classification(b.cls, b.failureReason, rule.action(), rule.name(), max, rule.cooldown());
      }
    }
    int max = Math.min(policy.maxRetries(), b.cap);
    for (CustomEvaluator evaluator : evaluators) {
      Optional<CustomEvaluator.Verdict> v = evaluator.evaluate(e, b.cls);
      if (v.isPresent()) {
        return new Classification(b.cls, b.failureReason, v.get().action(), "evaluator:" + evaluator.name(), max,
            v.get().cooldown());
      }
    }
    return new Classification(b.cls, b.failureReason, b.permanent ? FailureAction.Fail : FailureAction.Retry, "",
        max, Optional.empty());
  }

  static boolean matches(Rule rule, RunEnding e, InterruptionClass cls) {
    if (!rule.exitCodes().isEmpty() && (e.exitCode() == null || !rule.exitCodes().contains(e.exitCode()))) {
      return false;
    }
    if (!rule.reasons().isEmpty() && (e.reason() == null || !rule.reasons().contains(e.reason()))) {
      return false;
    }
    if (!rule.messageContains().isEmpty()
        && (e.message() == null || rule.messageContains().stream().noneMatch(e.message()::contains))) {
      return false;
    }
    return rule.classes().isEmpty() || rule.classes().contains(cls);
  }

  private record BuiltIn(InterruptionClass cls, String failureReason, boolean permanent, int cap) {}

  private static BuiltIn builtIn(RunEnding e) {
    // only a container's termination message refines the class (api.md §4); a heartbeat ending's message is the
    // agent's detail, a vanished pod's is the operator's own words
    String message = e.message() == null || e.kind() != EndingKind.TERMINATED ? "" : e.message();
    boolean permanent = false;
    for (String token : PERMANENT) {
      permanent |= message.contains(token);
    }
    InterruptionClass cls;
    String reason;
    int cap = Integer.MAX_VALUE;
    switch (e.kind()) {
      case HEARTBEAT_CRASHED -> {
        cls = InterruptionClass.ProcessCrash;
        reason = "ProcessCrash";
      }
      case HEARTBEAT_STALE, HEARTBEAT_STALLED -> {
        cls = InterruptionClass.Timeout;
        reason = "HealthCheckFailed";
        cap = TIMEOUT_RETRY_CAP;
      }
      case TRIAL_EXPIRED -> {
        // a trial the circuit gave up on (api.md §3 j): a failed trial, so the circuit opens again; not one of the
        // endings §4 caps at 2 retries (a deadline, a stale or Stalled heartbeat), which would escalate it instead
        cls = InterruptionClass.Timeout;
        reason = "HealthCheckFailed";
      }
      case DISRUPTED -> {
        cls = InterruptionClass.ContextReset;
        // the kubelet evicts under node pressure (memory, disk): resources ran out; a preemption, a drain or a
        // taint says nothing about what the agent used
        reason = "Evicted".equals(e.reason()) || (e.reason() != null && e.reason().startsWith("OutOf"))
            ? "ResourceExhaustion" : "Unknown";
      }
      case DELETED, NODE_LOST -> {
        cls = InterruptionClass.ContextReset;
        reason = "Unknown";
      }
      case NEVER_STARTED -> {
        cls = InterruptionClass.ToolFailure;
        reason = "InitializationFailed";
      }
      case NO_STATE -> {
        cls = InterruptionClass.Unknown;
        reason = "Unknown";
      }
      default -> {
        if ("OOMKilled".equals(e.reason())) {
          cls = InterruptionClass.ProcessCrash;
          reason = "ResourceExhaustion";
          cap = OOM_RETRY_CAP;
        } else if ("DeadlineExceeded".equals(e.reason())) {
          cls = InterruptionClass.Timeout;
          reason = "Timeout";
          cap = TIMEOUT_RETRY_CAP;
        } else if (e.exitCode() == null) {
          cls = InterruptionClass.Unknown;
          reason = "Unknown";
        } else if (e.exitCode() >= 128) {
          cls = InterruptionClass.ProcessCrash;
          reason = "ProcessCrash";
        } else {
          cls = InterruptionClass.ToolFailure;
          reason = refinedReason(message);
        }
      }
    }
    return new BuiltIn(cls, reason, permanent, cap);
  }

  private static String refinedReason(String message) {
    if (message.contains("network_timeout") || message.contains("database_lock")) {
      return "DependencyFailure";
    }
    if (message.contains("resource_exhaustion")) {
      return "ResourceExhaustion";
    }
    return "UnhandledException";
  }
}

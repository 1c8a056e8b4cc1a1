package dev.respawn.policy;

import dev.respawn.api.v1alpha1.BackoffType;
import dev.respawn.api.v1alpha1.FailureAction;
import dev.respawn.api.v1alpha1.InterruptionClass;
import dev.respawn.api.v1alpha1.ResumeMode;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A validated AgentRestartPolicy with every default filled in: what the decision core works with.
 * Built only by {@link PolicyCompiler}, so every value here is inside the contract's bounds.
 */
public record RestartPolicy(
    BackoffSettings backoff,
    int maxRetries,
    Duration resetAfter,
    Optional<RestartLimit> restartLimit,
    CircuitSettings circuitBreaker,
    List<Rule> failureRules,
    HeartbeatSettings heartbeat,
    int restartRequestExitCode,
    ResumeSettings resume,
    List<DependencySettings> dependencies) {

  public RestartPolicy {
    failureRules = List.copyOf(failureRules);
    dependencies = List.copyOf(dependencies);
  }

  /** Returns this policy with another backoff type (the tier's soft gate). */
  public RestartPolicy withBackoffType(BackoffType type) {
    var b = backoff;
    return new RestartPolicy(new BackoffSettings(type, b.initialDelay(), b.multiplier(), b.maxDelay(), b.jitter()),
        maxRetries, resetAfter, restartLimit, circuitBreaker, failureRules, heartbeat, restartRequestExitCode, resume,
        dependencies);
  }

  /**
   * This policy as a stand-in for one that is missing or invalid, while only spec.suspend is acted on
   * (api.md §3 step 1): its restartLimit window forgets none of the restarts status recorded (the real
   * policy's window judges them again once it is back), where having no restartLimit would drop them all; it
   * keeps at most the most any policy may allow (api.md §9), the newest.
   */
  public RestartPolicy whileRefused() {
    return new RestartPolicy(backoff, maxRetries, resetAfter, Optional.of(new RestartLimit(Bounds.MAX_RESTARTS,
        FORGETS_NOTHING)), circuitBreaker, failureRules, heartbeat, restartRequestExitCode, resume, dependencies);
  }

  /**
   * This policy as it serves an instance of another namespace (the operator's --default-policy NAMESPACE/NAME): the
   * shared circuits count the instances of the policy's own namespace only, so that instance's failures do not open
   * them (api.md §11 names no other namespace's instances; README).
   */
  public RestartPolicy outsideTheFleet() {
    return new RestartPolicy(backoff, maxRetries, resetAfter, restartLimit, circuitBreaker, failureRules, heartbeat,
        restartRequestExitCode, resume, dependencies.stream().map(DependencySettings::outsideTheFleet).toList());
  }

  /** A window no recorded restart leaves while the instance is refused (a century). */
  private static final Duration FORGETS_NOTHING = Duration.ofDays(36_525);

  public record BackoffSettings(BackoffType type, Duration initialDelay, double multiplier, Duration maxDelay,
      double jitter) {}

  public record RestartLimit(int maxRestarts, Duration window) {}

  public record CircuitSettings(int failureThreshold, Duration window, Duration openDuration, boolean latch) {}

  /** An ordered failure rule; empty criteria sets mean "not constrained". */
  public record Rule(String name, Set<Integer> exitCodes, List<String> reasons, List<String> messageContains,
      Set<InterruptionClass> classes, FailureAction action, Optional<Integer> maxRetries,
      Optional<Duration> cooldown) {}

  /** timeout empty: heartbeats not required. startupGrace empty: no bound on starting. */
  public record HeartbeatSettings(Optional<Duration> timeout, Optional<Duration> startupGrace) {}

  /** The dependency of this name, when the policy names one. */
  public java.util.Optional<DependencySettings> dependency(String name) {
    return dependencies.stream().filter(d -> d.name().equals(name)).findFirst();
  }

  public record ResumeSettings(ResumeMode mode, int maxAttempts, Map<InterruptionClass, Duration> cooldowns) {
    public ResumeSettings {
      cooldowns = Map.copyOf(cooldowns);
    }

    public Duration cooldown(InterruptionClass c) {
      return cooldowns.getOrDefault(c, Duration.ZERO);
    }
  }
}

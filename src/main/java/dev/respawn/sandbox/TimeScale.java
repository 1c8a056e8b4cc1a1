package dev.respawn.sandbox;

import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.api.v1alpha1.BackoffSpec;
import dev.respawn.api.v1alpha1.CircuitBreakerSpec;
import dev.respawn.api.v1alpha1.ResumeCooldowns;
import dev.respawn.api.v1alpha1.ResumeSpec;
import dev.respawn.api.v1alpha1.FailureRule;
import dev.respawn.api.v1alpha1.InterruptionClass;
import dev.respawn.policy.GoDuration;
import java.time.Duration;

/**
 * Compresses the durations of a policy so the sandbox shows minutes of lifecycle in seconds
 * (a 2 m cool-down becomes 12 s at factor 10). Every duration field of the spec is divided.
 */
public final class TimeScale {
  private final double factor;

  public TimeScale(double factor) {
    if (!(factor >= 1.0)) {
      throw new IllegalArgumentException("the time scale must be >= 1 (got " + factor + ")");
    }
    this.factor = factor;
  }

  public double factor() {
    return factor;
  }

  /** A Go duration divided by the factor (null stays null). */
  public String compress(String duration) {
    if (duration == null) {
      return null;
    }
    Duration d = GoDuration.parse(duration);
    return GoDuration.format(Duration.ofMillis(Math.max(1, Math.round(d.toMillis() / factor))));
  }

  /** The spec with every duration compressed (defaults included), in place. */
  public AgentRestartPolicySpec compress(AgentRestartPolicySpec s) {
    s.backoff = s.backoff == null ? new BackoffSpec() : s.backoff;
    s.backoff.initialDelay = compress(or(s.backoff.initialDelay, "2s"));
    s.backoff.maxDelay = compress(or(s.backoff.maxDelay, "120s"));
    s.resetAfter = compress(or(s.resetAfter, "60s"));
    if (s.restartLimit != null) {
      s.restartLimit.window = compress(s.restartLimit.window);
    }
    s.circuitBreaker = s.circuitBreaker == null ? new CircuitBreakerSpec() : s.circuitBreaker;
    s.circuitBreaker.window = compress(or(s.circuitBreaker.window, "10m"));
    s.circuitBreaker.openDuration = compress(or(s.circuitBreaker.openDuration, "5m"));
    if (s.failureRules != null) {
      for (FailureRule r : s.failureRules) {
        r.cooldown = compress(r.cooldown);
      }
    }
    if (s.heartbeat != null) {
      s.heartbeat.timeout = compress(s.heartbeat.timeout);
      s.heartbeat.startupGrace = compress(s.heartbeat.startupGrace);
    }
    s.resume = s.resume == null ? new ResumeSpec() : s.resume;
    ResumeCooldowns c = s.resume.cooldowns == null ? new ResumeCooldowns() : s.resume.cooldowns;
    for (InterruptionClass cls : InterruptionClass.values()) {
      ResumeCooldowns.defaultOf(cls).ifPresent(dflt -> c.set(cls, compress(or(c.of(cls), dflt))));
    }
    s.resume.cooldowns = c;
    return s;
  }

  private static String or(String value, String dflt) {
    return value == null ? dflt : value;
  }
}

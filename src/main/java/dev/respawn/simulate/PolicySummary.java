package dev.respawn.simulate;

import dev.respawn.api.v1alpha1.BackoffType;
import dev.respawn.api.v1alpha1.ResumeMode;
import dev.respawn.policy.GoDuration;
import dev.respawn.policy.RestartPolicy;
import java.time.Duration;
import java.util.stream.Collectors;

/** One line with the settings a compiled policy runs with (defaults filled in, after the tier's gate). */
public final class PolicySummary {
  private PolicySummary() {}

  public static String describe(RestartPolicy p) {
    StringBuilder sb = new StringBuilder();
    var b = p.backoff();
    sb.append("backoff ").append(b.type());
    if (b.type() == BackoffType.Linear || b.type() == BackoffType.Exponential) {
      sb.append(' ').append(d(b.initialDelay()));
      if (b.type() == BackoffType.Exponential) {
        sb.append(" x").append(number(b.multiplier()));
      }
      sb.append(" up to ").append(d(b.maxDelay()));
    }
    if (b.jitter() > 0) {
      sb.append(", jitter ").append(number(b.jitter()));
    }
    sb.append("; maxRetries ").append(p.maxRetries()).append("; resetAfter ").append(d(p.resetAfter()));
    p.restartLimit().ifPresent(l -> sb.append("; restartLimit ").append(l.maxRestarts()).append(" per ")
        .append(d(l.window())));
    var c = p.circuitBreaker();
    sb.append("; circuit ").append(c.failureThreshold()).append(" failures in ").append(d(c.window()))
        .append(c.latch() ? " latch" : " open " + d(c.openDuration()));
    sb.append("; heartbeat ").append(p.heartbeat().timeout().map(t -> d(t) + ", startupGrace "
        + p.heartbeat().startupGrace().map(PolicySummary::d).orElse("none")).orElse("off"));
    if (p.restartRequestExitCode() != 42) {
      sb.append("; restart exit code ").append(p.restartRequestExitCode());
    }
    sb.append("; resume ").append(p.resume().mode());
    if (p.resume().mode() != ResumeMode.Off) {
      sb.append(" (").append(p.resume().maxAttempts()).append(" attempts)");
    }
    if (!p.dependencies().isEmpty()) {
      sb.append("; shared dependencies ").append(p.dependencies().stream().map(x -> x.name() + " ("
          + x.failureThreshold() + " instances in " + d(x.window()) + ", open " + d(x.openDuration()) + ")")
          .collect(Collectors.joining(", "))).append(", see simulate-fleet");
    }
    if (!p.failureRules().isEmpty()) {
      sb.append("; rules ").append(p.failureRules().stream().map(r -> r.name() + "=" + r.action())
          .collect(Collectors.joining(", ")));
    }
    return sb.toString();
  }

  private static String d(Duration d) {
    return GoDuration.format(d);
  }

  private static String number(double v) {
    return v == Math.rint(v) ? String.valueOf((long) v) : String.valueOf(v);
  }
}

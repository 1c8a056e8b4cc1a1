package dev.respawn.policy;

import dev.respawn.api.v1alpha1.BackoffType;
import dev.respawn.policy.RestartPolicy.BackoffSettings;
import java.time.Duration;
import java.util.random.RandomGenerator;

/** Backoff delays of api.md §1: computed in double nanoseconds and capped, so no attempt overflows. */
public final class Backoff {
  private Backoff() {}

  /**
   * The delay before restart number {@code attempt} (1-based), capped at maxDelay, before jitter.
   * None and Immediate give zero (None never restarts a failure at all; the caller decides that).
   */
  public static Duration delay(BackoffSettings b, int attempt) {
    if (attempt < 1) {
      throw new IllegalArgumentException("attempt must be >= 1 (got " + attempt + ")");
    }
    double nanos = switch (b.type()) {
      case None, Immediate -> 0.0;
      case Linear -> (double) b.initialDelay().toNanos() * attempt;
      // 0s * multiplier^(n-1) is 0 for every n (in doubles it would be 0 * Infinity = NaN from n = 310 on)
      case Exponential -> b.initialDelay().isZero() ? 0.0
          : b.initialDelay().toNanos() * Math.pow(b.multiplier(), attempt - 1.0);
    };
    long cap = b.maxDelay().toNanos();
    if (!(nanos < cap)) { // also catches +Infinity
      return b.maxDelay();
    }
    return Duration.ofNanos(Math.round(nanos));
  }

  /** Applies jitter after the cap: delay * U[1-j, 1+j], drawn from the injected generator. */
  public static Duration jitter(Duration delay, double jitter, RandomGenerator random) {
    if (jitter <= 0.0 || delay.isZero()) {
      return delay;
    }
    double factor = 1.0 - jitter + 2.0 * jitter * random.nextDouble();
    return Duration.ofNanos(Math.round(delay.toNanos() * factor));
  }

  /** The worst case: the sum of the delays of all maxRetries attempts, without jitter. */
  public static Duration totalRetryTime(RestartPolicy policy) {
    if (policy.backoff().type() == BackoffType.None) {
      return Duration.ZERO;
    }
    Duration total = Duration.ZERO;
    for (int n = 1; n <= policy.maxRetries(); n++) {
      total = total.plus(delay(policy.backoff(), n));
    }
    return total;
  }
}

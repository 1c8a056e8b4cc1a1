package dev.respawn.policy;

import dev.respawn.policy.RestartPolicy.Rule;
import java.time.Duration;
import java.time.Instant;

/**
 * A validated spec.dependencies entry (api.md §11), defaults filled in.
 *
 * @param match the failures blamed on it: a Retry rule whose criteria are the dependency's match
 * @param releaseRate restarts per second once the circuit closes; 0 means no limit
 */
public record DependencySettings(String name, Rule match, int failureThreshold, Duration window,
    Duration openDuration, int probes, double releaseRate) {

  /** When the i-th (from 0) waiting instance is released after the circuit closed at {@code closedAt}. */
  public Instant releaseAt(Instant closedAt, int index) {
    if (releaseRate <= 0 || index <= 0) {
      return closedAt;
    }
    return closedAt.plusNanos((long) Math.ceil(index * 1_000_000_000d / releaseRate));
  }
}

package dev.respawn.policy;

import dev.respawn.policy.RestartPolicy.Rule;
import java.time.Duration;
import java.time.Instant;

/**
 * A validated spec.dependencies entry (api.md §11), defaults filled in.
 *
 * @param match the failures blamed on it: a Retry rule whose criteria are the dependency's match
 * @param releaseRate restarts per second once the circuit closes; 0 means no limit
 * @param fleetMember the deciding instance is of the policy's own namespace, whose instances the shared circuit
 *     counts; an instance elsewhere (a default policy of another namespace) waits while the circuit is Open, but
 *     its failures never open it
 */
public record DependencySettings(String name, Rule match, int failureThreshold, Duration window,
    Duration openDuration, int probes, double releaseRate, boolean fleetMember) {

  /** A dependency as an instance of the policy's own namespace sees it. */
  public DependencySettings(String name, Rule match, int failureThreshold, Duration window, Duration openDuration,
      int probes, double releaseRate) {
    this(name, match, failureThreshold, window, openDuration, probes, releaseRate, true);
  }

  /** The same dependency as an instance of another namespace sees it: its failures do not open the circuit. */
  public DependencySettings outsideTheFleet() {
    return new DependencySettings(name, match, failureThreshold, window, openDuration, probes, releaseRate, false);
  }

  /**
   * How much wider a release slot is than {@code 1 / releaseRate}: with slots exactly that wide, a closed window
   * of one second holds releaseRate + 1 of them, and the API server, receiving each create a few tens of
   * milliseconds later or sooner than it was sent, counted releaseRate + 1 creates in a sliding second. Slots 5 %
   * wider keep every second at releaseRate or fewer unless two creates' delays differ by more than 50 ms
   * (per releaseRate of them), at 5 % of the release's pace.
   */
  static final double SLOT_MARGIN = 1.05;

  /** The time between two releases: 1.05 / releaseRate seconds (see {@link #SLOT_MARGIN}); releaseRate > 0. */
  public Duration releaseSpacing() {
    return Duration.ofNanos((long) Math.ceil(SLOT_MARGIN * 1_000_000_000d / releaseRate));
  }

  /** When the i-th (from 0) waiting instance is released after the circuit closed at {@code closedAt}. */
  public Instant releaseAt(Instant closedAt, int index) {
    if (releaseRate <= 0 || index <= 0) {
      return closedAt;
    }
    return closedAt.plusNanos((long) Math.ceil(index * SLOT_MARGIN * 1_000_000_000d / releaseRate));
  }
}

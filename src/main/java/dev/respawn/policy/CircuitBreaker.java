package dev.respawn.policy;

import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.policy.RestartPolicy.CircuitSettings;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Closed / Open / HalfOpen over failures within a sliding window. The only transitions:
 * Closed -> Open (threshold reached), Open -> HalfOpen (trial run after openDuration),
 * HalfOpen -> Open (failed trial), HalfOpen -> Closed (trial healthy for resetAfter), and
 * Open|HalfOpen -> Closed by an operator's resume.
 */
public final class CircuitBreaker {
  private CircuitBreaker() {}

  /** Failures of the snapshot still inside the window at {@code now}. */
  public static int failureCount(CircuitSnapshot s, CircuitSettings settings, Instant now) {
    return inWindow(s.failureTimes(), settings, now).size();
  }

  /** Records a failure: Closed opens at the threshold; a failure in HalfOpen reopens. */
  public static CircuitSnapshot recordFailure(CircuitSnapshot s, CircuitSettings settings, Instant now) {
    List<Instant> times = inWindow(s.failureTimes(), settings, now);
    times.add(now);
    while (times.size() > settings.failureThreshold()) {
      times.remove(0);
    }
    boolean trips = switch (s.state()) {
      case Closed -> times.size() >= settings.failureThreshold();
      case HalfOpen -> true;
      case Open -> false;
    };
    if (trips) {
      return new CircuitSnapshot(CircuitState.Open, times, s.trips() + 1, now, null, s.lastSuccessAt(), now);
    }
    return new CircuitSnapshot(s.state(), times, s.trips(), s.openedAt(), s.halfOpenAt(), s.lastSuccessAt(), now);
  }

  /** When an Open circuit allows its HalfOpen trial. */
  public static Instant trialAt(CircuitSnapshot s, CircuitSettings settings) {
    return s.openedAt().plus(settings.openDuration());
  }

  /** Open -> HalfOpen: the trial run starts now. */
  public static CircuitSnapshot startTrial(CircuitSnapshot s, Instant now) {
    if (s.state() != CircuitState.Open) {
      return s;
    }
    return new CircuitSnapshot(CircuitState.HalfOpen, s.failureTimes(), s.trips(), s.openedAt(), now,
        s.lastSuccessAt(), s.lastFailureAt());
  }

  /**
   * HalfOpen -> HalfOpen: the trial run ended without failing (it asked for a restart, a person restarted
   * it, an ignored failure, an unsuspend) and the next run carries the trial on, from its own start: its
   * bound ({@link #trialDeadline}) is openDuration after that start, not after the previous run's.
   */
  public static CircuitSnapshot carryTrial(CircuitSnapshot s, Instant now) {
    if (s.state() != CircuitState.HalfOpen) {
      return s;
    }
    return new CircuitSnapshot(CircuitState.HalfOpen, s.failureTimes(), s.trips(), s.openedAt(), now,
        s.lastSuccessAt(), s.lastFailureAt());
  }

  /**
   * A run stayed healthy for resetAfter: the failure sequence ends and the circuit is Closed. A circuit that was
   * Open or HalfOpen closes with its failures forgotten (its trial proved the agent healthy); a Closed one keeps
   * the failures still inside its window, which counts failures, not failure sequences (api.md §1: "failures
   * (within window) that open the circuit"; with maxRetries below failureThreshold no single sequence could).
   */
  public static CircuitSnapshot recordSuccess(CircuitSnapshot s, CircuitSettings settings, Instant now) {
    List<Instant> kept = s.state() == CircuitState.Closed ? inWindow(s.failureTimes(), settings, now) : List.of();
    return new CircuitSnapshot(CircuitState.Closed, kept, s.trips(), null, null, now, s.lastFailureAt());
  }

  /** An operator's resume: closed, failures forgotten, trips and history kept. */
  public static CircuitSnapshot reset(CircuitSnapshot s) {
    return new CircuitSnapshot(CircuitState.Closed, List.of(), s.trips(), null, null, s.lastSuccessAt(),
        s.lastFailureAt());
  }

  /**
   * The snapshot without the failures that left the window by {@code now} (api.md §1: "forgotten"), so that a
   * status written for another reason shows the count the next failure will be judged by. The state stays.
   */
  public static CircuitSnapshot forgetOld(CircuitSnapshot s, CircuitSettings settings, Instant now) {
    List<Instant> kept = inWindow(s.failureTimes(), settings, now);
    return kept.size() == s.failureTimes().size() ? s : new CircuitSnapshot(s.state(), kept, s.trips(), s.openedAt(),
        s.halfOpenAt(), s.lastSuccessAt(), s.lastFailureAt());
  }

  /** When a HalfOpen trial that is neither healthy nor ended counts as failed. */
  public static Instant trialDeadline(CircuitSnapshot s, CircuitSettings settings) {
    return s.halfOpenAt().plus(settings.openDuration());
  }

  private static List<Instant> inWindow(List<Instant> times, CircuitSettings settings, Instant now) {
    Instant oldest = now.minus(settings.window());
    List<Instant> kept = new ArrayList<>(times.size() + 1);
    for (Instant t : times) {
      if (t.isAfter(oldest)) {
        kept.add(t);
      }
    }
    return kept;
  }
}

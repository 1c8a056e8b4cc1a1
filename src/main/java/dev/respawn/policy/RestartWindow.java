package dev.respawn.policy;

import dev.respawn.policy.RestartPolicy.RestartLimit;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** The sliding window over all restarts (spec.restartLimit); its times live in status.recentRestarts. */
public final class RestartWindow {
  private RestartWindow() {}

  /** The restart times still inside the window (all of them when there is no limit: none are kept). */
  public static List<Instant> inWindow(List<Instant> restarts, Optional<RestartLimit> limit, Instant now) {
    if (limit.isEmpty()) {
      return List.of();
    }
    Instant oldest = now.minus(limit.get().window());
    List<Instant> kept = new ArrayList<>(restarts.size() + 1);
    for (Instant t : restarts) {
      if (t.isAfter(oldest)) {
        kept.add(t);
      }
    }
    return kept;
  }

  /**
   * The times, none later than {@code now}: a time in the future (a status restored from a cluster whose clock ran
   * ahead, this operator's clock stepped back) happened by now at the latest. Counted as now, it leaves its window one
   * window from now, rather than staying in it until the window has passed that future time.
   */
  public static List<Instant> notAfter(List<Instant> times, Instant now) {
    return times.stream().anyMatch(t -> t.isAfter(now)) ? times.stream().map(t -> t.isAfter(now) ? now : t).toList()
        : times;
  }

  /** True when another restart now would exceed maxRestarts within the window. */
  public static boolean isFull(List<Instant> restarts, Optional<RestartLimit> limit, Instant now) {
    return limit.isPresent() && inWindow(restarts, limit, now).size() >= limit.get().maxRestarts();
  }

  /** When a full window has room for one more restart again (the oldest that must leave it has left). */
  public static Optional<Instant> roomAt(List<Instant> restarts, Optional<RestartLimit> limit, Instant now) {
    if (!isFull(restarts, limit, now)) {
      return Optional.of(now);
    }
    List<Instant> kept = inWindow(restarts, limit, now).stream().sorted().toList();
    return Optional.of(kept.get(kept.size() - limit.get().maxRestarts()).plus(limit.get().window()));
  }

  /**
   * The newest maxRestarts times (api.md §9: recentRestarts <= maxRestarts), none without a limit: what status
   * keeps once the policy lowered or dropped its restartLimit. Only the count is bounded here; times leave the
   * window when the next restart is recorded, so time passing alone changes nothing to write.
   */
  public static List<Instant> bounded(List<Instant> restarts, Optional<RestartLimit> limit) {
    if (limit.isEmpty()) {
      return List.of();
    }
    int max = limit.get().maxRestarts();
    if (restarts.size() <= max) {
      return restarts;
    }
    return new ArrayList<>(restarts.stream().sorted().toList().subList(restarts.size() - max, restarts.size()));
  }

  /** Records a restart at {@code now}; keeps at most maxRestarts times (api.md §9). */
  public static List<Instant> record(List<Instant> restarts, Optional<RestartLimit> limit, Instant now) {
    if (limit.isEmpty()) {
      return List.of();
    }
    List<Instant> times = inWindow(restarts, limit, now);
    times.add(now);
    while (times.size() > limit.get().maxRestarts()) {
      times.remove(0);
    }
    return times;
  }
}

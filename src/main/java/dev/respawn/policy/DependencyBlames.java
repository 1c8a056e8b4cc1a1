package dev.respawn.policy;

import dev.respawn.policy.DependencyCircuit.Blame;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The blames that count for a shared circuit at one step (api.md §11): those within the window and since the
 * circuit last closed, read per instance.
 */
final class DependencyBlames {
  private final DependencySettings settings;
  private final List<Blame> counted = new ArrayList<>();

  DependencyBlames(DependencySettings settings, List<Blame> blames, Instant closedAt, Instant now) {
    this.settings = settings;
    Instant from = now.minus(settings.window());
    for (Blame b : blames) {
      if (b.at() != null && !b.at().isBefore(from) && (closedAt == null || b.at().isAfter(closedAt))) {
        counted.add(b);
      }
    }
  }

  /**
   * The latest blame of each instance, oldest first: how many there are is status.dependencies[].blamed.
   */
  List<Blame> latest() {
    Map<String, Blame> latest = new HashMap<>();
    for (Blame b : counted) {
      latest.merge(b.instance(), b, (x, y) -> x.at().isAfter(y.at()) ? x : y);
    }
    List<Blame> out = new ArrayList<>(latest.values());
    out.sort(Comparator.comparing(Blame::at).thenComparing(Blame::instance));
    return out;
  }

  /**
   * When failureThreshold distinct instances had been blamed: the first blame of the instance that made them that
   * many. An instance blamed again later (before this step) does not move it: the circuit opened with the first.
   * Null when fewer instances are blamed.
   */
  Instant thresholdReachedAt() {
    Map<String, Instant> first = new HashMap<>();
    for (Blame b : counted) {
      first.merge(b.instance(), b.at(), (x, y) -> x.isBefore(y) ? x : y);
    }
    return first.values().stream().sorted().skip(settings.failureThreshold() - 1L).findFirst().orElse(null);
  }
}

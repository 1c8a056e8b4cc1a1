package dev.respawn.controller;

import dev.respawn.policy.Decision;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Keeps the release of a shared dependency's waiting instances (api.md §11) to its {@code releaseRate}
 * as the API server sees the pods appear, not only as the release order schedules them: when the operator
 * falls behind (a slow API server, a pause) and several scheduled turns come due at once, their starts
 * still leave at most one per release slot ({@link dev.respawn.policy.DependencySettings#releaseSpacing()}). In memory, per policy and dependency; an instance
 * held back is reconciled again when its slot comes (its decision is not executed meanwhile, so nothing of
 * it is written or told). A new operator process starts with an open gate. One entry per policy and
 * dependency that ever released, kept for the process's life (a few bytes each).
 */
final class ReleaseGate {
  private final Map<String, Instant> nextSlot = new ConcurrentHashMap<>();

  /**
   * The dependency whose release creates this decision's pod, if it does. Only a pod to create takes a slot:
   * a start whose pod exists already (its status is written now, once the run ran) was counted when it
   * was made, and holding it back would only hold back its status.
   */
  static Optional<String> releasing(Decision decision) {
    return decision.start().filter(x -> !decision.startsExisting()).flatMap(Decision.PodStart::releasedBy);
  }

  /**
   * Takes the next slot of {@code dependency} if it has come; otherwise how long until it comes.
   *
   * @param spacing the time between two releases
   */
  Optional<Duration> hold(String dependency, Duration spacing, Instant now) {
    Instant[] wait = {null};
    nextSlot.compute(dependency, (key, slot) -> {
      if (slot == null || !now.isBefore(slot)) {
        return now.plus(spacing);
      }
      wait[0] = slot;
      return slot;
    });
    return wait[0] == null ? Optional.empty() : Optional.of(Duration.between(now, wait[0]));
  }

  /**
   * The pod of a start released at a slot was created at {@code at}: the next slot comes one spacing after the
   * API server took it, not only after the decision. A new process's first create can take half a second longer
   * than the ones after it, and the two would reach the server closer than the rate allows.
   */
  void created(String dependency, Duration spacing, Instant at) {
    nextSlot.merge(dependency, at.plus(spacing), (slot, after) -> slot.isAfter(after) ? slot : after);
  }
}

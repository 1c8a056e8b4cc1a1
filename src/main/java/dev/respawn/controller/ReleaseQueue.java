package dev.respawn.controller;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.api.v1alpha1.Timestamps;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import java.util.stream.Stream;

/**
 * api.md §11: a closed dependency restarts its waiting instances in the order they failed. Their turns are
 * spaced in the policy's status ({@code releaseOrder}, dropped once the last turn has come); when several come
 * due at once (an operator that was down through them, a slow start), the first to be reconciled would take
 * the next slot of the {@link ReleaseGate}. An instance waits instead while one of the same policy that failed
 * before it ({@code status.lastFailure.at}) is due, still waiting for the dependency and not started,
 * {@link #PATIENCE} at most (one that cannot start for a reason of its own must not hold the others back).
 * In memory, per instance while it waits.
 */
final class ReleaseQueue {
  /** How long an instance waits for an earlier turn that does not start. */
  static final Duration PATIENCE = Duration.ofSeconds(10);

  private final Map<String, Instant> heldSince = new ConcurrentHashMap<>();
  private final ReleaseGate gate = new ReleaseGate();

  /**
   * How long a start that {@code dependency}'s release makes (see {@link ReleaseGate#releasing}) waits: for an
   * instance that failed before it, or for its slot; empty: it starts now.
   *
   * @param policy the name of the instance's policy
   * @param fellows the instances of the same policy (its own cached copy among them)
   * @param started whether an instance's next run's pod exists already (its start is not written yet)
   */
  Optional<Duration> hold(AgentInstance instance, String policy, Stream<AgentInstance> fellows, String dependency,
      Duration spacing, Predicate<AgentInstance> started, Instant now) {
    String key = instance.getMetadata().getNamespace() + "/" + instance.getMetadata().getName();
    if (waitsForAnEarlierTurn(key, instance, fellows, dependency, started, now)) {
      return Optional.of(spacing);
    }
    return gate.hold(instance.getMetadata().getNamespace() + "/" + policy + "/" + dependency, spacing, now);
  }

  /** True when an instance that failed before {@code instance} is due, still waiting and not started. */
  boolean waitsForAnEarlierTurn(String key, AgentInstance instance, Stream<AgentInstance> fellows, String dependency,
      Predicate<AgentInstance> started, Instant now) {
    Comparator<AgentInstance> failed = Comparator.comparing(ReleaseQueue::failedAt,
        Comparator.nullsLast(Comparator.naturalOrder())).thenComparing(i -> i.getMetadata().getName());
    boolean earlierDue = fellows.filter(o -> !o.getMetadata().getName().equals(instance.getMetadata().getName()))
        .filter(o -> failed.compare(o, instance) < 0)
        .anyMatch(o -> dueAndWaiting(o, dependency, now) && !started.test(o));
    if (!earlierDue) {
      heldSince.remove(key);
      return false;
    }
    Instant since = heldSince.computeIfAbsent(key, k -> now);
    if (!now.isBefore(since.plus(PATIENCE))) {
      heldSince.remove(key);
      return false;
    }
    return true;
  }

  private static Instant failedAt(AgentInstance instance) {
    var status = instance.getStatus();
    return status == null || status.lastFailure == null ? null : Timestamps.parse(status.lastFailure.at);
  }

  void forget(String key) {
    heldSince.remove(key);
  }

  int size() {
    return heldSince.size();
  }

  private static boolean dueAndWaiting(AgentInstance instance, String dependency, Instant now) {
    var status = instance.getStatus();
    if (status == null || status.phase != Phase.CircuitOpen || !dependency.equals(status.waitingFor)) {
      return false;
    }
    Instant next = Timestamps.parse(status.nextRestartAt);
    return next != null && !now.isBefore(next);
  }
}

package dev.respawn.controller;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.api.v1alpha1.Timestamps;
import dev.respawn.policy.DependencyCircuit;
import dev.respawn.policy.DependencySettings;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.stream.Collectors;
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

  /** How long no one waits for an earlier turn that did not start within {@link #PATIENCE}. */
  static final Duration PASSED_OVER = Duration.ofMinutes(10);

  private final Map<String, Instant> heldSince = new ConcurrentHashMap<>();
  /** Earlier turns that held someone back for PATIENCE and did not start: when they were passed over. */
  private final Map<String, Instant> passedOver = new ConcurrentHashMap<>();
  private final ReleaseGate gate = new ReleaseGate();

  /**
   * How long a start that {@code dependency}'s release makes (see {@link ReleaseGate#releasing}) waits: for an
   * earlier turn, or for its slot; empty: it starts now.
   *
   * @param policy the name of the instance's policy
   * @param circuit the dependency's circuit as the policy's status shows it, or null
   * @param fellows the instances of the same policy (its own cached copy among them), as the cache lists them now
   * @param started whether an instance's next run's pod exists already (its start is not written yet)
   */
  Optional<Duration> hold(AgentInstance instance, String policy, DependencyCircuit circuit, DependencySettings settings,
      Supplier<Stream<AgentInstance>> fellows, Predicate<AgentInstance> started, Instant now) {
    String key = instance.getMetadata().getNamespace() + "/" + instance.getMetadata().getName();
    if (waitsForAnEarlierTurn(key, instance, circuit, settings, fellows, started, now)) {
      return Optional.of(settings.releaseSpacing());
    }
    return gate.hold(slotKey(instance, policy, settings), settings.releaseSpacing(), now);
  }

  /** The pod of a start this queue let go was created at {@code at} (see {@link ReleaseGate#created}). */
  void created(AgentInstance instance, String policy, DependencySettings settings, Instant at) {
    gate.created(slotKey(instance, policy, settings), settings.releaseSpacing(), at);
  }

  private static String slotKey(AgentInstance instance, String policy, DependencySettings settings) {
    return instance.getMetadata().getNamespace() + "/" + policy + "/" + settings.name();
  }

  /**
   * True when an earlier turn is due, still waiting for the dependency and not started: one before
   * {@code instance} in the circuit's release order whose slot has come, or, once the order is dropped (its last
   * turn came), one that failed before it and whose status shows no later time.
   */
  boolean waitsForAnEarlierTurn(String key, AgentInstance instance, DependencyCircuit circuit,
      DependencySettings settings, Supplier<Stream<AgentInstance>> fellows, Predicate<AgentInstance> started,
      Instant now) {
    String name = instance.getMetadata().getName();
    List<String> order = circuit == null || circuit.closedAt() == null ? List.of() : circuit.releaseOrder();
    int index = order.indexOf(name);
    Predicate<AgentInstance> earlier;
    if (index >= 0) {
      earlier = o -> {
        int i = order.indexOf(o.getMetadata().getName());
        return i >= 0 && i < index && !now.isBefore(settings.releaseAt(circuit.closedAt(), i)) && statusDue(o, now);
      };
    } else {
      Comparator<AgentInstance> failed = Comparator.comparing(ReleaseQueue::failedAt,
          Comparator.nullsLast(Comparator.naturalOrder())).thenComparing(i -> i.getMetadata().getName());
      earlier = o -> failed.compare(o, instance) < 0 && statusDue(o, now);
    }
    String ns = instance.getMetadata().getNamespace();
    // the circuit's fleet is the policy's namespace: instances of a default policy elsewhere share no turn with it
    List<String> blockers = fellows.get().filter(o -> ns.equals(o.getMetadata().getNamespace()))
        .filter(o -> !o.getMetadata().getName().equals(name))
        .filter(o -> earlier.test(o) && waiting(o, settings.name()) && !started.test(o))
        .map(o -> ns + "/" + o.getMetadata().getName()).filter(b -> !passedOver(b, now)).toList();
    if (blockers.isEmpty()) {
      heldSince.remove(key);
      return false;
    }
    Instant since = heldSince.computeIfAbsent(key, k -> now);
    if (!now.isBefore(since.plus(PATIENCE))) {
      // they did not start in all that time: no one waits for them again (one stuck turn must not slow the
      // rest of the release to one start per PATIENCE)
      heldSince.remove(key);
      blockers.forEach(b -> passedOver.put(b, now));
      // one deleted since it was listed had its entry dropped (forget) before this put: dropped again (its deletion's
      // reconcile comes after the cache let it go)
      Set<String> listed = fellows.get().map(o -> ns + "/" + o.getMetadata().getName()).collect(Collectors.toSet());
      blockers.stream().filter(b -> !listed.contains(b)).forEach(passedOver::remove);
      return false;
    }
    return true;
  }

  private boolean passedOver(String blocker, Instant now) {
    Instant at = passedOver.get(blocker);
    if (at != null && !now.isBefore(at.plus(PASSED_OVER))) {
      passedOver.remove(blocker, at);
      return false;
    }
    return at != null;
  }

  /** The pod of an instance's next run (it exists once made, while its start is not written yet). */
  static ResourceID nextRunPod(AgentInstance instance) {
    int run = instance.getStatus() == null || instance.getStatus().run == null ? 0 : instance.getStatus().run;
    return new ResourceID(instance.getMetadata().getName() + "-" + (run + 1), instance.getMetadata().getNamespace());
  }

  private static Instant failedAt(AgentInstance instance) {
    var status = instance.getStatus();
    return status == null || status.lastFailure == null ? null : Timestamps.parse(status.lastFailure.at);
  }

  void forget(String key) {
    heldSince.remove(key);
    passedOver.remove(key);
  }

  /** How many instances this queue remembers anything of. */
  int size() {
    return heldSince.size() + passedOver.size();
  }

  private static boolean waiting(AgentInstance instance, String dependency) {
    var status = instance.getStatus();
    return status != null && status.phase == Phase.CircuitOpen && dependency.equals(status.waitingFor);
  }

  /** Due by its status: released now (no time of its own shown yet) or at a time that has come. */
  private static boolean statusDue(AgentInstance instance, Instant now) {
    Instant next = Timestamps.parse(instance.getStatus() == null ? null : instance.getStatus().nextRestartAt);
    return next == null || !now.isBefore(next);
  }
}

package dev.respawn.policy;

import dev.respawn.api.v1alpha1.OperatorRequest;
import java.util.Collections;
import java.util.EnumMap;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Everything the controller saw of one AgentInstance, before any judgement: its identity, spec.suspend,
 * every pod carrying its label (owned or not), whether its heartbeat Lease exists, the Lease's view and
 * its holder (a renewal counts only for the pod holding it), the operator-action annotations, and the
 * shared circuits of the policy's dependencies as the policy's status shows them. {@link RunObserver} turns it
 * into the core's {@link Observation}; the reconciler, the simulator and the property tests all go
 * through that one step.
 */
public record Sighting(String namespace, String instance, String instanceUid, boolean suspend, List<PodFacts> pods,
    boolean leaseExists, Optional<LeaseView> lease, String leaseHolder, Map<OperatorRequest, Request> requests,
    Map<String, DependencyCircuit> dependencies, boolean startUntold) {

  /** A sighting whose next run's pod, if one exists, was made by the one who decides now (its start is told). */
  public Sighting(String namespace, String instance, String instanceUid, boolean suspend, List<PodFacts> pods,
      boolean leaseExists, Optional<LeaseView> lease, String leaseHolder, Map<OperatorRequest, Request> requests,
      Map<String, DependencyCircuit> dependencies) {
    this(namespace, instance, instanceUid, suspend, pods, leaseExists, lease, leaseHolder, requests, dependencies,
        false);
  }

  public Sighting {
    pods = List.copyOf(pods);
    requests = requests.isEmpty() ? Map.of() : Collections.unmodifiableMap(new EnumMap<>(requests));
    dependencies = Map.copyOf(dependencies);
  }

  /** The same sighting, with the shared circuits of the policy's dependencies (from the policy's status). */
  public Sighting withDependencies(Map<String, DependencyCircuit> circuits) {
    return new Sighting(namespace, instance, instanceUid, suspend, pods, leaseExists, lease, leaseHolder,
        requests, circuits, startUntold);
  }

  /**
   * The same sighting, saying whether a next run's pod that exists was made without its start being told: by an
   * operator process that stopped before status showed it (the telling waits for that write). Taking it up
   * then tells the start, once.
   */
  public Sighting withStartUntold(boolean untold) {
    return new Sighting(namespace, instance, instanceUid, suspend, pods, leaseExists, lease, leaseHolder,
        requests, dependencies, untold);
  }

  /** The same sighting, with one more pod (one the controller knows of that the caches no longer show). */
  public Sighting withPod(PodFacts pod) {
    List<PodFacts> more = new java.util.ArrayList<>(pods);
    more.add(pod);
    return new Sighting(namespace, instance, instanceUid, suspend, more, leaseExists, lease, leaseHolder,
        requests, dependencies, startUntold);
  }

  /**
   * The Lease's view whichever run holds it, for its checkpoint annotations only: the last checkpoint stays the one
   * to resume from when a run ended before it renewed (a resumed run that failed at once, a Lease annotated by hand).
   */
  public Optional<LeaseView> checkpointLease() {
    return lease;
  }

  /** The Lease's view when {@code pod} holds it (a stale run cannot vouch for the new one). */
  public Optional<LeaseView> leaseOf(String pod) {
    return pod != null && pod.equals(leaseHolder) ? lease : Optional.empty();
  }
}

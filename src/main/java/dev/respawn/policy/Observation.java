package dev.respawn.policy;

import dev.respawn.api.v1alpha1.OperatorRequest;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What the core concludes it sees of one AgentInstance now, built only by {@link RunObserver}: its
 * identity, spec.suspend, the current run's pod (or a live pod that blocks a new start), how the
 * current run ended (if it did), the pods of earlier runs, a pod of the next run that exists already,
 * the operator-action annotations and the heartbeat Lease. Only pods the instance controls appear.
 *
 * @param earlierRuns pods of earlier runs that are not being deleted yet (cleaned up once a run is running)
 * @param nextRun a pod of the run after the current one, made by a start whose status was not written
 */
public record Observation(String namespace, String instance, boolean suspend, Optional<PodView> pod,
    Optional<RunEnding> ending, Map<OperatorRequest, Request> requests,
    Optional<LeaseView> lease, Optional<LeaseView> checkpointLease, boolean leaseExists, List<PodFacts> earlierRuns,
    Optional<PodFacts> nextRun, Map<String, DependencyCircuit> dependencies, boolean startUntold) {

  public Observation {
    earlierRuns = List.copyOf(earlierRuns);
    dependencies = Map.copyOf(dependencies);
  }

  /** The shared circuit of that dependency (Closed when the policy's status shows none yet). */
  public DependencyCircuit dependency(String name) {
    return dependencies.getOrDefault(name, DependencyCircuit.closed(name));
  }

  /** True when a pod of this instance still runs or may still run. */
  public boolean podLive() {
    return pod.map(PodView::isLive).orElse(false);
  }

  /** The same observation with the pod of the next run as the current one (that run has started). */
  Observation atNextRun(Sighting seen) {
    PodFacts next = nextRun.orElseThrow();
    return new Observation(namespace, instance, suspend, Optional.of(next.view()), next.ending(), requests,
        seen.leaseOf(next.name()), checkpointLease, leaseExists, earlierRuns, Optional.empty(), dependencies,
        false);
  }
}

package dev.respawn.policy;

import java.util.Optional;

/**
 * What the controller saw of one AgentInstance now: its identity, spec.suspend, the current run's
 * pod, how the run ended (if it did), the operator-action annotations and the heartbeat Lease.
 */
public record Observation(String namespace, String instance, boolean suspend, Optional<PodView> pod,
    Optional<RunEnding> ending, Optional<Request> restartRequest, Optional<Request> resumeRequest,
    Optional<LeaseView> lease) {

  /** An instance with no pod and nothing requested (its first reconcile, or a Backoff wait). */
  public static Observation idle(String namespace, String instance) {
    return new Observation(namespace, instance, false, Optional.empty(), Optional.empty(), Optional.empty(),
        Optional.empty(), Optional.empty());
  }

  public Observation withPod(PodView p) {
    return new Observation(namespace, instance, suspend, Optional.ofNullable(p), ending, restartRequest,
        resumeRequest, lease);
  }

  public Observation withEnding(RunEnding e) {
    return new Observation(namespace, instance, suspend, pod, Optional.ofNullable(e), restartRequest, resumeRequest,
        lease);
  }

  public Observation withLease(LeaseView l) {
    return new Observation(namespace, instance, suspend, pod, ending, restartRequest, resumeRequest,
        Optional.ofNullable(l));
  }

  public Observation withRestartRequest(Request r) {
    return new Observation(namespace, instance, suspend, pod, ending, Optional.ofNullable(r), resumeRequest, lease);
  }

  public Observation withResumeRequest(Request r) {
    return new Observation(namespace, instance, suspend, pod, ending, restartRequest, Optional.ofNullable(r), lease);
  }

  public Observation withSuspend(boolean s) {
    return new Observation(namespace, instance, s, pod, ending, restartRequest, resumeRequest, lease);
  }

  /** True when a pod of this instance still runs or may still run. */
  public boolean podLive() {
    return pod.map(PodView::isLive).orElse(false);
  }
}

package dev.respawn.policy;

/** How a run ended, as seen from Kubernetes (the controller) or judged by the core (heartbeats, startup). */
public enum EndingKind {
  /** The agent container terminated with an exit code (and maybe a reason and message). */
  TERMINATED,
  /** Evicted, preempted, or a DisruptionTarget condition on the pod. */
  DISRUPTED,
  /** The pod vanished or was deleted by someone other than the operator. */
  DELETED,
  /** The pod's node was lost. */
  NODE_LOST,
  /** The pod failed but no usable termination state exists. */
  NO_STATE,
  /** The pod did not start within heartbeat.startupGrace. */
  NEVER_STARTED,
  /** No heartbeat change seen for longer than heartbeat.timeout. */
  HEARTBEAT_STALE,
  /** The agent said Stalled. */
  HEARTBEAT_STALLED,
  /** The agent said Crashed. */
  HEARTBEAT_CRASHED,
  /** A HalfOpen trial run neither healthy nor ended within openDuration. */
  TRIAL_EXPIRED;

  /**
   * Endings the operator judges while the pod lives, and brings about by deleting it (api.md §3, §5): the pod and its
   * logs are gone once the run has ended.
   */
  public boolean endsByDeletingThePod() {
    return this == NEVER_STARTED || this == HEARTBEAT_STALE || this == HEARTBEAT_STALLED || this == HEARTBEAT_CRASHED
        || this == TRIAL_EXPIRED;
  }

  /** Endings caused by a stalled agent (terminal reason StallTimeout when retries run out). */
  public boolean isStall() {
    return this == HEARTBEAT_STALE || this == HEARTBEAT_STALLED;
  }
}

package dev.respawn.controller;

import java.time.Duration;
import java.util.UUID;

/**
 * How the operator is leader-elected (JOSDK's Lease-based election, Lease {@value
 * RespawnOperator#LEADER_LEASE}). In a cluster a leader that loses its Lease exits and the
 * Deployment restarts it; with {@code exitOnStopLeading} false (tests) it keeps the process and stops acting
 * (its reconcilers turn every reconcile away).
 */
public record LeaderElection(String namespace, String identity, Duration leaseDuration, Duration renewDeadline,
    Duration retryPeriod, boolean exitOnStopLeading) {

  /** Kubernetes' usual timings (15 s lease, 10 s renew deadline, 2 s retry), exiting on loss. */
  public static LeaderElection standard(String namespace) {
    String pod = System.getenv("POD_NAME");
    String identity = pod != null && !pod.isBlank() ? pod : "respawn-" + UUID.randomUUID();
    return new LeaderElection(namespace, identity, Duration.ofSeconds(15), Duration.ofSeconds(10),
        Duration.ofSeconds(2), true);
  }
}

package dev.respawn.controller;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectionConfigBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElector;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import java.time.Duration;
import java.util.UUID;
import org.slf4j.LoggerFactory;

/**
 * How the operator is leader-elected (JOSDK's Lease-based election; the Lease is {@value
 * RespawnOperator#LEADER_LEASE} unless named otherwise). In a cluster a leader that loses its Lease exits and
 * the Deployment restarts it; with {@code exitOnStopLeading} false (tests) it keeps the process and stops acting
 * (its reconcilers turn every reconcile away).
 */
public record LeaderElection(String leaseName, String namespace, String identity, Duration leaseDuration,
    Duration renewDeadline, Duration retryPeriod, boolean exitOnStopLeading) {

  /** Kubernetes' usual timings (15 s lease, 10 s renew deadline, 2 s retry), exiting on loss. */
  public static LeaderElection standard(String leaseName, String namespace) {
    String pod = System.getenv("POD_NAME");
    String identity = pod != null && !pod.isBlank() ? pod : "respawn-" + UUID.randomUUID();
    return new LeaderElection(leaseName, namespace, identity, Duration.ofSeconds(15), Duration.ofSeconds(10),
        Duration.ofSeconds(2), true);
  }

  /**
   * Gives the Lease up if this process holds it (a stopping leader, once it no longer acts): a standby takes over at
   * its next try instead of when the Lease expires. JOSDK's election does not release it. Returns whether it was
   * released; never throws (a Lease left held expires as before).
   */
  boolean release(KubernetesClient client) {
    try {
      return new LeaderElector(client, new LeaderElectionConfigBuilder().withName(leaseName)
          .withLock(new LeaseLock(namespace, leaseName, identity))
          .withLeaseDuration(leaseDuration).withRenewDeadline(renewDeadline).withRetryPeriod(retryPeriod)
          .withLeaderCallbacks(new LeaderCallbacks(() -> { }, () -> { }, leader -> { })).build(), Runnable::run)
          .release();
    } catch (KubernetesClientException e) {
      LoggerFactory.getLogger(LeaderElection.class).warn("Could not give the leader Lease {} up ({}): a standby takes"
          + " over when it expires", leaseName, e.getMessage());
      return false;
    }
  }
}

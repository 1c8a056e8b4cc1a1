package dev.respawn.acceptance;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/** The test plays the agent's heartbeat (§5): renews the Lease the operator created, with optional annotations. */
final class AgentLease implements AutoCloseable {
  static final String HEALTH = "respawn.dev/health";
  static final String DETAIL = "respawn.dev/detail";
  static final String CHECKPOINT = "respawn.dev/checkpoint";
  static final String CHECKPOINT_STATUS = "respawn.dev/checkpoint-status";
  static final String IDEMPOTENT = "respawn.dev/step-idempotent";
  static final String ARTIFACTS_READY = "respawn.dev/artifacts-ready";

  private final MockCluster cluster;
  private final ScheduledExecutorService agents = Executors.newScheduledThreadPool(2);

  AgentLease(MockCluster cluster) {
    this.cluster = cluster;
  }

  Lease get(String ns, String lease) {
    return cluster.client.leases().inNamespace(ns).withName(lease).get();
  }

  /** One renewal: renewTime = now, holderIdentity = holder, these annotations added. */
  void renew(String ns, String lease, String holder, Map<String, String> annotations) {
    for (int i = 0; ; i++) {
      Lease l = get(ns, lease);
      if (l == null) {
        throw new IllegalStateException("no Lease " + ns + "/" + lease);
      }
      l.getSpec().setHolderIdentity(holder);
      l.getSpec().setRenewTime(ZonedDateTime.now(ZoneOffset.UTC));
      if (l.getMetadata().getAnnotations() == null) {
        l.getMetadata().setAnnotations(new HashMap<>());
      }
      l.getMetadata().getAnnotations().putAll(annotations);
      try {
        cluster.client.leases().inNamespace(ns).resource(l).update();
        return;
      } catch (KubernetesClientException e) {
        if (e.getCode() != 409 || i > 20) {
          throw e;
        }
      }
    }
  }

  void renew(String ns, String lease, String holder) {
    renew(ns, lease, holder, Map.of());
  }

  /** Renews every periodMillis until the returned handle is cancelled (or the Lease is gone). */
  ScheduledFuture<?> keepRenewing(String ns, String lease, String holder, long periodMillis) {
    return keepRenewing(ns, lease, holder, periodMillis, Map.of());
  }

  /** Renews with these annotations at every renewal (what another writer set in between is overwritten). */
  ScheduledFuture<?> keepRenewing(String ns, String lease, String holder, long periodMillis,
      Map<String, String> annotations) {
    return agents.scheduleAtFixedRate(() -> {
      try {
        renew(ns, lease, holder, annotations);
      } catch (RuntimeException e) {
        // the Lease may be gone with its instance; keep trying
      }
    }, 0, periodMillis, TimeUnit.MILLISECONDS);
  }

  static Map<String, String> checkpoint(String id, String status, boolean idempotent) {
    return Map.of(CHECKPOINT, id, CHECKPOINT_STATUS, status, IDEMPOTENT, String.valueOf(idempotent));
  }

  @Override
  public void close() {
    agents.shutdownNow();
  }
}

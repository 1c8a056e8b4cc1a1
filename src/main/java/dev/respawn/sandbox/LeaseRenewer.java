package dev.respawn.sandbox;

import dev.respawn.heartbeat.HeartbeatLeases;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseSpec;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.Resource;
import java.time.InstantSource;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/** Renews heartbeat Leases (coordination.k8s.io/v1) the way an agent does (api.md §5). */
final class LeaseRenewer {
  /** The agent's verdict annotation. */

  private final KubernetesClient client;
  private final String namespace;
  private final InstantSource clock;

  LeaseRenewer(KubernetesClient client, String namespace, InstantSource clock) {
    this.client = client;
    this.namespace = namespace;
    this.clock = clock;
  }

  /** Renewals that lost a race with another writer of the same Lease and are tried again at once. */
  static final int CONFLICT_RETRIES = 3;

  /**
   * Updates the Lease (GET + PATCH), or creates it when it does not exist yet. A conflict (another
   * writer, e.g. an old pod still renewing) is retried on the newer version, as an agent's client would.
   */
  Lease renew(String leaseName, String holder, String verdict, String... annotations) {
    return renew(leaseName, holder, verdict, true, annotations);
  }

  /**
   * As {@link #renew(String, String, String, String...)}; without {@code create}, a missing Lease is not made
   * (null is returned): what an agent with the documented Role can do (update and patch, never create).
   */
  Lease renew(String leaseName, String holder, String verdict, boolean create, String... annotations) {
    Map<String, String> changes = pairs(annotations);
    if (verdict != null) {
      changes.put(HeartbeatLeases.HEALTH, verdict);
    }
    Resource<Lease> lease = client.leases().inNamespace(namespace).withName(leaseName);
    for (int attempt = 0; ; attempt++) {
      try {
        return lease.edit(l -> renewed(l, holder, changes));
      } catch (KubernetesClientException e) {
        if (e.getCode() == 404) {
          if (!create) {
            return null; // this beat is lost; the operator makes the Lease again
          }
          break;
        }
        if (e.getCode() != 409 || attempt == CONFLICT_RETRIES) {
          throw e;
        }
      }
    }
    Lease fresh = new LeaseBuilder().withNewMetadata().withName(leaseName).withNamespace(namespace).endMetadata()
        .build();
    try {
      return client.leases().inNamespace(namespace).resource(renewed(fresh, holder, changes)).create();
    } catch (KubernetesClientException e) {
      if (e.getCode() != 409) {
        throw e;
      }
      return lease.edit(l -> renewed(l, holder, changes)); // created concurrently (by the operator)
    }
  }

  private Lease renewed(Lease lease, String holder, Map<String, String> changes) {
    ZonedDateTime now = clock.instant().atZone(ZoneOffset.UTC);
    LeaseSpec spec = lease.getSpec() == null ? new LeaseSpec() : lease.getSpec();
    if (!Objects.equals(spec.getHolderIdentity(), holder)) {
      if (spec.getHolderIdentity() != null) {
        spec.setLeaseTransitions(spec.getLeaseTransitions() == null ? 1 : spec.getLeaseTransitions() + 1);
      }
      spec.setHolderIdentity(holder);
      spec.setAcquireTime(now);
    }
    spec.setRenewTime(now);
    lease.setSpec(spec);
    Map<String, String> annotations = lease.getMetadata().getAnnotations() == null ? new HashMap<>()
        : new HashMap<>(lease.getMetadata().getAnnotations());
    changes.forEach((key, value) -> {
      if (value == null) {
        annotations.remove(key);
      } else {
        annotations.put(key, value);
      }
    });
    lease.getMetadata().setAnnotations(annotations);
    return lease;
  }

  /** key, value, key, value ... -> an ordered map; values may be null. */
  static Map<String, String> pairs(String... keyValues) {
    if (keyValues.length % 2 != 0) {
      throw new IllegalArgumentException("annotations come in key, value pairs");
    }
    Map<String, String> map = new LinkedHashMap<>();
    for (int i = 0; i < keyValues.length; i += 2) {
      map.put(Objects.requireNonNull(keyValues[i], "annotation key"), keyValues[i + 1]);
    }
    return map;
  }
}

package dev.respawn.heartbeat;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Remembers, per Lease, when this operator last saw its renewTime change, by its own clock (as
 * Kubernetes' node lifecycle controller does). Renewals that change nothing else do not trigger a
 * reconcile; the reconcile that wakes at the expiry time reads the time from here. After an
 * operator restart the map is empty and status.heartbeat.observedAt carries the last value.
 */
public final class RenewalClock {
  private final InstantSource clock;
  private final Map<String, Seen> seen = new ConcurrentHashMap<>();

  public RenewalClock(InstantSource clock) {
    this.clock = clock;
  }

  /** The renewTime last seen and the operator's time when it was first seen. */
  public record Seen(Instant renewTime, Instant at) {}

  /** Records the Lease's renewTime if it changed; returns true when it did. */
  public boolean observe(Lease lease) {
    String key = key(lease.getMetadata().getNamespace(), lease.getMetadata().getName());
    Instant renew = renewTime(lease);
    if (renew == null) {
      return false;
    }
    Seen before = seen.get(key);
    if (before != null && renew.equals(before.renewTime())) {
      return false;
    }
    seen.put(key, new Seen(renew, clock.instant()));
    return true;
  }

  /** When the operator saw this Lease's current renewTime appear, or null when it did not track it. */
  public Instant seenAt(Lease lease) {
    Seen s = seen.get(key(lease.getMetadata().getNamespace(), lease.getMetadata().getName()));
    Instant renew = renewTime(lease);
    return s != null && Objects.equals(s.renewTime(), renew) ? s.at() : null;
  }

  /** The Lease's renewTime as an instant, or null. */
  public static Instant renewTime(Lease lease) {
    return lease.getSpec() == null || lease.getSpec().getRenewTime() == null ? null
        : lease.getSpec().getRenewTime().toInstant();
  }

  public void forget(String namespace, String name) {
    seen.remove(key(namespace, name));
  }

  public int size() {
    return seen.size();
  }

  private static String key(String namespace, String name) {
    return namespace + "/" + name;
  }
}

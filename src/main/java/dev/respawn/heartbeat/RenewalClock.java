package dev.respawn.heartbeat;

import dev.respawn.policy.LeaseView;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import java.time.Instant;
import java.time.InstantSource;
import java.util.HashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Remembers, per Lease, when this operator last saw its renewTime change, by its own clock (as
 * Kubernetes' node lifecycle controller does). Renewals that change nothing else do not trigger a
 * reconcile; the reconcile that wakes at the expiry time reads the time from here. Nothing of it is
 * written to status: after an operator restart the map is empty, and a Lease first seen by the new
 * process counts as renewed then, so every live run gets a full timeout (as Kubernetes' node lifecycle
 * controller grants every node after a restart).
 *
 * <p>When the Lease changes hands it also keeps how the previous holder left it: a renewal by a pod that
 * is not the current run is ignored (api.md §5), so it must not erase the current run's last heartbeat
 * either (an old pod still terminating may renew once more after the new run took the Lease over).
 */
public final class RenewalClock {
  private final InstantSource clock;
  private final Map<String, Seen> seen = new ConcurrentHashMap<>();
  private final Map<String, Held> leftBy = new ConcurrentHashMap<>();
  /** When this process first looked for a Lease it found missing or never renewed, for runs older than it. */
  private final Map<String, Instant> looked = new ConcurrentHashMap<>();
  private final Instant startedAt;

  public RenewalClock(InstantSource clock) {
    this.clock = clock;
    this.startedAt = clock.instant();
  }

  /**
   * The renewTime last seen, the operator's time when it was first seen, and who renewed (the holder);
   * {@code firstSight}: this process found that renewTime when it first looked, it did not see it change.
   */
  public record Seen(Instant renewTime, Instant at, String holder, boolean firstSight) {
    Seen(Instant renewTime, Instant at, String holder) {
      this(renewTime, at, holder, false);
    }
  }

  /** How a holder left the Lease when another pod took it over. */
  private record Held(String holder, LeaseView view) {}

  /**
   * The Lease is about to change hands ({@code older} is its last state under the previous holder):
   * remembers that holder's view, with the time this operator saw its renewal. Only for tracked Leases.
   */
  public void handedOver(Lease older) {
    String key = key(older.getMetadata().getNamespace(), older.getMetadata().getName());
    String holder = HeartbeatLeases.holder(older);
    Instant renew = renewTime(older);
    Seen before = seen.get(key);
    if (holder == null || renew == null || before == null) {
      return;
    }
    Instant at = renew.equals(before.renewTime()) ? before.at() : clock.instant();
    leftBy.put(key, new Held(holder, HeartbeatLeases.view(older, at)));
  }

  /** The Lease as {@code holder} left it when another pod took it over, if it was the last to leave it. */
  public Optional<LeaseView> leftBy(Lease lease, String holder) {
    Held held = leftBy.get(key(lease.getMetadata().getNamespace(), lease.getMetadata().getName()));
    return held != null && held.holder().equals(holder) ? Optional.of(held.view()) : Optional.empty();
  }

  /**
   * The current run's heartbeat when its Lease is gone or was recreated without a renewal (no evidence the
   * agent stopped): the last renewal this operator saw {@code holder} make after {@code runStart}, also when
   * another pod renewed after it; else, for a run older than this process that renewed before it started
   * ({@code renewedBefore}: status shows a verdict of the run), a renewal counted at the first time this
   * process looked (a restarted operator grants every live run a full timeout, api.md §12). A run that never
   * renewed gets none: its Lease says so, and a heartbeat made up for it would turn it Ready.
   */
  public Optional<Seen> lastRenewalBy(String namespace, String name, String holder, Instant runStart,
      boolean renewedBefore) {
    String key = key(namespace, name);
    Seen last = seen.get(key);
    if (last != null && holder.equals(last.holder()) && last.renewTime() != null && !last.at().isBefore(runStart)) {
      return Optional.of(last);
    }
    Held held = leftBy.get(key);
    if (held != null && holder.equals(held.holder()) && held.view().renewTime() != null
        && held.view().changeSeenAt() != null && !held.view().changeSeenAt().isBefore(runStart)) {
      return Optional.of(new Seen(held.view().renewTime(), held.view().changeSeenAt(), holder));
    }
    if (renewedBefore && runStart.isBefore(startedAt)) {
      Instant at = looked.computeIfAbsent(key, k -> clock.instant());
      return Optional.of(new Seen(at, at, holder));
    }
    return Optional.empty();
  }

  /** Records the Lease's renewTime if it changed and the Lease is tracked; returns true when it did. */
  public boolean observe(Lease lease) {
    String key = key(lease.getMetadata().getNamespace(), lease.getMetadata().getName());
    Instant renew = renewTime(lease);
    if (renew == null) {
      return false;
    }
    // only Leases a reconcile has looked at (seenAt) are tracked: a renewal racing the deletion of its
    // instance must not bring back what was forgotten
    Seen before = seen.get(key);
    if (before == null || renew.equals(before.renewTime())) {
      return false;
    }
    return seen.replace(key, before, new Seen(renew, clock.instant(), HeartbeatLeases.holder(lease)));
  }

  /**
   * When this operator saw the Lease's current renewTime appear; a renewTime not seen before counts as
   * seen now. Null when the Lease was never renewed.
   */
  public Instant seenAt(Lease lease) {
    Seen s = sighting(lease);
    return s == null ? null : s.at();
  }

  /**
   * What {@link #seenAt} tells, and whether it is this process's first look at a renewal made before it looked
   * (no earlier renewTime of the Lease was seen). Null when the Lease was never renewed.
   */
  public Seen sighting(Lease lease) {
    Instant renew = renewTime(lease);
    if (renew == null) {
      return null;
    }
    return seen.compute(key(lease.getMetadata().getNamespace(), lease.getMetadata().getName()),
        (k, old) -> old != null && Objects.equals(old.renewTime(), renew) ? old
            : new Seen(renew, clock.instant(), HeartbeatLeases.holder(lease), old == null));
  }

  /** The Lease's renewTime as an instant, or null. */
  public static Instant renewTime(Lease lease) {
    return lease.getSpec() == null || lease.getSpec().getRenewTime() == null ? null
        : lease.getSpec().getRenewTime().toInstant();
  }

  public void forget(String namespace, String name) {
    seen.remove(key(namespace, name));
    leftBy.remove(key(namespace, name));
    looked.remove(key(namespace, name));
  }

  /** How many Leases this clock remembers anything of. */
  public int size() {
    Set<String> keys = new HashSet<>(seen.keySet());
    keys.addAll(leftBy.keySet());
    keys.addAll(looked.keySet());
    return keys.size();
  }

  private static String key(String namespace, String name) {
    return namespace + "/" + name;
  }
}

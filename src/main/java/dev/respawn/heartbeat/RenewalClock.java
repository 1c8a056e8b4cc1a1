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
import java.util.function.LongSupplier;

/**
 * Remembers, per Lease, when this operator last saw its renewTime change, by its own clock (as
 * Kubernetes' node lifecycle controller does). Renewals that change nothing else do not trigger a
 * reconcile; the reconcile that wakes at the expiry time reads the time from here. Nothing of it is
 * written to status: after an operator restart the map is empty, and a Lease first seen by the new
 * process counts as renewed then, so every live run gets a full timeout (as Kubernetes' node lifecycle
 * controller grants every node after a restart).
 *
 * <p>What it keeps are ages, not wall-clock times: each sighting is stamped with monotonic nanoseconds and told as
 * "now minus its age" when read, so a step of the operator's wall clock (NTP correcting a large offset, a VM
 * resumed or migrated) ages no heartbeat at once, as Go's monotonic clock spares the node lifecycle controller.
 *
 * <p>When the Lease changes hands it also keeps how the previous holder left it: a renewal by a pod that
 * is not the current run is ignored (api.md §5), so it must not erase the current run's last heartbeat
 * either (an old pod still terminating may renew once more after the new run took the Lease over).
 */
public final class RenewalClock {
  private final InstantSource clock;
  private final LongSupplier ticker;
  private final Map<String, Mark> seen = new ConcurrentHashMap<>();
  private final Map<String, Held> leftBy = new ConcurrentHashMap<>();
  /**
   * When this process first looked for a Lease it found missing or never renewed, for runs older than it or
   * runs it watched without heartbeats first.
   */
  private final Map<String, Mark> looked = new ConcurrentHashMap<>();
  /** Per Lease, the pod of a run this process watched while its policy required no heartbeats. */
  private final Map<String, String> unrequired = new ConcurrentHashMap<>();
  private final Instant startedAt;

  /** A clock whose ages follow {@code clock} itself (tests that move a clock by hand). */
  public RenewalClock(InstantSource clock) {
    this(clock, () -> {
      Instant now = clock.instant();
      return now.getEpochSecond() * 1_000_000_000L + now.getNano();
    });
  }

  /** {@code ticker}: monotonic nanoseconds ({@code System::nanoTime}) that ages are measured with. */
  public RenewalClock(InstantSource clock, LongSupplier ticker) {
    this.clock = clock;
    this.ticker = ticker;
    this.startedAt = clock.instant();
  }

  /**
   * The renewTime last seen, the operator's time when it was first seen, and who renewed (the holder);
   * {@code firstSight}: this process found that renewTime when it first looked, it did not see it change.
   */
  public record Seen(Instant renewTime, Instant at, String holder, boolean firstSight) {}

  /** A renewTime seen, by whom, and the tick when it was first seen. */
  private record Mark(Instant renewTime, long tick, String holder, boolean firstSight) {}

  /** How a holder left the Lease when another pod took it over, and the tick its last renewal was seen at. */
  private record Held(String holder, LeaseView view, long tick) {}

  /** The operator's time {@code tick} stands for: now, less the age it measures. */
  private Instant at(long tick) {
    return clock.instant().minusNanos(ticker.getAsLong() - tick);
  }

  private Seen told(Mark m) {
    return new Seen(m.renewTime(), at(m.tick()), m.holder(), m.firstSight());
  }

  /**
   * The Lease is about to change hands ({@code older} is its last state under the previous holder):
   * remembers that holder's view, with the time this operator saw its renewal. Only for tracked Leases.
   */
  public void handedOver(Lease older) {
    String key = key(older.getMetadata().getNamespace(), older.getMetadata().getName());
    String holder = HeartbeatLeases.holder(older);
    Instant renew = renewTime(older);
    if (holder == null || renew == null) {
      return;
    }
    // under the tracked entry's lock: a forget (the instance deleted) either comes after, and drops what is put
    // here, or came before, and nothing is put
    seen.computeIfPresent(key, (k, before) -> {
      Held told = leftBy.get(key);
      if (told != null && told.holder().equals(holder) && renew.equals(told.view().renewTime())) {
        return before; // told already (a Lease read before the watch told the hand-over): kept as first told
      }
      boolean same = renew.equals(before.renewTime());
      // a renewal this process only found when it first looked stays one: it proves nothing about when it was made
      leftBy.put(key, new Held(holder, HeartbeatLeases.view(older, null, same && before.firstSight()),
          same ? before.tick() : ticker.getAsLong()));
      return before;
    });
  }

  /** The Lease as {@code holder} left it when another pod took it over, if it was the last to leave it. */
  public Optional<LeaseView> leftBy(Lease lease, String holder) {
    Held held = leftBy.get(key(lease.getMetadata().getNamespace(), lease.getMetadata().getName()));
    return held != null && held.holder().equals(holder) ? Optional.of(held.view().seenAt(at(held.tick())))
        : Optional.empty();
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
    Mark last = seen.get(key);
    if (last != null && holder.equals(last.holder()) && last.renewTime() != null
        && !at(last.tick()).isBefore(runStart)) {
      return Optional.of(new Seen(last.renewTime(), at(last.tick()), holder, last.firstSight()));
    }
    Held held = leftBy.get(key);
    if (held != null && holder.equals(held.holder()) && held.view().renewTime() != null
        && !at(held.tick()).isBefore(runStart)) {
      return Optional.of(new Seen(held.view().renewTime(), at(held.tick()), holder, held.view().firstSight()));
    }
    if (renewedBefore && runStart.isBefore(startedAt)) {
      // the renewTime made up for it is the time of the look, fixed; when it was seen ages with the ticker
      Mark look = looked.computeIfAbsent(key, k -> new Mark(clock.instant(), ticker.getAsLong(), holder, false));
      return Optional.of(new Seen(look.renewTime(), at(look.tick()), holder, true));
    }
    return Optional.empty();
  }

  /**
   * For a run older than this process ({@code runStart} before it started): when this process first looked
   * at the run's Lease, as an instant that ages with the ticker. A restarted operator grants every live run
   * a full heartbeat timeout from then (api.md §12), also one that never renewed. The same for a run this
   * process watched while its policy required no heartbeats ({@link #heartbeatsNotRequired}): a policy that
   * starts to require them grants every live run a full timeout from then, rather than ending them all at once.
   * Empty for other runs.
   */
  public Optional<Instant> firstLookAt(String namespace, String name, String holder, Instant runStart) {
    boolean older = runStart != null && runStart.isBefore(startedAt);
    if (!older && !holder.equals(unrequired.get(key(namespace, name)))) {
      return Optional.empty();
    }
    Mark look = looked.computeIfAbsent(key(namespace, name), k -> new Mark(clock.instant(), ticker.getAsLong(),
        holder, false));
    return Optional.of(at(look.tick()));
  }

  /**
   * The run of pod {@code holder}, whose heartbeat is Lease {@code name}, is live while its policy requires no
   * heartbeats: should it come to require them, the run is granted a full timeout from then.
   */
  public void heartbeatsNotRequired(String namespace, String name, String holder) {
    String key = key(namespace, name);
    unrequired.put(key, holder);
    looked.remove(key); // a grant made before heartbeats were dropped is not the next one
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
    Mark before = seen.get(key);
    if (before == null || renew.equals(before.renewTime())) {
      return false;
    }
    return seen.replace(key, before, new Mark(renew, ticker.getAsLong(), HeartbeatLeases.holder(lease), false));
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
   *
   * <p>A renewTime older than the one remembered, by the same holder, leaves it as it is: the reconcile's copy of
   * the Lease was read before the informer told a newer renewal ({@link #observe}), and taking the older one for new
   * would stamp it now and let the newer one, seen again, count as a renewal made later (a stopped agent caught up to
   * a timeout late).
   * An agent whose clock stepped back is told by the informer, in order: {@link #observe} takes any change. Another
   * holder's renewal is taken as it comes (a new run's agent, a Lease made anew: no informer update tells those).
   */
  public Seen sighting(Lease lease) {
    Instant renew = renewTime(lease);
    if (renew == null) {
      return null;
    }
    return told(seen.compute(key(lease.getMetadata().getNamespace(), lease.getMetadata().getName()),
        (k, old) -> old != null && (Objects.equals(old.renewTime(), renew) || old.renewTime() != null
            && renew.isBefore(old.renewTime()) && Objects.equals(old.holder(), HeartbeatLeases.holder(lease))) ? old
            : new Mark(renew, ticker.getAsLong(), HeartbeatLeases.holder(lease), old == null)));
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
    unrequired.remove(key(namespace, name));
  }

  /** How many Leases this clock remembers anything of. */
  public int size() {
    Set<String> keys = new HashSet<>(seen.keySet());
    keys.addAll(leftBy.keySet());
    keys.addAll(looked.keySet());
    keys.addAll(unrequired.keySet());
    return keys.size();
  }

  private static String key(String namespace, String name) {
    return namespace + "/" + name;
  }
}

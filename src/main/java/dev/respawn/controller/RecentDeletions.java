package dev.respawn.controller;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The pods this operator deleted a moment ago, by UID: the pod cache shows a deleted pod until the watch
 * delivers its deletion, and a reconcile in between (a wake-up, a Lease renewal) would delete it again, one
 * more API call answered 404. Kept for {@link #REMEMBERED}, at most {@link #MAX_ENTRIES}: by pod UID, not by
 * instance, so nothing of a deleted instance stays longer than that.
 */
final class RecentDeletions {
  static final Duration REMEMBERED = Duration.ofSeconds(30);
  static final int MAX_ENTRIES = 10_000;

  private final InstantSource clock;
  private final Map<String, Instant> deletedAt = new LinkedHashMap<>(16, 0.75f, false) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, Instant> eldest) {
      return size() > MAX_ENTRIES;
    }
  };

  RecentDeletions(InstantSource clock) {
    this.clock = clock;
  }

  /** Whether this operator deleted the pod of that UID within the last {@link #REMEMBERED}. */
  synchronized boolean deleted(String uid) {
    forgetOld();
    return uid != null && deletedAt.containsKey(uid);
  }

  /** The pod of that UID is deleted (or was already gone). */
  synchronized void record(String uid) {
    if (uid != null) {
      forgetOld();
      deletedAt.put(uid, clock.instant());
    }
  }

  private void forgetOld() {
    Instant cutoff = clock.instant().minus(REMEMBERED);
    var oldest = deletedAt.entrySet().iterator();
    while (oldest.hasNext() && oldest.next().getValue().isBefore(cutoff)) {
      oldest.remove();
    }
  }
}

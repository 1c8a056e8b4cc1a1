package dev.respawn.observability;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The memory of {@link KubeEventRecorder}: which Events exist (by object, reason, type and message),
 * how often each was seen, and a per-object token bucket for new Events. Both maps are LRUs bounded to
 * {@code capacity} keys. All decisions are made under one lock; the API calls happen outside it.
 */
final class EventSeriesCache {
  /** What identifies "the same Event". */
  record Key(String object, String reason, String type, String note) {}

  /** One Event written (or being written) to the API server. */
  static final class Entry {
    private final String namespace;
    private final String name;
    private boolean created;
    private boolean coreV1;
    private int count = 1;
    private int writtenCount = 1;
    private Instant lastObserved;
    private Instant lastWritten;

    Entry(String namespace, String name, Instant at) {
      this.namespace = namespace;
      this.name = name;
      this.lastObserved = at;
      this.lastWritten = at;
    }

    String namespace() {
      return namespace;
    }

    String name() {
      return name;
    }

    boolean coreV1() {
      return coreV1;
    }
  }

  enum Kind { CREATE, UPDATE, COALESCE, DROP }

  /**
   * What to do for one occurrence: create the entry's Event, update its series to count, or nothing.
   * previouslyWritten is the count the server had before an UPDATE (restored if the write fails).
   */
  record Step(Kind kind, Entry entry, int count, int previouslyWritten) {}

  /** A series count not written yet. */
  record Pending(Entry entry, int count, Instant lastObserved) {}

  private final int newEventsBurst;
  private final int newEventsPerMinute;
  private final Map<Key, Entry> entries;
  private final Map<String, TokenBucket> buckets;

  EventSeriesCache(int capacity, int newEventsBurst, int newEventsPerMinute) {
    this.newEventsBurst = newEventsBurst;
    this.newEventsPerMinute = newEventsPerMinute;
    this.entries = lru(capacity);
    this.buckets = lru(capacity);
  }

  private static <K, V> Map<K, V> lru(int capacity) {
    return new LinkedHashMap<>(16, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<K, V> eldest) {
        return size() > capacity;
      }
    };
  }

  synchronized Step next(Key key, String namespace, Instant now, Duration window, Duration seriesInterval,
      boolean rateLimited, Supplier<String> newName) {
    Entry e = entries.get(key);
    if (e != null && !now.isAfter(e.lastObserved.plus(window))) {
      e.count++;
      e.lastObserved = now;
      if (e.created && !now.isBefore(e.lastWritten.plus(seriesInterval))) {
        int previouslyWritten = e.writtenCount;
        e.lastWritten = now;
        e.writtenCount = e.count;
        return new Step(Kind.UPDATE, e, e.count, previouslyWritten);
      }
      return new Step(Kind.COALESCE, e, e.count, e.writtenCount);
    }
    TokenBucket bucket = buckets.computeIfAbsent(key.object(), o -> new TokenBucket(newEventsBurst, newEventsPerMinute, now));
    if (!bucket.tryTake(now) && rateLimited) {
      return new Step(Kind.DROP, e, 0, 0);
    }
    Entry fresh = new Entry(namespace, newName.get(), now);
    entries.put(key, fresh);
    return new Step(Kind.CREATE, fresh, 1, 0);
  }

  synchronized void created(Key key, Entry entry, boolean coreV1) {
    entry.created = true;
    entry.coreV1 = coreV1;
  }

  /** Forgets the entry (the Event was not created, or is gone from the server). */
  synchronized void forget(Key key, Entry entry) {
    entries.remove(key, entry);
  }

  /** A series update failed: the server still has the count it had before; flush() retries. */
  /** Drops everything kept about one regarding object (it was deleted). */
  synchronized void forgetObject(String object) {
    entries.keySet().removeIf(k -> k.object().equals(object));
    buckets.remove(object);
  }

  /** How many Events and objects are remembered (for tests of churn). */
  synchronized int size() {
    return entries.size() + buckets.size();
  }

  synchronized void updateFailed(Step update) {
    Entry e = update.entry();
    e.writtenCount = Math.min(e.writtenCount, update.previouslyWritten());
  }

  synchronized List<Pending> pending() {
    List<Pending> pending = new ArrayList<>();
    for (Entry e : entries.values()) {
      if (e.created && e.writtenCount < e.count) {
        pending.add(new Pending(e, e.count, e.lastObserved));
      }
    }
    return pending;
  }

  synchronized void flushed(Pending p) {
    Entry e = p.entry();
    e.writtenCount = Math.max(e.writtenCount, p.count());
    e.lastWritten = p.lastObserved().isAfter(e.lastWritten) ? p.lastObserved() : e.lastWritten;
  }

  /** Up to {@code capacity} tokens, {@code perMinute} refilled continuously; starts full. */
  private static final class TokenBucket {
    private final double capacity;
    private final double perMinute;
    private double tokens;
    private Instant last;

    TokenBucket(int capacity, int perMinute, Instant now) {
      this.capacity = capacity;
      this.perMinute = perMinute;
      this.tokens = capacity;
      this.last = now;
    }

    boolean tryTake(Instant now) {
      if (now.isAfter(last)) {
        double refill = Duration.between(last, now).toNanos() * perMinute / 60e9;
        tokens = Math.min(capacity, tokens + refill);
        last = now;
      }
      if (tokens >= 1) {
        tokens -= 1;
        return true;
      }
      return false;
    }
  }
}

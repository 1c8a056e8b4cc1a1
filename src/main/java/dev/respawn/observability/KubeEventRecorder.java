package dev.respawn.observability;

import dev.respawn.policy.Bounds;
import dev.respawn.policy.Decision.Notice;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kubernetes Events about AgentInstances (api.md §8): events.k8s.io/v1, regarding the instance,
 * related to its pod, reported by {@value #REPORTING_CONTROLLER}.
 *
 * <p>A crash loop cannot flood the API server: the same (object uid, reason, type, message) seen again
 * within the dedup window bumps the existing Event's {@code series} (count, lastObservedTime) instead
 * of creating one, at most one such PATCH per Event per {@code seriesUpdateInterval} (repeats in between
 * are counted and carried by the next write, or by {@link #flush()}); new Events are rate-limited per
 * object and the excess is dropped and counted ({@link #dropped()}). The dedup cache is an LRU.
 *
 * <p>Never throws: a failed write is counted ({@link #failures()}) and logged, a refused one as a warning,
 * one worth another try ({@link Outcome#UNAVAILABLE}) at debug level: its caller may try it again as it was decided
 * ({@link #attempt}: the same Event name, no second rate-limit token). Writes are synchronous, on the caller's
 * thread. Thread-safe.
 */
public final class KubeEventRecorder {
  public static final String REPORTING_CONTROLLER = "respawn.dev/operator";
  /** Kubernetes refuses an Event note longer than 1 KiB. */
  public static final int NOTE_BYTES = Bounds.NOTE_BYTES;
  static final int NAME_BYTES = 253;
  /**
   * The reasons never rate-limited: an Escalated Event ends a lifecycle (only an operator action continues
   * it) and carries the last failure and what to do next (api.md §3); it comes once per lifecycle. Each
   * transition of a shared dependency's circuit writes its Event (api.md §11); they come at most two per
   * openDuration (Open -> HalfOpen -> Open) and one more when it closes.
   */
  static final java.util.Set<String> NEVER_DROPPED = java.util.Set.of(dev.respawn.policy.EventReason.Escalated.name(),
      dev.respawn.policy.EventReason.DependencyCircuitChanged.name());
  static final Logger LOG = LoggerFactory.getLogger(KubeEventRecorder.class);

  /**
   * @param dedupWindow a repeat later than this after the last one starts a new Event
   * @param cacheSize how many distinct Events (and objects, for the rate limit) are remembered
   * @param newEventsBurst new Events per regarding object at once, before the rate below applies
   * @param newEventsPerObjectPerMinute new Events per regarding object per minute past the burst; more are dropped
   * @param seriesUpdateInterval the least time between two series PATCHes of one Event (zero: every repeat)
   */
  public record Settings(Duration dedupWindow, int cacheSize, int newEventsBurst, int newEventsPerObjectPerMinute,
      Duration seriesUpdateInterval) {
    public Settings {
      if (dedupWindow.isNegative() || seriesUpdateInterval.isNegative() || cacheSize < 1
          || newEventsPerObjectPerMinute < 1 || newEventsBurst < 1) {
        throw new IllegalArgumentException("invalid event recorder settings");
      }
    }

    /** A burst as large as a minute's rate. */
    public Settings(Duration dedupWindow, int cacheSize, int newEventsPerObjectPerMinute, Duration seriesUpdateInterval) {
      this(dedupWindow, cacheSize, newEventsPerObjectPerMinute, newEventsPerObjectPerMinute, seriesUpdateInterval);
    }

    /**
     * A burst of 25 new Events per object, as client-go's recorder allows, then 10 a minute (client-go: one per
     * 5 minutes): every decision of a quick run of failures is told, a crash loop's are not all.
     */
    public static Settings defaults() {
      return new Settings(Duration.ofMinutes(10), 4096, 25, 10, Duration.ofSeconds(5));
    }
  }

  /** What became of one recorded Event. */
  public enum Outcome {
    /** A new Event was written. */
    CREATED,
    /** A repeat: the existing Event's series was updated. */
    SERIES_UPDATED,
    /** A repeat: counted; the series update waits for the next write (seriesUpdateInterval) or flush(). */
    COALESCED,
    /** Rate-limited: not written. */
    DROPPED,
    /** The API server refused the write (4xx, or an answer it could not read); logged. */
    FAILED,
    /**
     * Not written: the API server could not be reached, did not answer in time, or asked to come back later
     * (429, 5xx). Worth another try.
     */
    UNAVAILABLE
  }

  /** What a recorder and the writes it starts ({@link EventAttempt}) share. */
  record Parts(EventWriter writer, InstantSource clock, Settings settings, EventSeriesCache cache, AtomicLong dropped,
      AtomicLong coalesced, AtomicLong failures) {}

  private final Parts parts;
  private final EventWriter writer;
  private final InstantSource clock;
  private final EventSeriesCache cache;

  public KubeEventRecorder(KubernetesClient client, String reportingInstance, InstantSource clock) {
    this(client, reportingInstance, clock, Settings.defaults());
  }

  public KubeEventRecorder(KubernetesClient client, String reportingInstance, InstantSource clock,
      Settings settings) {
    this.writer = new EventWriter(client, REPORTING_CONTROLLER,
        Bounds.truncateUtf8(Objects.requireNonNull(reportingInstance), 128));
    this.clock = Objects.requireNonNull(clock);
    this.cache = new EventSeriesCache(settings.cacheSize(), settings.newEventsBurst(),
        settings.newEventsPerObjectPerMinute());
    this.parts = new Parts(writer, clock, Objects.requireNonNull(settings), cache, new AtomicLong(), new AtomicLong(),
        new AtomicLong());
  }

  /** The operator's pod name (env POD_NAME, else HOSTNAME), for reportingInstance. */
  public static String reportingInstanceFromEnvironment() {
    Map<String, String> env = System.getenv();
    for (String key : new String[] {"POD_NAME", "HOSTNAME"}) {
      String value = env.get(key);
      if (value != null && !value.isBlank()) {
        return value;
      }
    }
    return "respawn-operator";
  }

  /** Records a decision's notice about {@code regarding}, happening now; {@code related} (the pod) may be null. */
  public Outcome record(HasMetadata regarding, HasMetadata related, Notice notice) {
    return record(regarding, related, notice, clock.instant());
  }

  /**
   * Records a decision's notice that happened {@code at} (the Event's time); the dedup and rate limits go by the
   * time it is recorded. A write the API server could not take is given up ({@link Outcome#UNAVAILABLE}): to try it
   * again as it was decided, use {@link #attempt}. Never throws.
   */
  public Outcome record(HasMetadata regarding, HasMetadata related, Notice notice, Instant at) {
    EventAttempt attempt = attempt(regarding, related, notice, at);
    Outcome outcome = attempt.write();
    if (outcome == Outcome.UNAVAILABLE) {
      attempt.abandon();
    }
    return outcome;
  }

  /** A decision's notice that happened {@code at}, to be written by {@link EventAttempt#write()}, tried again if need be. */
  EventAttempt attempt(HasMetadata regarding, HasMetadata related, Notice notice, Instant at) {
    String note = Bounds.oneLine(notice.message() == null ? "" : notice.message(), NOTE_BYTES);
    ObjectReference regardingRef = EventWriter.reference(regarding);
    String objectKey = regardingRef.getUid() != null ? regardingRef.getUid()
        : regardingRef.getNamespace() + "/" + regardingRef.getName();
    EventSeriesCache.Key key = new EventSeriesCache.Key(objectKey, notice.reason().name(), notice.type().name(), note);
    return new EventAttempt(parts, regardingRef, related == null ? null : EventWriter.reference(related), key,
        notice.reason().action(), at);
  }

  /** The time by this recorder's clock. */
  Instant now() {
    return clock.instant();
  }

  /** Writes the counts of repeats still waiting for their series update. Never throws. */
  public int flush() {
    int written = 0;
    for (EventSeriesCache.Pending p : cache.pending()) {
      try {
        writer.updateSeries(p.entry().namespace(), p.entry().name(), p.entry().coreV1(), p.count(), p.lastObserved());
        cache.flushed(p);
        written++;
      } catch (RuntimeException e) {
        parts.failures().incrementAndGet();
        LOG.warn("Could not update Event {}/{}: {}", p.entry().namespace(), p.entry().name(), describe(e));
      }
    }
    return written;
  }

  /** Forgets the Events of an object that no longer exists (its uid, or namespace/name without one). */
  public void forget(HasMetadata regarding) {
    ObjectReference ref = EventWriter.reference(regarding);
    cache.forgetObject(ref.getUid() != null ? ref.getUid() : ref.getNamespace() + "/" + ref.getName());
  }

  /** How many Events and objects the dedup cache remembers. */
  public int remembered() {
    return cache.size();
  }

  /** New Events not written because of the per-object rate limit. */
  public long dropped() {
    return parts.dropped().get();
  }

  /** Repeats whose series update was deferred. */
  public long coalesced() {
    return parts.coalesced().get();
  }

  /** Writes the API server refused or that failed. */
  public long failures() {
    return parts.failures().get();
  }

  /** True once the cluster turned out not to serve events.k8s.io/v1. */
  public boolean usesCoreV1Events() {
    return writer.usesCoreV1();
  }

  /** The exception's message and its causes' (fabric8 often says only "An error has occurred."). */
  static String describe(Throwable e) {
    StringBuilder text = new StringBuilder(String.valueOf(e.getMessage()));
    Throwable cause = e.getCause();
    for (int depth = 0; cause != null && depth < 5; depth++, cause = cause.getCause()) {
      text.append(depth == 0 ? " (caused by " : "; ").append(cause);
    }
    return e.getCause() == null ? text.toString() : text.append(')').toString();
  }

  static String namespaceOf(HasMetadata o) {
    return o == null || o.getMetadata() == null ? null : o.getMetadata().getNamespace();
  }

  static String nameOf(HasMetadata o) {
    return o == null || o.getMetadata() == null ? null : o.getMetadata().getName();
  }
}

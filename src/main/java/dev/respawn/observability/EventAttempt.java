package dev.respawn.observability;

import dev.respawn.observability.KubeEventRecorder.Outcome;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Instant;

/**
 * One Event being written. Its first {@link #write()} asks the series cache what to do (create a new Event,
 * update an existing one's series, fold the repeat, or drop it for the rate limit); a write the API server could
 * not take ({@link Outcome#UNAVAILABLE}) is carried out again as it was decided: a new Event keeps its name (so a
 * try whose answer was lost is met by a 409, not written twice) and takes no second rate-limit token, and a series
 * update writes the same count (the repeat is not counted twice). {@link #abandon()} gives it up. Not thread-safe:
 * one caller at a time (the Event thread).
 */
final class EventAttempt {
  private final KubeEventRecorder.Parts parts;
  private final ObjectReference regarding;
  private final ObjectReference related;
  private final EventSeriesCache.Key key;
  private final String action;
  private final Instant at;
  private EventSeriesCache.Step step;

  EventAttempt(KubeEventRecorder.Parts parts, ObjectReference regarding, ObjectReference related,
      EventSeriesCache.Key key, String action, Instant at) {
    this.parts = parts;
    this.regarding = regarding;
    this.related = related;
    this.key = key;
    this.action = action;
    this.at = at;
  }

  /** Writes it, or tries what was decided again; never throws. */
  Outcome write() {
    try {
      return step == null ? decide() : carryOut();
    } catch (RuntimeException e) {
      parts.failures().incrementAndGet();
      if (EventWriter.worthAnotherTry(e)) {
        KubeEventRecorder.LOG.debug("Could not write Event {} about {}/{} (to be tried again): {}", key.reason(),
            regarding.getNamespace(), regarding.getName(), KubeEventRecorder.describe(e));
        return Outcome.UNAVAILABLE;
      }
      KubeEventRecorder.LOG.warn("Could not write Event {} about {}/{}: {}", key.reason(), regarding.getNamespace(),
          regarding.getName(), KubeEventRecorder.describe(e));
      return Outcome.FAILED;
    }
  }

  /**
   * Gives up a write the API server could not take: a new Event is forgotten (a later repeat creates one), a series
   * update is left to the next flush.
   */
  void abandon() {
    if (step != null && step.kind() == EventSeriesCache.Kind.CREATE) {
      parts.cache().forget(key, step.entry());
    }
  }

  private Outcome decide() {
    Instant now = parts.clock().instant();
    step = parts.cache().next(key, regarding.getNamespace(), now, parts.settings().dedupWindow(),
        parts.settings().seriesUpdateInterval(), !KubeEventRecorder.NEVER_DROPPED.contains(key.reason()),
        () -> parts.writer().name(regarding.getName(), now));
    return switch (step.kind()) {
      case DROP -> {
        parts.dropped().incrementAndGet();
        yield Outcome.DROPPED;
      }
      case COALESCE -> {
        parts.coalesced().incrementAndGet();
        yield Outcome.COALESCED;
      }
      case UPDATE, CREATE -> carryOut();
    };
  }

  private Outcome carryOut() {
    EventSeriesCache.Entry entry = step.entry();
    return switch (step.kind()) {
      case UPDATE -> updateSeries(entry);
      case CREATE -> create(entry);
      case DROP -> Outcome.DROPPED;
      case COALESCE -> Outcome.COALESCED;
    };
  }

  private Outcome updateSeries(EventSeriesCache.Entry entry) {
    try {
      parts.writer().updateSeries(entry.namespace(), entry.name(), entry.coreV1(), step.count(), at);
      parts.cache().flushed(new EventSeriesCache.Pending(entry, step.count(), at));
      return Outcome.SERIES_UPDATED;
    } catch (KubernetesClientException e) {
      if (e.getCode() == 404) { // the Event expired on the server: start a new one
        parts.cache().forget(key, entry);
        step = null;
        return decide();
      }
      parts.cache().updateFailed(step);
      throw e;
    } catch (RuntimeException e) {
      parts.cache().updateFailed(step);
      throw e;
    }
  }

  private Outcome create(EventSeriesCache.Entry entry) {
    try {
      boolean core = parts.writer().create(new EventWriter.Draft(regarding.getNamespace(), entry.name(), regarding,
          related, key.type(), key.reason(), action, key.note(), at));
      parts.cache().created(key, entry, core);
      return Outcome.CREATED;
    } catch (RuntimeException e) {
      if (e instanceof KubernetesClientException k && k.getCode() == 409) {
        // its name is this writer's own: a try whose answer was lost created it
        parts.cache().created(key, entry, parts.writer().usesCoreV1());
        return Outcome.CREATED;
      }
      if (!EventWriter.worthAnotherTry(e)) {
        parts.cache().forget(key, entry);
      }
      throw e;
    }
  }
}

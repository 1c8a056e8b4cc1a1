package dev.respawn.observability;

import dev.respawn.observability.KubeEventRecorder.Outcome;
import dev.respawn.policy.Decision.Notice;
import io.fabric8.kubernetes.api.model.HasMetadata;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes Events on a thread of its own, in the order they were told, so that no reconcile waits for an
 * Event: a restart's own writes (status, pod) go first, and an API server slow to take Events never slows
 * a restart. Bounded, like client-go's event broadcaster: while {@code capacity} Events wait, more are
 * dropped and counted ({@link #dropped()}). An Event the API server could not take (no answer, 429, 5xx) is
 * tried again, after 0.5 s, 1 s, 2 s, ... up to 10 s apart, until it is {@link #RETRY_FOR} old (client-go's
 * recorder tries 12 times 10 s apart); the Events behind it wait, and are tried once each when they are as old.
 * Forgetting an object and flushing series counts are queued too, behind the Events before them. The thread
 * ends after a while with nothing to do and comes back when needed. Thread-safe.
 */
public final class EventQueue implements AutoCloseable {
  /** Events that may wait at once (client-go keeps up to 1,000 too). */
  public static final int CAPACITY = 1000;
  /** How long after it was told an Event the API server could not take is tried again. */
  public static final Duration RETRY_FOR = Duration.ofMinutes(2);
  static final Duration FIRST_RETRY = Duration.ofMillis(500);
  static final Duration LONGEST_PAUSE = Duration.ofSeconds(10);
  static final Duration IDLE = Duration.ofSeconds(30);
  private static final Logger LOG = LoggerFactory.getLogger(EventQueue.class);

  /** Waits between two tries of an Event. */
  @FunctionalInterface
  interface Pause {
    void pause(Duration duration) throws InterruptedException;

    /** The thread sleeps: an interrupt (the operator stops) ends the pause and the Event's tries. */
    Pause SLEEP = d -> Thread.sleep(d.toMillis());
  }

  private final KubeEventRecorder recorder;
  private final Pause pause;
  private final ThreadPoolExecutor writer;
  private final AtomicLong dropped = new AtomicLong();
  private final AtomicLong lost = new AtomicLong();

  public EventQueue(KubeEventRecorder recorder) {
    this(recorder, CAPACITY, Pause.SLEEP);
  }

  EventQueue(KubeEventRecorder recorder, int capacity, Pause pause) {
    this.recorder = recorder;
    this.pause = pause;
    this.writer = new ThreadPoolExecutor(1, 1, IDLE.toMillis(), TimeUnit.MILLISECONDS,
        new LinkedBlockingQueue<>(capacity), r -> {
          Thread t = new Thread(r, "respawn-events");
          t.setDaemon(true);
          return t;
        });
    writer.allowCoreThreadTimeOut(true);
  }

  /** Queues a decision's notice about {@code regarding}; {@code related} (the pod) may be null. */
  public void record(HasMetadata regarding, HasMetadata related, Notice notice) {
    Instant told = recorder.now();
    if (!offer(new EventWork(recorder.attempt(regarding, related, notice, told), notice, about(regarding), told))) {
      long n = dropped.incrementAndGet();
      if (n == 1 || n % 100 == 0) {
        LOG.warn("{} Events waiting to be written: {} {} about {} dropped ({} so far)", writer.getQueue().size(),
            notice.reason(), notice.type(), about(regarding), n);
      }
    }
  }

  /** One Event to write, told at {@code told}. */
  private final class EventWork implements Runnable {
    private final EventAttempt attempt;
    private final Notice notice;
    private final String about;
    private final Instant told;

    EventWork(EventAttempt attempt, Notice notice, String about, Instant told) {
      this.attempt = attempt;
      this.notice = notice;
      this.about = about;
      this.told = told;
    }

    /** Writes it, trying again while the API server cannot take it, until it is RETRY_FOR old. */
    @Override
    public void run() {
      Duration wait = FIRST_RETRY;
      for (int tries = 1; ; tries++) {
        if (attempt.write() != Outcome.UNAVAILABLE) {
          if (tries > 1) {
            LOG.info("Event {} about {} written at try {}", notice.reason(), about, tries);
          }
          return;
        }
        if (recorder.now().plus(wait).isAfter(told.plus(RETRY_FOR))) {
          giveUp();
          LOG.warn("Event {} about {} not written: the API server did not take it in {} tries over {}s",
              notice.reason(), about, tries, Duration.between(told, recorder.now()).toSeconds());
          return;
        }
        if (tries == 1) {
          LOG.warn("Event {} about {} not written yet: the API server did not take it; trying again for up to {}s",
              notice.reason(), about, RETRY_FOR.toSeconds());
        }
        try {
          pause.pause(wait);
        } catch (InterruptedException e) { // the operator stops
          giveUp();
          Thread.currentThread().interrupt();
          return;
        }
        wait = wait.multipliedBy(2).compareTo(LONGEST_PAUSE) > 0 ? LONGEST_PAUSE : wait.multipliedBy(2);
      }
    }

    void giveUp() {
      attempt.abandon();
      lost.incrementAndGet();
    }
  }

  private static String about(HasMetadata o) {
    return KubeEventRecorder.namespaceOf(o) + "/" + KubeEventRecorder.nameOf(o);
  }

  /** Forgets the Events of an object that is gone, once the Events queued before are written. */
  public void forget(HasMetadata object) {
    if (!offer(() -> recorder.forget(object))) {
      recorder.forget(object); // never lost: a leak otherwise (an Event still queued may be remembered again,
      // until the recorder's bounded cache evicts it)
    }
  }

  /** Writes the coalesced repeats' counts, after the Events queued before. */
  public void flush() {
    offer(recorder::flush); // when full, the next flush writes them
  }

  /** Events not written because too many waited. */
  public long dropped() {
    return dropped.get();
  }

  /**
   * Events the API server did not take, after trying again for {@link #RETRY_FOR} (or until the operator stopped), and
   * Events still waiting when the operator stopped.
   */
  public long lost() {
    return lost.get();
  }

  /** Events (and other work) waiting. */
  public int waiting() {
    return writer.getQueue().size() + writer.getActiveCount();
  }

  private boolean offer(Runnable work) {
    try {
      writer.execute(work);
      return true;
    } catch (RejectedExecutionException e) {
      return false;
    }
  }

  /**
   * Writes what waits (for up to {@code atMost}), the coalesced repeats' counts last (api.md §8: a repeat
   * is visible in its series within 30 s, a stopping operator included), then stops the thread.
   */
  public void close(Duration atMost) {
    flush();
    writer.shutdown();
    try {
      if (!writer.awaitTermination(atMost.toMillis(), TimeUnit.MILLISECONDS)) {
        long events = writer.shutdownNow().stream().filter(EventWork.class::isInstance).count();
        lost.addAndGet(events); // the one being written, if any, counts itself when its pause is interrupted
        LOG.warn("{} Events were not written before the operator stopped", events);
      }
    } catch (InterruptedException e) {
      writer.shutdownNow();
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void close() {
    close(Duration.ofSeconds(5));
  }
}

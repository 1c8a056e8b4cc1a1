package dev.respawn.observability;

import dev.respawn.policy.Decision.Notice;
import io.fabric8.kubernetes.api.model.HasMetadata;
import java.time.Duration;
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
 * dropped and counted ({@link #dropped()}). Forgetting an object and flushing series counts are queued too,
 * behind the Events before them. The thread ends after a while with nothing to do and comes back when
 * needed. Thread-safe.
 */
public final class EventQueue implements AutoCloseable {
  /** Events that may wait at once (client-go keeps up to 1,000 too). */
  public static final int CAPACITY = 1000;
  static final Duration IDLE = Duration.ofSeconds(30);
  private static final Logger LOG = LoggerFactory.getLogger(EventQueue.class);

  private final KubeEventRecorder recorder;
  private final ThreadPoolExecutor writer;
  private final AtomicLong dropped = new AtomicLong();

  public EventQueue(KubeEventRecorder recorder) {
    this(recorder, CAPACITY);
  }

  EventQueue(KubeEventRecorder recorder, int capacity) {
    this.recorder = recorder;
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
    if (!offer(() -> recorder.record(regarding, related, notice))) {
      long n = dropped.incrementAndGet();
      if (n == 1 || n % 100 == 0) {
        LOG.warn("{} Events waiting to be written: {} {} about {}/{} dropped ({} so far)", writer.getQueue().size(),
            notice.reason(), notice.type(), regarding.getMetadata().getNamespace(),
            regarding.getMetadata().getName(), n);
      }
    }
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
        LOG.warn("{} Events were not written before the operator stopped", writer.shutdownNow().size());
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

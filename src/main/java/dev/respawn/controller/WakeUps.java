package dev.respawn.controller;

import dev.respawn.api.v1alpha1.AgentInstance;
import io.javaoperatorsdk.operator.processing.event.Event;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.AbstractEventSource;
import io.javaoperatorsdk.operator.processing.event.source.ResourceEventAware;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The one wake-up each instance waits for (its next restart, its heartbeat deadline, the end of its startup
 * grace, ...): a reconcile of it at that moment, set anew at the end of every reconcile of it.
 *
 * <p>JOSDK's own reschedule keeps its timer tasks in a {@code java.util.Timer}, whose queue holds a cancelled task
 * until the moment it was due: every instance deleted while waiting left about 200 bytes behind for as long as
 * its wake-up was away (a startup grace, a backoff of hours), so memory grew with churn (api.md §8: a deleted
 * instance leaves no trace in memory). Here a cancelled wake-up leaves the queue at once.
 */
final class WakeUps extends AbstractEventSource<Void, AgentInstance> implements ResourceEventAware<AgentInstance> {
  private final Map<ResourceID, ScheduledFuture<?>> pending = new ConcurrentHashMap<>();
  private volatile ScheduledThreadPoolExecutor timer;

  WakeUps() {
    super(Void.class, "wake-ups");
  }

  /**
   * After a reconcile of {@code id}: a reconcile again after {@code delay}, or none when empty. Either way the
   * wake-up set before is gone (a reconcile decides anew when it next needs one).
   */
  void set(ResourceID id, Optional<Duration> delay) {
    ScheduledThreadPoolExecutor running = timer;
    if (delay.isEmpty() || running == null) {
      cancel(id);
      return;
    }
    ScheduledFuture<?>[] scheduled = new ScheduledFuture<?>[1];
    ScheduledFuture<?> future = running.schedule(() -> {
      // only the wake-up still set for it is taken out: a newer one may have replaced this one meanwhile
      pending.remove(id, scheduled[0]);
      getEventHandler().handleEvent(new Event(id));
    }, nanos(delay.get()), TimeUnit.NANOSECONDS);
    scheduled[0] = future;
    ScheduledFuture<?> earlier = pending.put(id, future);
    if (earlier != null) {
      earlier.cancel(false);
    }
  }

  /** A delay the timer takes: none below zero, at most about 292 years (a status edited to the year 9999). */
  static long nanos(Duration delay) {
    return delay.isNegative() ? 0 : delay.compareTo(Duration.ofNanos(Long.MAX_VALUE)) >= 0 ? Long.MAX_VALUE
        : delay.toNanos();
  }

  /** The instance is gone: its wake-up with it. */
  void cancel(ResourceID id) {
    ScheduledFuture<?> earlier = pending.remove(id);
    if (earlier != null) {
      earlier.cancel(false);
    }
  }

  /** Wake-ups set and not yet due, and tasks in the timer's queue (tests: nothing stays of a deleted instance). */
  int[] sizes() {
    ScheduledThreadPoolExecutor running = timer;
    return new int[] {pending.size(), running == null ? 0 : running.getQueue().size()};
  }

  @Override
  public void onResourceDeleted(AgentInstance instance) {
    cancel(ResourceID.fromResource(instance));
  }

  @Override
  public Set<Void> getSecondaryResources(AgentInstance primary) {
    return Set.of();
  }

  @Override
  public synchronized void start() {
    if (timer == null) {
      ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, r -> {
        Thread t = new Thread(r, "respawn-wake-ups");
        t.setDaemon(true);
        return t;
      });
      executor.setRemoveOnCancelPolicy(true);
      timer = executor;
    }
    super.start();
  }

  @Override
  public synchronized void stop() {
    ScheduledThreadPoolExecutor running = timer;
    timer = null;
    if (running != null) {
      running.shutdownNow();
    }
    pending.clear();
    super.stop();
  }
}

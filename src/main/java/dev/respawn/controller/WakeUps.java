package dev.respawn.controller;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentInstanceSpec;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.javaoperatorsdk.operator.processing.event.Event;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.AbstractEventSource;
import io.javaoperatorsdk.operator.processing.event.source.ResourceAction;
import io.javaoperatorsdk.operator.processing.event.source.ResourceEventAware;
import io.javaoperatorsdk.operator.processing.event.source.controller.ResourceEvent;
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
  /** Names deleted within {@link #REMADE_WITHIN}: the deleted instance, and when (nanoTime). */
  private final Map<ResourceID, Deleted> deleted = new ConcurrentHashMap<>();
  /**
   * Instances made anew after a deletion of their name (whose handling may not have ended yet), with the deleted one
   * and when.
   */
  private final Map<ResourceID, Remade> remade = new ConcurrentHashMap<>();

  private record Deleted(AgentInstance instance, long at) {}

  private record Remade(AgentInstance instance, AgentInstance gone, long at) {}
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
    ScheduledFuture<?>[] self = new ScheduledFuture<?>[1];
    // set under the map's lock for the id: a wake-up due at once, run before it was put, still takes itself out
    pending.compute(id, (key, earlier) -> {
      if (earlier != null) {
        earlier.cancel(false);
      }
      self[0] = running.schedule(() -> {
        // only the wake-up still set for it is taken out: a newer one may have replaced this one meanwhile
        pending.computeIfPresent(id, (k, set) -> set == self[0] ? null : set);
        getEventHandler().handleEvent(new Event(id));
      }, nanos(delay.get()), TimeUnit.NANOSECONDS);
      return self[0];
    });
  }

  /**
   * The instance whose deletion JOSDK hands over ({@code handed}): the deleted one. JOSDK builds the deletion's
   * reconcile from what its cache holds for the name when the reconcile that ran during the deletion ends, and an
   * instance made anew meanwhile is what it holds then: the deleted one (another UID) is known from its delete event.
   */
  AgentInstance deleted(AgentInstance handed) {
    Remade made = remade.get(ResourceID.fromResource(handed));
    return made != null && made.gone() != null && java.util.Objects.equals(made.instance().getMetadata().getUid(),
        handed.getMetadata().getUid()) ? made.gone() : handed;
  }

  /**
   * The deletion of {@code deleted} is handled (its last reconcile): an instance made anew under its name meanwhile
   * ({@code kubectl replace --force}, a GitOps replace) has its creation told again shortly after. JOSDK drops every
   * event of a name from its delete event to the end of the deleted object's reconciles, and a timer's event for a
   * name it holds no state of, so the new instance would never be reconciled until it changed. It is known by its
   * create event ({@link #onResourceCreated}), which the informer delivers after the delete event.
   */
  void afterDeletion(AgentInstance deleted) {
    Remade made = remade.remove(ResourceID.fromResource(deleted));
    if (made != null) {
      tellCreatedAgain(made.instance());
    }
  }

  /** How soon a re-made instance's creation is told again: after JOSDK let go of the deleted one (right after). */
  static final Duration REMADE_LOOK = Duration.ofMillis(200);
  /** How long a deleted name is remembered for a re-make of it: far longer than a reconcile takes. */
  static final Duration REMADE_WITHIN = Duration.ofSeconds(60);

  @Override
  public void onResourceCreated(AgentInstance instance) {
    ResourceID id = ResourceID.fromResource(instance);
    forgetOlderThanAMinute(System.nanoTime());
    Deleted gone = deleted.remove(id);
    if (gone != null && System.nanoTime() - gone.at() < REMADE_WITHIN.toNanos()) {
      // made anew soon after its deletion: told again now, and once more when the deletion is handled (if it is not)
      remade.put(id, new Remade(instance, gone.instance(), System.nanoTime()));
      tellCreatedAgain(instance);
    }
  }

  private void tellCreatedAgain(AgentInstance instance) {
    ScheduledThreadPoolExecutor running = timer;
    if (running != null) {
      ResourceID id = ResourceID.fromResource(instance);
      running.schedule(() -> getEventHandler().handleEvent(new ResourceEvent(ResourceAction.ADDED, id, instance)),
          REMADE_LOOK.toNanos(), TimeUnit.NANOSECONDS);
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

  /** Whether an instance was made anew under the name since its deletion (tests). */
  boolean madeAnew(ResourceID id) {
    return remade.containsKey(id);
  }

  /** Names remembered as deleted (for {@link #REMADE_WITHIN}) or as re-made (tests: bounded). */
  int remembered() {
    return deleted.size() + remade.size();
  }

  @Override
  public void onResourceDeleted(AgentInstance instance) {
    ResourceID id = ResourceID.fromResource(instance);
    cancel(id);
    long now = System.nanoTime();
    forgetOlderThanAMinute(now);
    remade.remove(id);
    deleted.put(id, new Deleted(trace(instance), now));
  }

  /** What forgetting a deleted instance needs of it (names, UID, heartbeat Lease), for a minute: not its template. */
  private static AgentInstance trace(AgentInstance instance) {
    AgentInstance trace = new AgentInstance();
    trace.setMetadata(new ObjectMetaBuilder().withName(instance.getMetadata().getName())
        .withNamespace(instance.getMetadata().getNamespace()).withUid(instance.getMetadata().getUid()).build());
    AgentInstanceSpec spec = new AgentInstanceSpec();
    spec.heartbeat = instance.getSpec() == null ? null : instance.getSpec().heartbeat;
    trace.setSpec(spec);
    return trace;
  }

  /** Bounded by the deletions and re-makes of a minute: dropped at the next deletion or creation after that. */
  private void forgetOlderThanAMinute(long now) {
    deleted.values().removeIf(d -> now - d.at() >= REMADE_WITHIN.toNanos());
    remade.values().removeIf(r -> now - r.at() >= REMADE_WITHIN.toNanos());
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
    deleted.clear();
    remade.clear();
    super.stop();
  }
}

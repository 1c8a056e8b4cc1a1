package dev.respawn.heartbeat;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class RenewalClockTest {
  static final Instant T0 = Instant.parse("2026-11-25T10:00:00Z");
  final AtomicReference<Instant> now = new AtomicReference<>(T0);
  final InstantSource clock = now::get;

  static Lease renewedBy(String holder, Instant renewTime) {
    return new LeaseBuilder().withNewMetadata().withNamespace("agents").withName("coder").endMetadata()
        .withNewSpec().withHolderIdentity(holder).withRenewTime(renewTime.atZone(ZoneOffset.UTC)).endSpec().build();
  }

  void advance(Duration d) {
    now.set(now.get().plus(d));
  }

  @Test
  void theCurrentRunKeepsItsLastRenewalWhenItsLeaseIsGoneEvenAfterAnOldPodRenewed() {
    RenewalClock renewals = new RenewalClock(clock);
    Instant runStart = T0;
    advance(Duration.ofSeconds(5));
    Lease mine = renewedBy("coder-2", now.get());
    renewals.seenAt(mine);
    Instant mineSeen = now.get();
    advance(Duration.ofSeconds(1));
    // an old pod, still terminating, renews once more: the Lease changes hands
    Lease old = renewedBy("coder-1", now.get());
    renewals.handedOver(mine);
    renewals.observe(old);
    assertThat(renewals.lastRenewalBy("agents", "coder", "coder-2", runStart, true))
        .hasValueSatisfying(s -> assertThat(s.at()).isEqualTo(mineSeen));
    assertThat(renewals.lastRenewalBy("agents", "coder", "coder-3", runStart, true)).as("not another pod's").isEmpty();
    // a renewal seen before the run started is not the run's
    assertThat(renewals.lastRenewalBy("agents", "coder", "coder-2", mineSeen.plusSeconds(1), true)).isEmpty();
  }

  /**
   * A hand-over told twice (the Lease read from the API server before the watch told it, then the watch): the
   * renewal the run left keeps the time it was seen, not the time of the second telling.
   */
  @Test
  void aHandOverToldTwiceKeepsTheRenewalAsFirstSeen() {
    RenewalClock renewals = new RenewalClock(clock);
    advance(Duration.ofSeconds(5));
    Lease mine = renewedBy("coder-2", now.get());
    renewals.seenAt(mine);
    Instant mineSeen = now.get();
    advance(Duration.ofSeconds(1));
    Lease old = renewedBy("coder-1", now.get());
    renewals.handedOver(mine); // the read
    renewals.seenAt(old);
    advance(Duration.ofSeconds(20));
    renewals.handedOver(mine); // the watch, late
    renewals.observe(old);
    assertThat(renewals.lastRenewalBy("agents", "coder", "coder-2", T0, true))
        .hasValueSatisfying(s -> assertThat(s.at()).isEqualTo(mineSeen));
  }

  /** A policy that comes to require heartbeats grants every run it watched without them a look from then. */
  @Test
  void aRunWatchedWithoutHeartbeatsGetsItsFirstLookWhenTheyAreRequired() {
    RenewalClock renewals = new RenewalClock(clock);
    advance(Duration.ofSeconds(1));
    Instant runStart = now.get(); // younger than this process: no grant of its own
    assertThat(renewals.firstLookAt("agents", "coder", "coder-1", runStart)).isEmpty();

    renewals.heartbeatsNotRequired("agents", "coder", "coder-1");
    advance(Duration.ofMinutes(10));
    Instant required = now.get();
    assertThat(renewals.firstLookAt("agents", "coder", "coder-1", runStart)).hasValue(required);
    advance(Duration.ofSeconds(3));
    assertThat(renewals.firstLookAt("agents", "coder", "coder-1", runStart)).as("the first look, not every look")
        .hasValue(required);
    assertThat(renewals.firstLookAt("agents", "coder", "coder-2", now.get())).as("a later run: not granted")
        .isEmpty();

    // heartbeats dropped and required again: a look from the second time
    renewals.heartbeatsNotRequired("agents", "coder", "coder-1");
    advance(Duration.ofMinutes(1));
    assertThat(renewals.firstLookAt("agents", "coder", "coder-1", runStart)).hasValue(now.get());

    renewals.forget("agents", "coder");
    assertThat(renewals.size()).isZero();
  }

  @Test
  void aRunOlderThanThisProcessThatItNeverSawRenewGetsAFullTimeoutFromTheFirstLook() {
    RenewalClock renewals = new RenewalClock(clock);
    Instant runStart = T0.minus(Duration.ofHours(1));
    advance(Duration.ofSeconds(2));
    Instant firstLook = now.get();
    assertThat(renewals.lastRenewalBy("agents", "coder", "coder-7", runStart, true))
        .hasValueSatisfying(s -> assertThat(s.at()).isEqualTo(firstLook));
    advance(Duration.ofSeconds(30));
    assertThat(renewals.lastRenewalBy("agents", "coder", "coder-7", runStart, true))
        .as("the first look, not every look").hasValueSatisfying(s -> assertThat(s.at()).isEqualTo(firstLook));
    // a run this process saw start has its startup grace instead
    assertThat(renewals.lastRenewalBy("agents", "other", "other-1", T0.plusSeconds(1), true)).isEmpty();
    // a run that never renewed (status shows no verdict of it) keeps what its Lease says: no heartbeat
    assertThat(renewals.lastRenewalBy("agents", "quiet", "quiet-1", runStart, false)).isEmpty();
    renewals.forget("agents", "coder");
    assertThat(renewals.size()).isZero();
  }

  /**
   * A reconcile read the Lease (renewal R1), then the informer told R2 before the reconcile asked when R1 was seen:
   * R2 keeps the time it was seen at. Taken for new, R1 would be stamped now, and R2, met again by the next reconcile,
   * would count as a renewal seen then: an agent that stopped after R2 was caught up to one timeout late.
   */
  @Test
  void aStaleCopyOfTheLeaseDoesNotUndoANewerRenewal() {
    RenewalClock renewals = new RenewalClock(clock);
    Lease r1 = renewedBy("coder-1", T0);
    assertThat(renewals.seenAt(r1)).isEqualTo(T0);
    advance(Duration.ofSeconds(10));
    Lease r2 = renewedBy("coder-1", T0.plusSeconds(10));
    assertThat(renewals.observe(r2)).isTrue();
    Instant r2Seen = now.get();
    advance(Duration.ofSeconds(1));
    assertThat(renewals.sighting(r1).renewTime()).as("the newer renewal, not the stale copy's")
        .isEqualTo(T0.plusSeconds(10));
    advance(Duration.ofSeconds(59)); // the agent stopped after R2
    assertThat(renewals.seenAt(r2)).as("R2 when it was seen, not when the next reconcile met it").isEqualTo(r2Seen);
    // an agent whose clock stepped back: the informer tells it, in order, and it counts
    Lease back = renewedBy("coder-1", T0.minusSeconds(3600));
    assertThat(renewals.observe(back)).isTrue();
    assertThat(renewals.seenAt(back)).isEqualTo(now.get());
    // a new run's agent whose clock is behind the last one's, met first by a reconcile (a Lease made anew): its own
    advance(Duration.ofSeconds(5));
    Lease newRun = renewedBy("coder-2", T0.minusSeconds(7200));
    assertThat(renewals.sighting(newRun).holder()).isEqualTo("coder-2");
    assertThat(renewals.seenAt(newRun)).isEqualTo(now.get());
  }

  /**
   * When a renewal was seen is an age, measured with a monotonic ticker: a step of the wall clock (NTP correcting a
   * large offset, a VM resumed) moves every sighting with it, so no heartbeat looks older than it is.
   */
  @Test
  void aStepOfTheWallClockAgesNoRenewal() {
    java.util.concurrent.atomic.AtomicLong ticks = new java.util.concurrent.atomic.AtomicLong(7_000_000_000L);
    RenewalClock renewals = new RenewalClock(clock, ticks::get);
    Lease lease = renewedBy("coder-1", T0);
    assertThat(renewals.seenAt(lease)).isEqualTo(T0);
    ticks.addAndGet(Duration.ofSeconds(4).toNanos());
    advance(Duration.ofSeconds(4).plus(Duration.ofMinutes(2))); // 4 s passed, and the wall clock stepped 2 min
    assertThat(renewals.seenAt(lease)).as("seen 4 s ago").isEqualTo(now.get().minusSeconds(4));
    assertThat(renewals.lastRenewalBy("agents", "coder", "coder-1", T0, false))
        .hasValueSatisfying(s -> assertThat(s.at()).isEqualTo(now.get().minusSeconds(4)));
    ticks.addAndGet(Duration.ofSeconds(1).toNanos());
    advance(Duration.ofSeconds(1));
    Lease renewed = renewedBy("coder-1", T0.plusSeconds(5));
    assertThat(renewals.observe(renewed)).isTrue();
    assertThat(renewals.seenAt(renewed)).isEqualTo(now.get());
  }

  /**
   * What a new process only found when it first looked proves nothing about when the agent was heard (a failure
   * sequence closes after resetAfter only on a renewal seen changing): the look granted to a run whose Lease is
   * gone, and a renewal found at the first look that is then handed over, stay first sights; one seen change is not.
   */
  @Test
  void whatTheFirstLookFoundStaysAFirstSightOnEveryPath() {
    RenewalClock renewals = new RenewalClock(clock);
    assertThat(renewals.lastRenewalBy("agents", "gone", "gone-4", T0.minus(Duration.ofHours(1)), true))
        .hasValueSatisfying(s -> assertThat(s.firstSight()).isTrue());
    Lease found = renewedBy("coder-4", T0.minusSeconds(3));
    assertThat(renewals.sighting(found).firstSight()).isTrue();
    advance(Duration.ofSeconds(1));
    renewals.handedOver(found); // an old pod renews once more before coder-4 renews again
    assertThat(renewals.leftBy(renewedBy("coder-3", now.get()), "coder-4"))
        .hasValueSatisfying(v -> assertThat(v.firstSight()).isTrue());
    assertThat(renewals.lastRenewalBy("agents", "coder", "coder-4", T0.minus(Duration.ofHours(1)), true))
        .hasValueSatisfying(s -> assertThat(s.firstSight()).isTrue());
    Lease renewed = renewedBy("coder-4", now.get());
    assertThat(renewals.observe(renewed)).isTrue();
    assertThat(renewals.lastRenewalBy("agents", "coder", "coder-4", T0.minus(Duration.ofHours(1)), true))
        .hasValueSatisfying(s -> assertThat(s.firstSight()).isFalse());
  }

  static Lease renewed(String namespace, String name, String holder, Instant renewTime) {
    return new LeaseBuilder().withNewMetadata().withNamespace(namespace).withName(name).endMetadata()
        .withNewSpec().withHolderIdentity(holder).withRenewTime(renewTime.atZone(ZoneOffset.UTC)).endSpec().build();
  }

  /** Every instance has its own heartbeat: a renewal of one Lease is never heard as another's (name or namespace). */
  @Test
  void eachLeaseIsHeardOnItsOwn() {
    RenewalClock renewals = new RenewalClock(clock);
    Lease coder = renewed("agents", "coder", "coder-1", T0);
    Lease otherNamespace = renewed("team-b", "coder", "coder-1", T0);
    Lease otherName = renewed("agents", "writer", "writer-1", T0);
    renewals.seenAt(coder);
    renewals.seenAt(otherNamespace);
    renewals.seenAt(otherName);
    assertThat(renewals.size()).isEqualTo(3);
    advance(Duration.ofSeconds(10));
    assertThat(renewals.observe(renewed("agents", "coder", "coder-1", now.get()))).isTrue();
    assertThat(renewals.seenAt(otherNamespace)).as("not renewed: still heard 10 s ago").isEqualTo(T0);
    assertThat(renewals.seenAt(otherName)).isEqualTo(T0);
    assertThat(renewals.lastRenewalBy("team-b", "coder", "coder-1", T0, false))
        .hasValueSatisfying(s -> assertThat(s.at()).isEqualTo(T0));
    renewals.forget("agents", "coder");
    assertThat(renewals.size()).as("a deleted instance's Lease is forgotten, the others kept").isEqualTo(2);
    assertThat(renewals.lastRenewalBy("agents", "coder", "coder-1", T0, false)).isEmpty();
  }

  /** A clock moved by hand ages a renewal by exactly the time it moved, fractions of a second included. */
  @Test
  void aRenewalAgesByTheTimeThatPassedToTheNanosecond() {
    RenewalClock renewals = new RenewalClock(clock);
    Lease lease = renewedBy("coder-1", T0);
    advance(Duration.ofMillis(250));
    Instant seen = now.get();
    assertThat(renewals.seenAt(lease)).isEqualTo(seen);
    advance(Duration.ofMillis(1_500));
    assertThat(renewals.seenAt(lease)).as("seen 1.5 s ago").isEqualTo(seen);
  }

  /** Only a Lease a reconcile looked at is tracked: a renewal of an unknown (or forgotten) Lease is not recorded. */
  @Test
  void aRenewalOfALeaseNobodyLookedAtIsNotRecorded() {
    RenewalClock renewals = new RenewalClock(clock);
    assertThat(renewals.observe(renewedBy("coder-1", T0))).isFalse();
    assertThat(renewals.size()).isZero();
    Lease lease = renewedBy("coder-1", T0);
    renewals.seenAt(lease);
    assertThat(renewals.observe(lease)).as("the same renewTime is no renewal").isFalse();
    assertThat(renewals.observe(new LeaseBuilder(lease).editSpec().withRenewTime(null).endSpec().build()))
        .isFalse();
  }

  /**
   * The Lease changes hands (the informer's thread) while the instance's deletion is reconciled: the hand-over checked
   * the Lease was tracked, the deletion forgot it, and the hand-over put its entry back for good. The ticker, read by
   * the hand-over before it puts, holds it there (at most a second) while the deletion is forgotten on this thread.
   */
  @Test
  void aHandOverRacingTheInstancesDeletionLeavesNothingBehind() throws Exception {
    java.util.concurrent.atomic.AtomicBoolean hold = new java.util.concurrent.atomic.AtomicBoolean();
    java.util.concurrent.CountDownLatch inside = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch forgotten = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.atomic.AtomicLong ticks = new java.util.concurrent.atomic.AtomicLong();
    RenewalClock renewals = new RenewalClock(clock, () -> {
      if (hold.get() && Thread.currentThread().getName().equals("informer-leases")) {
        inside.countDown();
        try {
          forgotten.await(1, java.util.concurrent.TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return ticks.incrementAndGet();
    });
    renewals.sighting(renewedBy("coder-1", T0)); // tracked
    Lease older = renewedBy("coder-1", T0.plusSeconds(10)); // a renewal the clock has not seen: the ticker is read
    hold.set(true);
    java.util.concurrent.CompletableFuture<Void> informer = new java.util.concurrent.CompletableFuture<>();
    new Thread(() -> {
      renewals.handedOver(older);
      informer.complete(null);
    }, "informer-leases").start();
    assertThat(inside.await(5, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
    renewals.forget("agents", "coder");
    forgotten.countDown();
    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(informer::isDone);
    assertThat(renewals.size()).as("what the clock keeps of a deleted instance's Lease").isZero();
  }
}

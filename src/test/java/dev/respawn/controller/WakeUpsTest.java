package dev.respawn.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.respawn.api.v1alpha1.AgentInstance;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class WakeUpsTest {
  private final WakeUps wakeUps = new WakeUps();
  private final List<ResourceID> woken = new CopyOnWriteArrayList<>();

  @BeforeEach
  void start() {
    wakeUps.setEventHandler(event -> woken.add(event.getRelatedCustomResourceID()));
    wakeUps.start();
  }

  @AfterEach
  void stop() {
    wakeUps.stop();
  }

  @Test
  void aWakeUpReconcilesItsInstanceOnceWhenDue() {
    ResourceID id = new ResourceID("a", "ns");
    wakeUps.set(id, Optional.of(Duration.ofMillis(50)));
    await().atMost(Duration.ofSeconds(5)).until(() -> woken.size() == 1);
    assertThat(woken).containsExactly(id);
    assertThat(wakeUps.sizes()).containsExactly(0, 0);
  }

  @Test
  void wakeUpsDueAtOnceLeaveNothingSetOnceTheyRan() {
    // a wake-up due at once may run on the timer before set() has put it: it still takes itself out
    List<ResourceID> ids = IntStream.range(0, 2000).mapToObj(n -> new ResourceID("i-" + n, "ns")).toList();
    ids.forEach(id -> wakeUps.set(id, Optional.of(Duration.ZERO)));
    await().atMost(Duration.ofSeconds(10)).until(() -> woken.size() == ids.size());
    assertThat(wakeUps.sizes()).containsExactly(0, 0);
  }

  @Test
  void aLaterReconcileReplacesTheWakeUpBeforeIt() {
    ResourceID id = new ResourceID("a", "ns");
    wakeUps.set(id, Optional.of(Duration.ofMillis(50)));
    wakeUps.set(id, Optional.of(Duration.ofHours(1)));
    assertThat(wakeUps.sizes()).containsExactly(1, 1);
    wakeUps.set(id, Optional.of(Duration.ofMillis(100)));
    await().atMost(Duration.ofSeconds(5)).until(() -> !woken.isEmpty());
    // the 50 ms one was replaced before it was due, the hour-long one as well: one wake-up in all
    await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2)).until(() -> woken.size() == 1);
    assertThat(wakeUps.sizes()).containsExactly(0, 0);
  }

  @Test
  void aReconcileThatNeedsNoWakeUpClearsTheOneSetBefore() {
    ResourceID id = new ResourceID("a", "ns");
    wakeUps.set(id, Optional.of(Duration.ofMillis(100)));
    wakeUps.set(id, Optional.empty());
    assertThat(wakeUps.sizes()).containsExactly(0, 0);
    await().during(Duration.ofMillis(400)).atMost(Duration.ofSeconds(2)).until(woken::isEmpty);
  }

  @Test
  void deletedInstancesLeaveNothingInTheQueueThoughTheirWakeUpsWereHoursAway() {
    List<AgentInstance> instances = IntStream.range(0, 1000).mapToObj(n -> instance("i-" + n)).toList();
    instances.forEach(i -> wakeUps.set(ResourceID.fromResource(i), Optional.of(Duration.ofHours(5))));
    assertThat(wakeUps.sizes()).containsExactly(1000, 1000);
    instances.forEach(wakeUps::onResourceDeleted);
    assertThat(wakeUps.sizes()).containsExactly(0, 0);
  }

  @Test
  void aWakeUpCenturiesAwayIsSetWithoutOverflow() {
    // only a hand-edited status (nextRestartAt in the year 9999) asks for one
    assertThat(WakeUps.nanos(Duration.ofDays(365L * 8000))).isEqualTo(Long.MAX_VALUE);
    assertThat(WakeUps.nanos(Duration.ofSeconds(-5))).isZero();
    assertThat(WakeUps.nanos(Duration.ofMillis(1500))).isEqualTo(1_500_000_000L);
    wakeUps.set(new ResourceID("far", "ns"), Optional.of(Duration.ofDays(365L * 8000)));
    assertThat(wakeUps.sizes()).containsExactly(1, 1);
  }

  @Test
  void nothingIsSetOnceStopped() {
    wakeUps.stop();
    wakeUps.set(new ResourceID("a", "ns"), Optional.of(Duration.ofMillis(10)));
    assertThat(wakeUps.sizes()).containsExactly(0, 0);
    await().during(Duration.ofMillis(200)).atMost(Duration.ofSeconds(1)).until(woken::isEmpty);
  }

  /**
   * An instance deleted and made anew under its name while the deleted one's reconciles ran: JOSDK drops the new
   * one's creation, so it is told again (as a resource event, which JOSDK takes for a name it holds no state of),
   * once on creation and once when the deletion is handled; a name made anew long after, or never deleted, is not.
   */
  @Test
  void anInstanceMadeAnewRightAfterItsDeletionHasItsCreationToldAgain() {
    java.util.List<io.javaoperatorsdk.operator.processing.event.Event> events = new CopyOnWriteArrayList<>();
    wakeUps.setEventHandler(events::add);
    AgentInstance old = withUid(instance("a"), "uid-old");
    AgentInstance remade = withUid(instance("a"), "uid-new");
    wakeUps.onResourceCreated(withUid(instance("never-deleted"), "uid-1"));
    wakeUps.onResourceDeleted(old);
    wakeUps.onResourceCreated(remade);
    wakeUps.afterDeletion(old);
    await().atMost(Duration.ofSeconds(5)).until(() -> events.size() == 2);
    assertThat(events).allSatisfy(e -> {
      assertThat(e).isInstanceOf(io.javaoperatorsdk.operator.processing.event.source.controller.ResourceEvent.class);
      var told = (io.javaoperatorsdk.operator.processing.event.source.controller.ResourceEvent) e;
      assertThat(told.getResource()).contains(remade);
    });
    assertThat(wakeUps.remembered()).as("nothing of the re-make is kept once its deletion is handled").isZero();

    // a deletion handled with no instance made anew meanwhile: nothing to tell
    events.clear();
    AgentInstance b = withUid(instance("b"), "uid-b");
    wakeUps.onResourceDeleted(b);
    wakeUps.afterDeletion(b);
    await().during(Duration.ofMillis(400)).atMost(Duration.ofSeconds(2)).until(events::isEmpty);
  }

  private static AgentInstance withUid(AgentInstance instance, String uid) {
    instance.getMetadata().setUid(uid);
    return instance;
  }

  private static AgentInstance instance(String name) {
    AgentInstance instance = new AgentInstance();
    instance.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace("ns").build());
    return instance;
  }
}

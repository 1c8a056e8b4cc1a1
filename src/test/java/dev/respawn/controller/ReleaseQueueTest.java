package dev.respawn.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentInstanceStatus;
import dev.respawn.api.v1alpha1.FailureStatus;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.policy.DependencyCircuit;
import dev.respawn.policy.DependencySettings;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** api.md §11: waiting instances are released in the order they failed, also when all their turns came at once. */
class ReleaseQueueTest {
  static final Instant NOW = Instant.parse("2026-11-26T12:00:00Z");
  static final DependencySettings MODEL_API = new DependencySettings("model-api", null, 3, Duration.ofMinutes(1),
      Duration.ofSeconds(30), 1, 1.0);
  static final Duration SPACING = MODEL_API.releaseSpacing();
  /** The circuit once its release order was dropped (its last turn came while no operator ran). */
  static final DependencyCircuit DROPPED = DependencyCircuit.closed("model-api");

  static AgentInstance waiting(String name, int failedSecondsBeforeNow, Instant next) {
    AgentInstance i = new AgentInstance();
    i.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace("agents").build());
    AgentInstanceStatus s = new AgentInstanceStatus();
    s.phase = Phase.CircuitOpen;
    s.waitingFor = "model-api";
    s.run = 1;
    s.nextRestartAt = next.toString();
    s.lastFailure = new FailureStatus();
    s.lastFailure.at = NOW.minusSeconds(failedSecondsBeforeNow).toString();
    i.setStatus(s);
    return i;
  }

  final AgentInstance first = waiting("zeta", 30, NOW.minusSeconds(5));
  final AgentInstance second = waiting("alpha", 20, NOW.minusSeconds(5));

  @Test
  void anInstanceWaitsForOneThatFailedBeforeItAndIsDueThenGoesInItsSlot() {
    ReleaseQueue queue = new ReleaseQueue();
    List<AgentInstance> fleet = List.of(first, second);
    assertThat(queue.hold(second, "fleet", DROPPED, MODEL_API, fleet::stream, i -> false, NOW))
        .as("zeta failed first").contains(SPACING);
    assertThat(queue.hold(first, "fleet", DROPPED, MODEL_API, fleet::stream, i -> false, NOW)).isEmpty();
    // zeta's pod is made: alpha's turn, in the next slot of the gate
    assertThat(queue.hold(second, "fleet", DROPPED, MODEL_API, fleet::stream, i -> i == first, NOW))
        .contains(SPACING);
    assertThat(queue.hold(second, "fleet", DROPPED, MODEL_API, fleet::stream, i -> i == first,
        NOW.plus(SPACING))).isEmpty();
    assertThat(queue.size()).as("nothing kept once it went").isZero();
  }

  @Test
  void onlyAnEarlierFailureThatIsDueAndStillWaitingForTheSameDependencyHoldsItBack() {
    ReleaseQueue queue = new ReleaseQueue();
    AgentInstance notDue = waiting("early", 40, NOW.plusSeconds(30)); // its own breaker's trial is later
    AgentInstance other = waiting("other", 40, NOW.minusSeconds(5));
    other.getStatus().waitingFor = "search-api";
    AgentInstance running = waiting("ran", 40, NOW.minusSeconds(5));
    running.getStatus().phase = Phase.Running;
    for (AgentInstance earlier : List.of(notDue, other, running)) {
      assertThat(queue.waitsForAnEarlierTurn("agents/alpha", second, DROPPED, MODEL_API,
          List.of(earlier, second)::stream, i -> false, NOW)).as(earlier.getMetadata().getName()).isFalse();
    }
    AgentInstance noTimeYet = waiting("unshown", 40, NOW);
    noTimeYet.getStatus().nextRestartAt = null;
    assertThat(queue.waitsForAnEarlierTurn("agents/alpha", second, DROPPED, MODEL_API,
        List.of(noTimeYet, second)::stream, i -> false, NOW)).as("released, its time not shown yet: due").isTrue();
    assertThat(queue.waitsForAnEarlierTurn("agents/alpha", second, DROPPED, MODEL_API, List.of(second, second)::stream,
        i -> false, NOW)).as("not itself").isFalse();
  }

  /**
   * A default policy of another namespace serves instances elsewhere too: they are outside its circuit's fleet and
   * hold none of its turns back, whatever they are named (review).
   */
  @Test
  void anInstanceOfAnotherNamespaceHoldsNoTurnOfTheFleetBack() {
    ReleaseQueue queue = new ReleaseQueue();
    AgentInstance elsewhere = waiting("zeta", 40, NOW.minusSeconds(5));
    elsewhere.getMetadata().setNamespace("w2");
    assertThat(queue.waitsForAnEarlierTurn("agents/alpha", second, DROPPED, MODEL_API,
        List.of(elsewhere, second)::stream, i -> false, NOW)).isFalse();
    assertThat(queue.waitsForAnEarlierTurn("agents/alpha", second, DROPPED, MODEL_API,
        List.of(first, second)::stream, i -> false, NOW)).as("the same, in the fleet's namespace").isTrue();
  }

  @Test
  void anEarlierTurnThatDoesNotStartHoldsTheOthersBackForThePatienceAtMost() {
    ReleaseQueue queue = new ReleaseQueue();
    Set<AgentInstance> fleet = Set.of(first, second);
    assertThat(queue.waitsForAnEarlierTurn("agents/alpha", second, DROPPED, MODEL_API, fleet::stream, i -> false, NOW))
        .isTrue();
    Instant later = NOW.plus(ReleaseQueue.PATIENCE).minusMillis(1);
    assertThat(queue.waitsForAnEarlierTurn("agents/alpha", second, DROPPED, MODEL_API, fleet::stream, i -> false, later))
        .isTrue();
    assertThat(queue.waitsForAnEarlierTurn("agents/alpha", second, DROPPED, MODEL_API, fleet::stream, i -> false,
        NOW.plus(ReleaseQueue.PATIENCE))).isFalse();
    // passed over: no one waits for zeta again (the rest of the release goes at its pace), for a while
    AgentInstance third = waiting("beta", 10, NOW.minusSeconds(5));
    assertThat(queue.waitsForAnEarlierTurn("agents/beta", third, DROPPED, MODEL_API, List.of(first, third)::stream,
        i -> false, NOW.plus(ReleaseQueue.PATIENCE).plusSeconds(1))).isFalse();
    assertThat(queue.waitsForAnEarlierTurn("agents/beta", third, DROPPED, MODEL_API, List.of(first, third)::stream,
        i -> false, NOW.plus(ReleaseQueue.PATIENCE).plus(ReleaseQueue.PASSED_OVER))).as("a later outage").isTrue();
    queue.forget("agents/beta");
    queue.forget("agents/zeta");
    queue.waitsForAnEarlierTurn("agents/alpha", second, DROPPED, MODEL_API, fleet::stream, i -> false, NOW);
    queue.forget("agents/alpha");
    queue.forget("agents/zeta");
    assertThat(queue.size()).as("a deleted instance leaves nothing").isZero();
  }

  @Test
  void whileTheReleaseOrderIsShownItsTurnsDecideNotTheFailureTimes() {
    ReleaseQueue queue = new ReleaseQueue();
    Instant closedAt = NOW.minusSeconds(1);
    // alpha failed after zeta but comes first in the order; its slot (closedAt) has come, zeta's too
    DependencyCircuit order = new DependencyCircuit("model-api", dev.respawn.api.v1alpha1.CircuitState.Closed, 1,
        null, null, closedAt, closedAt, List.of(), List.of("alpha", "zeta", "late"), List.of(), 3, 0);
    List<AgentInstance> fleet = List.of(first, second);
    assertThat(queue.waitsForAnEarlierTurn("agents/zeta", first, order, MODEL_API, fleet::stream, i -> false, NOW))
        .as("alpha's turn is before zeta's").isTrue();
    assertThat(queue.waitsForAnEarlierTurn("agents/alpha", second, order, MODEL_API, fleet::stream, i -> false, NOW))
        .isFalse();
    AgentInstance late = waiting("late", 10, NOW.minusSeconds(5));
    assertThat(queue.waitsForAnEarlierTurn("agents/late", late, order, MODEL_API, List.of(late, second)::stream,
        i -> false, closedAt.plus(SPACING.multipliedBy(2)))).as("alpha is due and waits").isTrue();
    DependencyCircuit notYet = new DependencyCircuit("model-api", dev.respawn.api.v1alpha1.CircuitState.Closed, 1,
        null, null, NOW, NOW, List.of(), List.of("zeta", "alpha"), List.of(), 2, 0);
    assertThat(queue.waitsForAnEarlierTurn("agents/alpha", second, notYet, MODEL_API, fleet::stream, i -> false,
        NOW.plusMillis(10))).as("zeta's slot is now: due").isTrue();
  }

  /**
   * An instance passes over an earlier turn that did not start (PATIENCE) while that one is deleted: its deletion's
   * reconcile forgot it between the listing and the pass-over, and the entry came back for good. The cache, listed
   * again, no longer holds it: nothing stays.
   */
  @Test
  void aBlockerDeletedWhileAnotherPassesItOverLeavesNothingBehind() {
    ReleaseQueue queue = new ReleaseQueue();
    java.util.List<AgentInstance> cache = new java.util.concurrent.CopyOnWriteArrayList<>(List.of(first, second));
    assertThat(queue.hold(second, "fleet", DROPPED, MODEL_API, cache::stream, i -> false, NOW)).isPresent();
    java.util.concurrent.atomic.AtomicBoolean listedOnce = new java.util.concurrent.atomic.AtomicBoolean();
    // PATIENCE later: listed, then (before the pass-over is put) deleted and forgotten
    java.util.function.Supplier<java.util.stream.Stream<AgentInstance>> listing = () -> {
      java.util.stream.Stream<AgentInstance> listed = List.copyOf(cache).stream();
      if (!listedOnce.getAndSet(true)) {
        cache.remove(first);
        queue.forget("agents/zeta");
      }
      return listed;
    };
    assertThat(queue.hold(second, "fleet", DROPPED, MODEL_API, listing, i -> false, NOW.plus(ReleaseQueue.PATIENCE)))
        .isEmpty();
    queue.forget("agents/alpha");
    assertThat(queue.size()).as("what the queue keeps of deleted instances").isZero();
  }
}

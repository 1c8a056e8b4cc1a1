package dev.respawn.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentInstanceStatus;
import dev.respawn.api.v1alpha1.FailureStatus;
import dev.respawn.api.v1alpha1.Phase;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** api.md §11: waiting instances are released in the order they failed, also when all their turns came at once. */
class ReleaseQueueTest {
  static final Instant NOW = Instant.parse("2026-11-26T12:00:00Z");
  static final Duration SPACING = Duration.ofMillis(1050);

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
    assertThat(queue.hold(second, "fleet", fleet.stream(), "model-api", SPACING, i -> false, NOW))
        .as("zeta failed first").contains(SPACING);
    assertThat(queue.hold(first, "fleet", fleet.stream(), "model-api", SPACING, i -> false, NOW)).isEmpty();
    // zeta's pod is made: alpha's turn, in the next slot of the gate
    assertThat(queue.hold(second, "fleet", fleet.stream(), "model-api", SPACING, i -> i == first, NOW))
        .contains(SPACING);
    assertThat(queue.hold(second, "fleet", fleet.stream(), "model-api", SPACING, i -> i == first,
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
      assertThat(queue.waitsForAnEarlierTurn("agents/alpha", second, List.of(earlier, second).stream(),
          "model-api", i -> false, NOW)).as(earlier.getMetadata().getName()).isFalse();
    }
    assertThat(queue.waitsForAnEarlierTurn("agents/alpha", second, List.of(second, second).stream(), "model-api",
        i -> false, NOW)).as("not itself").isFalse();
  }

  @Test
  void anEarlierTurnThatDoesNotStartHoldsTheOthersBackForThePatienceAtMost() {
    ReleaseQueue queue = new ReleaseQueue();
    Set<AgentInstance> fleet = Set.of(first, second);
    assertThat(queue.waitsForAnEarlierTurn("agents/alpha", second, fleet.stream(), "model-api", i -> false, NOW))
        .isTrue();
    Instant later = NOW.plus(ReleaseQueue.PATIENCE).minusMillis(1);
    assertThat(queue.waitsForAnEarlierTurn("agents/alpha", second, fleet.stream(), "model-api", i -> false, later))
        .isTrue();
    assertThat(queue.waitsForAnEarlierTurn("agents/alpha", second, fleet.stream(), "model-api", i -> false,
        NOW.plus(ReleaseQueue.PATIENCE))).isFalse();
    queue.waitsForAnEarlierTurn("agents/alpha", second, fleet.stream(), "model-api", i -> false, NOW);
    queue.forget("agents/alpha");
    assertThat(queue.size()).as("a deleted instance leaves nothing").isZero();
  }
}

package dev.respawn.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.policy.EndingKind;
import dev.respawn.policy.InstanceState;
import dev.respawn.policy.PodView;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class UnwrittenStartsTest {
  static final Instant NOW = Instant.parse("2026-11-26T10:00:00Z");
  final UnwrittenStarts starts = new UnwrittenStarts();

  static Pod pod(String name, String uid) {
    return new PodBuilder().withNewMetadata().withName(name).withUid(uid)
        .withCreationTimestamp("2026-11-26T09:59:58Z").endMetadata().build();
  }

  static InstanceState atRun(int run) {
    InstanceState s = new InstanceState();
    s.run = run;
    return s;
  }

  @Test
  void aRememberedStartWhosePodIsGoneEverywhereIsAFinishedPodDeleted() {
    starts.remember("i-uid", pod("a-2", "p2"), 2);
    var gone = starts.vanished("i-uid", atRun(1), List.of(), name -> null, NOW).orElseThrow();
    assertThat(gone.run()).isEqualTo(2);
    assertThat(gone.controlledBy("i-uid")).isTrue();
    assertThat(gone.view().stage()).isEqualTo(PodView.Stage.FINISHED);
    // dated as the pod cache would have dated it (whole seconds: the latest instant of that second)
    assertThat(gone.view().createdAt()).isEqualTo(PodObserver.view(pod("a-2", "p2"), null).createdAt())
        .isAfter(Instant.parse("2026-11-26T09:59:58Z"));
    assertThat(gone.ending().orElseThrow().kind()).isEqualTo(EndingKind.DELETED);
    assertThat(gone.ending().orElseThrow().podUid()).isEqualTo("p2");
  }

  @Test
  void aPodTheCacheOrTheServerShowsHasNotVanished() {
    starts.remember("i-uid", pod("a-2", "p2"), 2);
    assertThat(starts.vanished("i-uid", atRun(1), List.of(pod("a-2", "p2")), name -> null, NOW)).isEmpty();
    assertThat(starts.vanished("i-uid", atRun(1), List.of(), name -> pod("a-2", "p2"), NOW)).isEmpty();
    // a pod of that name with another UID is not the one the start made
    assertThat(starts.vanished("i-uid", atRun(1), List.of(), name -> pod("a-2", "other"), NOW)).isPresent();
    // the cache showing the previous run's pod (kept for kubectl logs) is no sign of this one
    assertThat(starts.vanished("i-uid", atRun(1), List.of(pod("a-1", "p1")), name -> null, NOW)).isPresent();
  }

  @Test
  void aStartStatusShowsIsForgottenAndAnotherInstanceKnowsNothingOfIt() {
    starts.remember("i-uid", pod("a-2", "p2"), 2);
    assertThat(starts.vanished("j-uid", atRun(1), List.of(), name -> null, NOW)).isEmpty();
    assertThat(starts.vanished("i-uid", atRun(2), List.of(), name -> null, NOW)).isEmpty();
    assertThat(starts.size()).isZero();
    assertThat(starts.vanished("i-uid", atRun(1), List.of(), name -> null, NOW)).isEmpty();
    starts.remember("i-uid", pod("a-3", "p3"), 3);
    starts.forget("i-uid");
    assertThat(starts.size()).isZero();
  }

  static dev.respawn.policy.Decision decision(int run, String currentPod, boolean deferStatus) {
    InstanceState s = atRun(run);
    s.currentPod = currentPod;
    return new dev.respawn.policy.Decision(s, List.of(), java.util.Optional.empty(), false, deferStatus, false, null,
        java.util.Optional.empty(), List.of(), 0, java.util.Optional.empty(),
        new dev.respawn.policy.Decision.Liveness(false, "PodNotRunning", ""));
  }

  /**
   * A start whose status write waits is remembered (its pod as the cache shows it) until a decision writes status:
   * then nothing of it is left.
   */
  @Test
  void aStartWhoseStatusWaitsIsRememberedUntilADecisionWritesStatus() {
    starts.decided("i-uid", atRun(1), decision(2, "a-2", true),
        name -> java.util.Optional.of(pod(name, "p2")));
    assertThat(starts.holds("i-uid")).isTrue();
    assertThat(starts.holds("j-uid")).isFalse();
    assertThat(starts.vanished("i-uid", atRun(1), List.of(), name -> null, NOW)).hasValueSatisfying(
        f -> assertThat(f.view().name()).isEqualTo("a-2"));
    starts.decided("i-uid", atRun(2), decision(2, "a-2", false), name -> java.util.Optional.empty());
    assertThat(starts.holds("i-uid")).isFalse();
    assertThat(starts.size()).isZero();
    starts.decided("i-uid", atRun(2), decision(2, "a-2", true), name -> java.util.Optional.of(pod(name, "p2")));
    assertThat(starts.holds("i-uid")).as("a deferred write that started no new run remembers nothing").isFalse();
  }

  /**
   * The telling of an unwritten start (Event, audit, metrics) waits until status shows the run, in the order decided,
   * once; it is lost with the instance.
   */
  @Test
  void theTellingOfAnUnwrittenStartWaitsForStatusAndIsToldOnceInOrder() {
    List<String> told = new java.util.ArrayList<>();
    starts.holdTelling("i-uid", () -> told.add("started"));
    starts.holdTelling("i-uid", () -> told.add("looked again"));
    assertThat(starts.holds("i-uid")).isTrue();
    assertThat(told).as("nothing told before status shows the run").isEmpty();
    starts.tellHeld("i-uid");
    assertThat(told).containsExactly("started", "looked again");
    starts.tellHeld("i-uid");
    assertThat(told).as("once").hasSize(2);
    assertThat(starts.holds("i-uid")).isFalse();

    starts.holdTelling("i-uid", () -> told.add("lost"));
    starts.remember("i-uid", pod("a-3", "p3"), 3);
    assertThat(starts.size()).isEqualTo(2);
    starts.gone("i-uid");
    assertThat(starts.size()).isZero();
    starts.tellHeld("i-uid");
    assertThat(told).doesNotContain("lost");
  }
}

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
}

package dev.respawn.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.policy.EndingKind;
import dev.respawn.policy.RunEnding;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** How a finished pod with init containers ended, as the kubelet reports it. */
class PodObserverTest {
  static final Instant NOW = Instant.parse("2026-01-01T10:01:01Z");

  /** A Failed pod whose init container {@code init} terminated with {@code exit}; the agent never started. */
  static PodBuilder failedInInit(String init, String initRestartPolicy, int exit) {
    return new PodBuilder().withNewMetadata().withName("ic-1").withUid("u1").withNamespace("agents")
        .withCreationTimestamp("2026-01-01T10:00:00Z").endMetadata()
        .withNewSpec().addNewInitContainer().withName(init).withImage("i:1").withRestartPolicy(initRestartPolicy)
        .endInitContainer().addNewContainer().withName("agent").withImage("a:1").endContainer().endSpec()
        .withNewStatus().withPhase("Failed")
        .addNewInitContainerStatus().withName(init).withNewState().withNewTerminated().withExitCode(exit)
        .withReason("Error").withMessage("fatal: network_timeout").endTerminated().endState().endInitContainerStatus()
        .addNewContainerStatus().withName("agent").withNewState().withNewWaiting().withReason("PodInitializing")
        .endWaiting().endState().endContainerStatus()
        .endStatus();
  }

  @Test
  void aFailedInitContainerEndsTheRunWithItsExit() {
    RunEnding e = PodObserver.ending(failedInInit("checkout", null, 1).build(), "agent", NOW).orElseThrow();
    assertThat(e.kind()).isEqualTo(EndingKind.TERMINATED);
    assertThat(e.exitCode()).isEqualTo(1);
    assertThat(e.message()).contains("network_timeout");
  }

  @Test
  void aPodDeadlineThatKilledTheInitContainerIsStillDeadlineExceeded() {
    Pod pod = failedInInit("checkout", null, 137).editStatus().withReason("DeadlineExceeded").endStatus().build();
    assertThat(PodObserver.ending(pod, "agent", NOW).orElseThrow().reason()).isEqualTo("DeadlineExceeded");
  }

  @Test
  void aSidecarStoppedWithThePodSaysNothingAboutTheRun() {
    // a native sidecar (an init container with restartPolicy Always) killed at the pod's end: no usable state
    RunEnding e = PodObserver.ending(failedInInit("proxy", "Always", 143).build(), "agent", NOW).orElseThrow();
    assertThat(e.kind()).isEqualTo(EndingKind.NO_STATE);
  }

  @Test
  void aPodNobodyTouchedHasNoStatusAndHasNotEnded() {
    Pod bare = new PodBuilder().withNewMetadata().withName("ic-1").withUid("u1").withNamespace("agents")
        .withCreationTimestamp("2026-01-01T10:00:00Z").endMetadata()
        .withNewSpec().addNewInitContainer().withName("checkout").withImage("i:1").endInitContainer()
        .addNewContainer().withName("agent").withImage("a:1").endContainer().endSpec().build();
    assertThat(PodObserver.ending(bare, "agent", NOW)).isEmpty();
  }

  /** A pod of a lost node, in {@code phase}, its agent container last reported as terminated (137) or not at all. */
  static Pod lostNode(String phase, boolean terminated) {
    PodBuilder b = new PodBuilder().withNewMetadata().withName("coder-1").withUid("u1").withNamespace("agents")
        .withCreationTimestamp("2026-01-01T10:00:00Z").endMetadata()
        .withNewSpec().addNewContainer().withName("agent").withImage("a:1").endContainer().endSpec()
        .withNewStatus().withPhase(phase).withReason("NodeLost")
        .withMessage("Node n1 which was running pod coder-1 is unresponsive").endStatus();
    if (terminated) {
      b.editStatus().addNewContainerStatus().withName("agent").withNewState().withNewTerminated().withExitCode(137)
          .withReason("ContainerStatusUnknown").endTerminated().endState().endContainerStatus().endStatus();
    }
    return b.build();
  }

  @Test
  void aPodOfALostNodeIsALostNodeWhateverItsContainerWasLastReportedAs() {
    // api.md §4: node lost is a ContextReset; the 137 is no signal the agent received
    for (Pod pod : java.util.List.of(lostNode("Failed", true), lostNode("Failed", false), lostNode("Unknown", true),
        lostNode("Unknown", false))) {
      RunEnding e = PodObserver.ending(pod, "agent", NOW).orElseThrow();
      assertThat(e.kind()).as(pod.getStatus().toString()).isEqualTo(EndingKind.NODE_LOST);
      assertThat(e.reason()).isEqualTo("NodeLost");
    }
  }

  @Test
  void aPodInPhaseUnknownForAnotherReasonHasNotEnded() {
    Pod pod = lostNode("Unknown", false);
    pod.getStatus().setReason(null);
    assertThat(PodObserver.ending(pod, "agent", NOW)).isEmpty();
  }
}

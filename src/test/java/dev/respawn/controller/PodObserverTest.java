package dev.respawn.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.policy.EndingKind;
import dev.respawn.policy.PodView;
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

  /** A pod of two containers, {@code proxy} first in the spec; the kubelet lists their statuses in another order. */
  static PodBuilder twoContainers(String phase) {
    return new PodBuilder().withNewMetadata().withName("coder-2").withUid("u2").withNamespace("agents")
        .withCreationTimestamp("2026-01-01T10:00:00Z").endMetadata()
        .withNewSpec().addNewContainer().withName("proxy").withImage("p:1").endContainer()
        .addNewContainer().withName("agent").withImage("a:1").endContainer().endSpec()
        .withNewStatus().withPhase(phase).endStatus();
  }

  /** A status of container {@code name} waiting with {@code reason}. */
  static io.fabric8.kubernetes.api.model.ContainerStatus waiting(String name, String reason) {
    return new io.fabric8.kubernetes.api.model.ContainerStatusBuilder().withName(name).withNewState().withNewWaiting()
        .withReason(reason).withMessage(reason + " of " + name).endWaiting().endState().build();
  }

  static io.fabric8.kubernetes.api.model.ContainerStatus terminated(String name, int exit, String reason) {
    return new io.fabric8.kubernetes.api.model.ContainerStatusBuilder().withName(name).withNewState()
        .withNewTerminated().withExitCode(exit).withReason(reason).withMessage("bye").endTerminated().endState()
        .build();
  }

  @Test
  void aPodsStageFollowsItsPhaseAndItsDeletion() {
    assertThat(PodObserver.view(twoContainers("Running").build(), "agent").stage()).isEqualTo(PodView.Stage.RUNNING);
    assertThat(PodObserver.view(twoContainers("Succeeded").build(), "agent").stage())
        .isEqualTo(PodView.Stage.FINISHED);
    assertThat(PodObserver.view(twoContainers("Failed").build(), "agent").stage()).isEqualTo(PodView.Stage.FINISHED);
    assertThat(PodObserver.view(twoContainers("Pending").build(), "agent").stage()).isEqualTo(PodView.Stage.PENDING);
    assertThat(PodObserver.view(twoContainers(null).build(), "agent").stage()).as("no phase yet")
        .isEqualTo(PodView.Stage.PENDING);
    assertThat(PodObserver.view(twoContainers("Running").editMetadata()
        .withDeletionTimestamp("2026-01-01T10:05:00Z").endMetadata().build(), "agent").stage())
        .isEqualTo(PodView.Stage.TERMINATING);
    assertThat(PodObserver.view(twoContainers("Failed").editMetadata()
        .withDeletionTimestamp("2026-01-01T10:05:00Z").endMetadata().build(), "agent").stage())
        .as("a finished pod being deleted has finished").isEqualTo(PodView.Stage.FINISHED);
  }

  /**
   * api.md §3.5: a pod that cannot start shows that reason on Ready=False (ImagePullBackOff, Unschedulable, ...);
   * the reasons of every container on its way up (ContainerCreating) are no news.
   */
  @Test
  void aPendingPodShowsWhyItsAgentCannotStartButNotThatItIsStarting() {
    PodView pulling = PodObserver.view(twoContainers("Pending").editStatus()
        .withContainerStatuses(waiting("agent", "ImagePullBackOff"), waiting("proxy", "ContainerCreating"))
        .endStatus().build(), "agent");
    assertThat(pulling.waitingReason()).isEqualTo("ImagePullBackOff");
    assertThat(pulling.waitingMessage()).isEqualTo("ImagePullBackOff of agent");
    assertThat(pulling.startedAt()).as("a pending run has not started").isNull();

    PodView creating = PodObserver.view(twoContainers("Pending").editStatus()
        .withContainerStatuses(waiting("agent", "ContainerCreating")).endStatus().build(), "agent");
    assertThat(creating.waitingReason()).isNull();
    assertThat(creating.waitingMessage()).isNull();

    PodView unscheduled = PodObserver.view(twoContainers("Pending").editStatus().addNewCondition()
        .withType("PodScheduled").withStatus("False").withReason("Unschedulable").withMessage("0/3 nodes available")
        .endCondition().endStatus().build(), "agent");
    assertThat(unscheduled.waitingReason()).isEqualTo("Unschedulable");
    assertThat(unscheduled.waitingMessage()).isEqualTo("0/3 nodes available");

    PodView scheduled = PodObserver.view(twoContainers("Pending").editStatus().addNewCondition()
        .withType("PodScheduled").withStatus("True").endCondition().endStatus().build(), "agent");
    assertThat(scheduled.waitingReason()).isNull();

    PodView running = PodObserver.view(twoContainers("Running").editStatus()
        .withContainerStatuses(running("agent"), waiting("proxy", "ErrImagePull")).endStatus().build(), "agent");
    assertThat(running.stage()).isEqualTo(PodView.Stage.RUNNING);
    assertThat(running.waitingReason()).as("a sidecar's trouble is not the run's").isNull();
  }

  /**
   * A pod is Running as soon as one container runs: a sidecar running beside an agent container that cannot
   * start does not start the run, and the agent's reason shows (api.md §3.5), as does an init container's that
   * holds the agent back.
   */
  @Test
  void anAgentThatCannotStartBesideARunningSidecarOrBehindAnInitContainerHasNotStarted() {
    PodView sidecarOnly = PodObserver.view(twoContainers("Running").editStatus()
        .withContainerStatuses(running("proxy"), waiting("agent", "ErrImagePull")).endStatus().build(), "agent");
    assertThat(sidecarOnly.stage()).isEqualTo(PodView.Stage.PENDING);
    assertThat(sidecarOnly.startedAt()).isNull();
    assertThat(sidecarOnly.waitingReason()).isEqualTo("ErrImagePull");
    assertThat(sidecarOnly.isLive()).isTrue();

    PodView creating = PodObserver.view(twoContainers("Running").editStatus()
        .withContainerStatuses(running("proxy"), waiting("agent", "ContainerCreating")).endStatus().build(), "agent");
    assertThat(creating.stage()).isEqualTo(PodView.Stage.PENDING);
    assertThat(creating.waitingReason()).isNull();

    PodView initPull = PodObserver.view(twoContainers("Pending").editStatus()
        .withInitContainerStatuses(waiting("checkout", "ImagePullBackOff"))
        .withContainerStatuses(waiting("agent", "PodInitializing")).endStatus().build(), "agent");
    assertThat(initPull.waitingReason()).isEqualTo("ImagePullBackOff");
    assertThat(initPull.waitingMessage()).isEqualTo("ImagePullBackOff of checkout");

    PodView initRuns = PodObserver.view(twoContainers("Pending").editStatus()
        .withInitContainerStatuses(running("checkout"))
        .withContainerStatuses(waiting("agent", "PodInitializing")).endStatus().build(), "agent");
    assertThat(initRuns.waitingReason()).isNull();
  }

  static io.fabric8.kubernetes.api.model.ContainerStatus running(String name) {
    return new io.fabric8.kubernetes.api.model.ContainerStatusBuilder().withName(name).withNewState().withNewRunning()
        .withStartedAt("2026-01-01T10:00:05Z").endRunning().endState().build();
  }

  /**
   * api.md §2: spec.agentContainer names the container whose exit decides, default the first container; a pod keeps
   * the one it was made with (its annotation) when the spec is edited since.
   */
  @Test
  void theAgentContainerIsTheNamedOneElseTheFirstAndThePodsOwnRecordWins() {
    Pod pod = twoContainers("Pending").editStatus()
        .withContainerStatuses(waiting("agent", "CreateContainerConfigError"), waiting("proxy", "ErrImagePull"))
        .endStatus().build();
    assertThat(PodObserver.view(pod, "agent").waitingReason()).isEqualTo("CreateContainerConfigError");
    assertThat(PodObserver.view(pod, "proxy").waitingReason()).isEqualTo("ErrImagePull");
    assertThat(PodObserver.view(pod, null).waitingReason()).as("the first container of the spec")
        .isEqualTo("ErrImagePull");
    pod.getMetadata().setAnnotations(java.util.Map.of(AgentInstance.AGENT_CONTAINER_ANNOTATION, "agent"));
    assertThat(PodObserver.view(pod, "proxy").waitingReason()).as("the pod's record, not the edited spec")
        .isEqualTo("CreateContainerConfigError");

    Pod ended = twoContainers("Running").editStatus()
        .withContainerStatuses(terminated("agent", 3, "Error"), terminated("proxy", 0, "Completed")).endStatus()
        .build();
    assertThat(PodObserver.ending(ended, "agent", NOW).orElseThrow().exitCode()).isEqualTo(3);
    assertThat(PodObserver.ending(ended, null, NOW).orElseThrow().exitCode()).isEqualTo(0);
  }

  /**
   * A pod without the record (made before pods carried it) and a template whose first container was renamed since:
   * judged by its own first container, as when it was made, not by a name it lacks (no ending found at all).
   */
  @Test
  void aPodWithoutTheRecordIsJudgedByItsOwnFirstContainerWhenItLacksTheTemplatesName() {
    Pod ended = twoContainers("Running").editStatus()
        .withContainerStatuses(terminated("agent", 3, "Error"), terminated("proxy", 0, "Completed")).endStatus()
        .build();
    assertThat(PodObserver.ending(ended, "worker", NOW).orElseThrow().exitCode()).isEqualTo(0);
    assertThat(PodObserver.ending(ended, "agent", NOW).orElseThrow().exitCode()).as("a name it has").isEqualTo(3);
  }

  @Test
  void aRunningPodIsReadyOnlyByItsReadyConditionAndStartedWhenItsAgentDid() {
    Pod pod = twoContainers("Running").editStatus().withStartTime("2026-01-01T10:00:02Z")
        .addNewContainerStatus().withName("agent").withNewState().withNewRunning()
        .withStartedAt("2026-01-01T10:00:05Z").endRunning().endState().endContainerStatus()
        .addNewCondition().withType("Ready").withStatus("True").endCondition().endStatus().build();
    PodView view = PodObserver.view(pod, "agent");
    assertThat(view.ready()).isTrue();
    assertThat(view.startedAt()).as("some time in the whole second 10:00:05, the latest")
        .isEqualTo(Instant.parse("2026-01-01T10:00:05.999999999Z"));
    assertThat(view.name()).isEqualTo("coder-2");
    assertThat(view.uid()).isEqualTo("u2");
    pod.getStatus().getConditions().get(0).setStatus("False");
    assertThat(PodObserver.view(pod, "agent").ready()).isFalse();
    assertThat(PodObserver.view(twoContainers("Running").build(), "agent").ready()).as("no condition").isFalse();
    Pod initialized = twoContainers("Running").editStatus().addNewCondition().withType("Initialized")
        .withStatus("False").endCondition().addNewCondition().withType("Ready").withStatus("True").endCondition()
        .endStatus().build();
    assertThat(PodObserver.view(initialized, "agent").ready()).as("the Ready condition, not the first one").isTrue();
  }

  /**
   * Deadlines are counted from when the operator started the run (the pod's started-at annotation, its own clock),
   * else from the latest time the pod's creationTimestamp can mean.
   */
  @Test
  void aPodWasCreatedWhenTheOperatorStartedItsRun() {
    Pod annotated = twoContainers("Pending").editMetadata()
        .addToAnnotations(AgentInstance.STARTED_AT_ANNOTATION, "2026-01-01T09:59:58.250Z").endMetadata().build();
    assertThat(PodObserver.view(annotated, "agent").createdAt()).isEqualTo(Instant.parse("2026-01-01T09:59:58.250Z"));
    Pod edited = twoContainers("Pending").editMetadata()
        .addToAnnotations(AgentInstance.STARTED_AT_ANNOTATION, "soon").endMetadata().build();
    assertThat(PodObserver.view(edited, "agent").createdAt()).isEqualTo(Instant.parse("2026-01-01T10:00:00.999999999Z"));
  }

  /** api.md §4: evicted, preempted, a DisruptionTarget condition: ContextReset (DISRUPTED), with the pod's reason. */
  @Test
  void aDisruptedPodEndsAsDisruptedWithItsReason() {
    RunEnding evicted = PodObserver.ending(twoContainers("Failed").editStatus().withReason("Evicted")
        .withMessage("The node was low on resource: memory.").endStatus().build(), "agent", NOW).orElseThrow();
    assertThat(evicted.kind()).isEqualTo(EndingKind.DISRUPTED);
    assertThat(evicted.reason()).isEqualTo("Evicted");
    assertThat(evicted.message()).contains("low on resource");
    assertThat(evicted.at()).isEqualTo(NOW);

    RunEnding preempted = PodObserver.ending(twoContainers("Running").editStatus().withReason("Preempting")
        .withContainerStatuses(terminated("agent", 137, "Error")).endStatus().build(), "agent", NOW).orElseThrow();
    assertThat(preempted.kind()).isEqualTo(EndingKind.DISRUPTED);
    assertThat(preempted.exitCode()).isEqualTo(137);

    RunEnding targeted = PodObserver.ending(twoContainers("Failed").editStatus().addNewCondition()
        .withType("DisruptionTarget").withStatus("True").withReason("TerminationByKubelet").endCondition().endStatus()
        .build(), "agent", NOW).orElseThrow();
    assertThat(targeted.kind()).isEqualTo(EndingKind.DISRUPTED);
    assertThat(targeted.reason()).isEqualTo("TerminationByKubelet");

    assertThat(PodObserver.ending(twoContainers("Running").editStatus().addNewCondition().withType("DisruptionTarget")
        .withStatus("True").endCondition().endStatus().build(), "agent", NOW))
        .as("a disruption still under way ends nothing yet").isEmpty();
    RunEnding notTargeted = PodObserver.ending(twoContainers("Failed").editStatus().addNewCondition()
        .withType("DisruptionTarget").withStatus("False").endCondition().endStatus().build(), "agent", NOW)
        .orElseThrow();
    assertThat(notTargeted.kind()).isEqualTo(EndingKind.NO_STATE);

    // the node refused the pod (kubelet admission) or shut down under it: not an ending without a state
    RunEnding refused = PodObserver.ending(twoContainers("Failed").editStatus().withReason("OutOfcpu")
        .withMessage("Pod was rejected: Node didn't have enough resource: cpu").endStatus().build(), "agent", NOW)
        .orElseThrow();
    assertThat(refused.kind()).isEqualTo(EndingKind.DISRUPTED);
    assertThat(refused.reason()).isEqualTo("OutOfcpu");
    RunEnding shutdown = PodObserver.ending(twoContainers("Failed").editStatus().withReason("Terminated")
        .withMessage("Pod was terminated in response to imminent node shutdown.")
        .withContainerStatuses(terminated("agent", 143, "Error")).endStatus().build(), "agent", NOW).orElseThrow();
    assertThat(shutdown.kind()).isEqualTo(EndingKind.DISRUPTED);
    assertThat(shutdown.exitCode()).isEqualTo(143);
    assertThat(PodObserver.ending(twoContainers("Failed").editStatus().withReason("SomethingElse").endStatus().build(),
        "agent", NOW).orElseThrow().kind()).as("any other reason without a state stays Unknown")
        .isEqualTo(EndingKind.NO_STATE);
  }

  /**
   * api.md §3: a run ends when its agent container terminates. An agent that had ended (a helper container kept the
   * pod) before its pod was evicted, preempted or deleted ended the run itself, whether one status update or two
   * told it: its own exit decides. One that ended in the same second as the disruption, within the clocks' margin of
   * a time the API server gave, or with no time to tell, is taken as ended by the disruption (retried, not taken for
   * done).
   */
  @Test
  void anAgentThatEndedBeforeItsPodWasDisruptedEndedTheRunItself() {
    io.fabric8.kubernetes.api.model.ContainerStatus doneAt1000 = new io.fabric8.kubernetes.api.model
        .ContainerStatusBuilder(terminated("agent", 0, "Completed")).editState().editTerminated()
        .withFinishedAt("2026-01-01T10:00:00Z").endTerminated().endState().build();
    RunEnding evictedLater = PodObserver.ending(twoContainers("Failed").editStatus().withReason("Evicted")
        .addNewCondition().withType("DisruptionTarget").withStatus("True").withReason("TerminationByKubelet")
        .withLastTransitionTime("2026-01-01T10:00:01Z").endCondition()
        .withContainerStatuses(doneAt1000, terminated("proxy", 137, "Error")).endStatus().build(), "agent", NOW)
        .orElseThrow();
    assertThat(evictedLater.kind()).isEqualTo(EndingKind.TERMINATED);
    assertThat(evictedLater.exitCode()).isZero();

    RunEnding sameSecond = PodObserver.ending(twoContainers("Failed").editStatus().withReason("Evicted")
        .addNewCondition().withType("DisruptionTarget").withStatus("True")
        .withLastTransitionTime("2026-01-01T10:00:00Z").endCondition()
        .withContainerStatuses(doneAt1000).endStatus().build(), "agent", NOW).orElseThrow();
    assertThat(sameSecond.kind()).as("the same second: the disruption may have stopped it")
        .isEqualTo(EndingKind.DISRUPTED);
    RunEnding noTime = PodObserver.ending(twoContainers("Failed").editStatus().withReason("Evicted")
        .withContainerStatuses(doneAt1000).endStatus().build(), "agent", NOW).orElseThrow();
    assertThat(noTime.kind()).as("no disruption time to compare with").isEqualTo(EndingKind.DISRUPTED);

    // the API server dates an eviction through the API, a preemption and a deletion by its own clock, which the
    // node's may lag: the container's end must be at least CLOCK_MARGIN earlier
    RunEnding apiEvictedSoonAfter = PodObserver.ending(twoContainers("Failed").editStatus().withReason("Evicted")
        .addNewCondition().withType("DisruptionTarget").withStatus("True").withReason("EvictionByEvictionAPI")
        .withLastTransitionTime("2026-01-01T10:00:04Z").endCondition()
        .withContainerStatuses(doneAt1000).endStatus().build(), "agent", NOW).orElseThrow();
    assertThat(apiEvictedSoonAfter.kind()).as("within the clocks' margin: a SIGTERM handler's exit 0 may be it")
        .isEqualTo(EndingKind.DISRUPTED);
    RunEnding apiEvictedLongAfter = PodObserver.ending(twoContainers("Failed").editStatus().withReason("Evicted")
        .addNewCondition().withType("DisruptionTarget").withStatus("True").withReason("EvictionByEvictionAPI")
        .withLastTransitionTime("2026-01-01T10:00:07Z").endCondition()
        .withContainerStatuses(doneAt1000).endStatus().build(), "agent", NOW).orElseThrow();
    assertThat(apiEvictedLongAfter.kind()).isEqualTo(EndingKind.TERMINATED);

    RunEnding deletedLater = PodObserver.ending(twoContainers("Running").editMetadata()
        .withDeletionTimestamp("2026-01-01T10:00:37Z").withDeletionGracePeriodSeconds(30L).endMetadata()
        .editStatus().withContainerStatuses(doneAt1000).endStatus().build(), "agent", NOW).orElseThrow();
    assertThat(deletedLater.kind()).as("deleted 7 s after it ended").isEqualTo(EndingKind.TERMINATED);
    RunEnding stoppedByDeletion = PodObserver.ending(twoContainers("Running").editMetadata()
        .withDeletionTimestamp("2026-01-01T10:00:32Z").withDeletionGracePeriodSeconds(30L).endMetadata()
        .editStatus().withContainerStatuses(doneAt1000).endStatus().build(), "agent", NOW).orElseThrow();
    assertThat(stoppedByDeletion.kind()).as("ended 2 s before its deletion was asked for: within the margin")
        .isEqualTo(EndingKind.DELETED);

    RunEnding legacyShutdown = PodObserver.ending(twoContainers("Failed").editStatus().withReason("Shutdown")
        .withMessage("Node is shutting, evicting pods").endStatus().build(), "agent", NOW).orElseThrow();
    assertThat(legacyShutdown.kind()).as("the node shutdown reason of 1.20 and 1.21 kubelets")
        .isEqualTo(EndingKind.DISRUPTED);
  }

  /** api.md §4: deleted by someone else is a ContextReset; the agent's exit, if it had one, is kept. */
  @Test
  void aPodDeletedBySomeoneElseEndsAsDeleted() {
    RunEnding e = PodObserver.ending(twoContainers("Running").editMetadata()
        .withDeletionTimestamp("2026-01-01T10:05:00Z").endMetadata().editStatus()
        .withContainerStatuses(terminated("agent", 143, "Error")).endStatus().build(), "agent", NOW).orElseThrow();
    assertThat(e.kind()).isEqualTo(EndingKind.DELETED);
    assertThat(e.exitCode()).isEqualTo(143);
    assertThat(PodObserver.ending(twoContainers("Running").editMetadata()
        .withDeletionTimestamp("2026-01-01T10:05:00Z").endMetadata().build(), "agent", NOW).orElseThrow().exitCode())
        .isNull();
  }

  /** The agent container's exit decides (api.md §3); a pod deadline is DeadlineExceeded (Timeout, §4). */
  @Test
  void anAgentThatExitedEndsTheRunWithItsExitAndReason() {
    RunEnding e = PodObserver.ending(twoContainers("Running").editStatus()
        .withContainerStatuses(terminated("agent", 1, "Error")).endStatus().build(), "agent", NOW).orElseThrow();
    assertThat(e.kind()).isEqualTo(EndingKind.TERMINATED);
    assertThat(e.exitCode()).isEqualTo(1);
    assertThat(e.reason()).isEqualTo("Error");
    assertThat(e.message()).isEqualTo("bye");
    assertThat(e.pod()).isEqualTo("coder-2");
    assertThat(e.podUid()).isEqualTo("u2");
    RunEnding deadline = PodObserver.ending(twoContainers("Failed").editStatus().withReason("DeadlineExceeded")
        .withContainerStatuses(terminated("agent", 137, "Error")).endStatus().build(), "agent", NOW).orElseThrow();
    assertThat(deadline.reason()).isEqualTo("DeadlineExceeded");
    RunEnding deadlineNoState = PodObserver.ending(twoContainers("Failed").editStatus().withReason("DeadlineExceeded")
        .endStatus().build(), "agent", NOW).orElseThrow();
    assertThat(deadlineNoState.kind()).as("a deadline is a usable state").isEqualTo(EndingKind.TERMINATED);
    assertThat(deadlineNoState.reason()).isEqualTo("DeadlineExceeded");
    RunEnding succeeded = PodObserver.ending(twoContainers("Succeeded").build(), "agent", NOW).orElseThrow();
    assertThat(succeeded.kind()).isEqualTo(EndingKind.TERMINATED);
    assertThat(succeeded.exitCode()).as("a Succeeded pod exited 0").isZero();
  }

  @Test
  void aLostNodesLastReportedExitIsKeptAsEvidence() {
    assertThat(PodObserver.ending(lostNode("Failed", true), "agent", NOW).orElseThrow().exitCode()).isEqualTo(137);
    assertThat(PodObserver.ending(lostNode("Failed", false), "agent", NOW).orElseThrow().exitCode()).isNull();
  }

  @Test
  void anInitContainerThatExitedZeroDidNotFailTheRun() {
    RunEnding e = PodObserver.ending(failedInInit("checkout", null, 0).build(), "agent", NOW).orElseThrow();
    assertThat(e.kind()).isEqualTo(EndingKind.NO_STATE);
  }
}

package dev.respawn.sandbox;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerStateBuilder;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.api.model.PodStatus;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * What a kubelet writes into a pod's status at each step; pure functions on a pod object (they change
 * and return the pod given).
 */
public final class PodStatuses {
  static final String RUNNING = "Running";
  static final String PENDING = "Pending";
  static final String SUCCEEDED = "Succeeded";
  static final String FAILED = "Failed";

  private PodStatuses() {}

  /** Kubernetes timestamps: RFC 3339, UTC, whole seconds. */
  static String timestamp(Instant at) {
    return at.truncatedTo(ChronoUnit.SECONDS).toString();
  }

  /** A pod the kubelet has not touched yet: no phase, or Pending without a start time. */
  static boolean unstarted(Pod pod) {
    PodStatus s = pod.getStatus();
    return s == null || s.getPhase() == null || (PENDING.equals(s.getPhase()) && s.getStartTime() == null);
  }

  /** Pending, the containers waiting with this reason; Unschedulable is a PodScheduled=False condition instead. */
  static Pod pending(Pod pod, String waitingReason, String message, Instant now) {
    PodStatus s = status(pod);
    s.setPhase(PENDING);
    if ("Unschedulable".equals(waitingReason)) {
      s.setContainerStatuses(new ArrayList<>());
      setCondition(s, "PodScheduled", "False", waitingReason, message, now);
      return pod;
    }
    setCondition(s, "PodScheduled", "True", null, null, now);
    setCondition(s, "Ready", "False", "ContainersNotReady", "containers with unready status", now);
    List<ContainerStatus> statuses = new ArrayList<>();
    for (Container c : containers(pod)) {
      statuses.add(base(c).withReady(false).withStarted(false)
          .withState(new ContainerStateBuilder().withNewWaiting().withReason(waitingReason).withMessage(message)
              .endWaiting().build())
          .build());
    }
    s.setContainerStatuses(statuses);
    return pod;
  }

  /** Running and Ready: every container running since now. */
  public static Pod running(Pod pod, Instant now) {
    PodStatus s = status(pod);
    String at = timestamp(now);
    s.setPhase(RUNNING);
    s.setReason(null);
    s.setMessage(null);
    if (s.getStartTime() == null) {
      s.setStartTime(at);
    }
    for (String type : List.of("PodScheduled", "Initialized", "ContainersReady", "Ready")) {
      setCondition(s, type, "True", null, null, now);
    }
    List<ContainerStatus> statuses = new ArrayList<>();
    for (Container c : containers(pod)) {
      statuses.add(base(c).withReady(true).withStarted(true)
          .withState(new ContainerStateBuilder().withNewRunning().withStartedAt(at).endRunning().build())
          .build());
    }
    s.setContainerStatuses(statuses);
    return pod;
  }

  /**
   * Terminates the named container (null: every container) with this exit code, reason and message. The
   * phase follows: Succeeded when all containers exited 0, Failed when all ended and one did not, else Running.
   */
  public static Pod terminated(Pod pod, String container, int exitCode, String reason, String message,
      Instant now) {
    PodStatus s = status(pod);
    String at = timestamp(now);
    if (s.getStartTime() == null) {
      s.setStartTime(at);
    }
    List<ContainerStatus> statuses = new ArrayList<>();
    for (Container c : containers(pod)) {
      ContainerStatus old = find(s, c.getName());
      boolean target = container == null || container.equals(c.getName());
      if (!target && old != null) {
        statuses.add(old);
        continue;
      }
      if (!target) {
        statuses.add(base(c).withReady(true).withStarted(true)
            .withState(new ContainerStateBuilder().withNewRunning().withStartedAt(at).endRunning().build()).build());
        continue;
      }
      String startedAt = old != null && old.getState() != null && old.getState().getRunning() != null
          ? old.getState().getRunning().getStartedAt() : at;
      statuses.add(base(c).withReady(false).withStarted(false)
          .withState(new ContainerStateBuilder().withNewTerminated().withExitCode(exitCode).withReason(reason)
              .withMessage(message == null || message.isEmpty() ? null : message).withStartedAt(startedAt)
              .withFinishedAt(at).withContainerID("containerd://" + c.getName() + "-" + now.toEpochMilli())
              .endTerminated().build())
          .build());
    }
    s.setContainerStatuses(statuses);
    boolean allEnded = statuses.stream().allMatch(PodStatuses::ended);
    boolean allZero = statuses.stream().allMatch(cs -> ended(cs) && cs.getState().getTerminated().getExitCode() == 0);
    s.setPhase(!allEnded ? RUNNING : allZero ? SUCCEEDED : FAILED);
    String readyReason = allEnded ? "PodCompleted" : "ContainersNotReady";
    setCondition(s, "ContainersReady", "False", readyReason, null, now);
    setCondition(s, "Ready", "False", readyReason, null, now);
    return pod;
  }

  /** Evicted by the kubelet under node pressure: Failed, reason Evicted, DisruptionTarget, containers killed. */
  static Pod evicted(Pod pod, String message, Instant now) {
    terminated(pod, null, 137, "Error", null, now);
    PodStatus s = status(pod);
    s.setPhase(FAILED);
    s.setReason("Evicted");
    s.setMessage(message);
    setCondition(s, "DisruptionTarget", "True", "TerminationByKubelet", message, now);
    return pod;
  }

  private static boolean ended(ContainerStatus cs) {
    return cs.getState() != null && cs.getState().getTerminated() != null;
  }

  private static PodStatus status(Pod pod) {
    if (pod.getStatus() == null) {
      pod.setStatus(new PodStatus());
    }
    return pod.getStatus();
  }

  private static List<Container> containers(Pod pod) {
    return pod.getSpec() == null || pod.getSpec().getContainers() == null ? List.of() : pod.getSpec().getContainers();
  }

  private static ContainerStatusBuilder base(Container c) {
    return new ContainerStatusBuilder().withName(c.getName()).withImage(c.getImage())
        .withImageID(c.getImage() == null ? null : "sha256:" + Integer.toHexString(c.getImage().hashCode()))
        .withRestartCount(0);
  }

  private static ContainerStatus find(PodStatus s, String name) {
    return s.getContainerStatuses() == null ? null
        : s.getContainerStatuses().stream().filter(cs -> Objects.equals(cs.getName(), name)).findFirst().orElse(null);
  }

  /** Sets a condition; its lastTransitionTime moves only when its status changes. */
  private static void setCondition(PodStatus s, String type, String status, String reason, String message,
      Instant now) {
    List<PodCondition> conditions = s.getConditions() == null ? new ArrayList<>() : new ArrayList<>(s.getConditions());
    PodCondition old = conditions.stream().filter(c -> type.equals(c.getType())).findFirst().orElse(null);
    String since = old != null && status.equals(old.getStatus()) ? old.getLastTransitionTime() : timestamp(now);
    PodCondition updated = new PodConditionBuilder().withType(type).withStatus(status).withReason(reason)
        .withMessage(message).withLastTransitionTime(since).build();
    if (old == null) {
      conditions.add(updated);
    } else {
      conditions.set(conditions.indexOf(old), updated);
    }
    s.setConditions(conditions);
  }
}

package dev.respawn.controller;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.policy.EndingKind;
import dev.respawn.policy.PodView;
import dev.respawn.policy.RunEnding;
import io.fabric8.kubernetes.api.model.ContainerState;
import io.fabric8.kubernetes.api.model.ContainerStateWaiting;
import io.fabric8.kubernetes.api.model.ContainerStateTerminated;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodStatus;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/** Reads one run's pod: its stage (PodView) and, once it ended, how (RunEnding). */
public final class PodObserver {
  private PodObserver() {}

  /**
   * Waiting reasons of a container on its way up, not of one that cannot start: the kubelet reports them
   * for every pod it starts, so they are no news a user could act on (and cost no status write).
   */
  private static final java.util.Set<String> STARTING = java.util.Set.of("ContainerCreating", "PodInitializing");

  /** The pod's stage; agentContainer null means the first container. */
  public static PodView view(Pod pod, String agentContainer) {
    PodStatus st = pod.getStatus() == null ? new PodStatus() : pod.getStatus();
    String phase = st.getPhase() == null ? "Pending" : st.getPhase();
    Optional<ContainerStatus> agent = agentStatus(pod, agentContainer);
    Instant created = startedAt(pod);
    PodView.Stage stage;
    if ("Succeeded".equals(phase) || "Failed".equals(phase)) {
      stage = PodView.Stage.FINISHED;
    } else if (pod.getMetadata().getDeletionTimestamp() != null) {
      stage = PodView.Stage.TERMINATING;
    } else if ("Running".equals(phase) && !agentWaiting(agent)) {
      // also when the agent container terminated while sidecars run: still live. A pod runs as soon as any of
      // its containers does: while the agent container still waits (its image not pulled) its run has not started
      stage = PodView.Stage.RUNNING;
    } else {
      stage = PodView.Stage.PENDING;
    }
    Instant started = latest(agent.map(ContainerStatus::getState).map(ContainerState::getRunning)
        .map(r -> StatusMapper.time(r.getStartedAt())).orElse(StatusMapper.time(st.getStartTime())));
    String waitingReason = null;
    String waitingMessage = null;
    if (stage == PodView.Stage.PENDING) {
      // the agent's own reason first, then an init container's that holds it back (its image not pulled)
      Optional<ContainerStateWaiting> waiting = agent.map(ContainerStatus::getState).map(ContainerState::getWaiting)
          .filter(PodObserver::cannotStart).or(() -> initStatuses(st).stream().map(ContainerStatus::getState)
              .filter(c -> c != null && c.getWaiting() != null).map(ContainerState::getWaiting)
              .filter(PodObserver::cannotStart).findFirst());
      if (waiting.isPresent()) {
        waitingReason = waiting.get().getReason();
        waitingMessage = waiting.get().getMessage();
      } else {
        Optional<PodCondition> unscheduled = condition(st, "PodScheduled").filter(c -> "False".equals(c.getStatus()));
        waitingReason = unscheduled.map(PodCondition::getReason).orElse(null);
        waitingMessage = unscheduled.map(PodCondition::getMessage).orElse(null);
      }
    }
    boolean ready = condition(st, "Ready").map(c -> "True".equals(c.getStatus())).orElse(false);
    return new PodView(pod.getMetadata().getName(), pod.getMetadata().getUid(), stage, created,
        stage == PodView.Stage.PENDING ? null : started, waitingReason, waitingMessage, ready);
  }

  /**
   * The node refused or stopped the pod, not its agent: the kubelet's admission (OutOfcpu, OutOfmemory, ...: the
   * node had no room when the pod came; NodeAffinity, UnexpectedAdmissionError) or a graceful node shutdown
   * (Terminated, NodeShutdown; Shutdown from the kubelets of 1.20 and 1.21). A ContextReset, retried like an
   * eviction, not an ending without a state.
   */
  static boolean nodeRefused(String podReason) {
    return podReason != null && (podReason.startsWith("OutOf") || NODE_REFUSALS.contains(podReason));
  }

  private static final java.util.Set<String> NODE_REFUSALS = java.util.Set.of("NodeAffinity",
      "UnexpectedAdmissionError", "NodeShutdown", "Terminated", "Shutdown");

  /** A waiting reason that says the container cannot start (ErrImagePull, ...), not that it is on its way up. */
  private static boolean cannotStart(ContainerStateWaiting waiting) {
    return waiting.getReason() != null && !STARTING.contains(waiting.getReason());
  }

  /** The agent container has not run yet: it waits, neither running nor terminated. */
  private static boolean agentWaiting(Optional<ContainerStatus> agent) {
    return agent.map(ContainerStatus::getState).map(c -> c.getWaiting() != null && c.getRunning() == null
        && c.getTerminated() == null).orElse(false);
  }

  private static List<ContainerStatus> initStatuses(PodStatus st) {
    return st.getInitContainerStatuses() == null ? List.of() : st.getInitContainerStatuses();
  }

  /** When the operator started the pod's run (its annotation), else the latest its creation time can mean. */
  private static Instant startedAt(Pod pod) {
    String exact = pod.getMetadata().getAnnotations() == null ? null
        : pod.getMetadata().getAnnotations().get(dev.respawn.api.v1alpha1.AgentInstance.STARTED_AT_ANNOTATION);
    Instant at = StatusMapper.time(exact); // null when it is not a time (someone edited it)
    return at != null ? at : latest(StatusMapper.time(pod.getMetadata().getCreationTimestamp()));
  }

  /**
   * Pod times have whole seconds: 10:00:00Z means some time before 10:00:01Z. Deadlines counted from
   * them (startupGrace) take the latest such time, so a pod made late in a second is not given up to a
   * second less than its grace.
   */
  static Instant latest(Instant wholeSecond) {
    return wholeSecond == null || wholeSecond.getNano() != 0 ? wholeSecond : wholeSecond.plusSeconds(1).minusNanos(1);
  }

  /** How the run ended, or empty while it has not. */
  public static Optional<RunEnding> ending(Pod pod, String agentContainer, Instant now) {
    PodStatus st = pod.getStatus() == null ? new PodStatus() : pod.getStatus();
    String name = pod.getMetadata().getName();
    String uid = pod.getMetadata().getUid();
    Optional<ContainerStateTerminated> terminated = agentStatus(pod, agentContainer).map(ContainerStatus::getState)
        .map(ContainerState::getTerminated);
    String podReason = st.getReason();
    Optional<PodCondition> target = condition(st, "DisruptionTarget").filter(c -> "True".equals(c.getStatus()));
    boolean disrupted = target.isPresent() || "Evicted".equals(podReason) || "Preempting".equals(podReason)
        || nodeRefused(podReason);
    boolean finished = "Succeeded".equals(st.getPhase()) || "Failed".equals(st.getPhase());
    // an agent that had ended before its pod was disrupted or deleted (a helper container kept the pod) ended the
    // run itself: its own exit decides, whether or not one status update told both
    Instant disruptedAt = target.map(c -> StatusMapper.time(c.getLastTransitionTime())).orElse(null);
    // the kubelet's own eviction is dated by the node's clock, as the container's end is; the API server's (an
    // eviction through the API, a preemption, a taint, a deletion) by the control plane's, which a node's may lag
    Duration margin = target.map(c -> "TerminationByKubelet".equals(c.getReason())).orElse(false) ? Duration.ZERO
        : CLOCK_MARGIN;
    boolean endedBeforeDisruption = terminated.map(t -> endedBefore(t, disruptedAt, margin)).orElse(false);
    boolean endedBeforeDeletion = terminated.map(t -> endedBefore(t, deletedAt(pod), CLOCK_MARGIN)).orElse(false);
    if (disrupted && !endedBeforeDisruption && (finished || terminated.isPresent())) {
      String reason = podReason != null ? podReason : target.map(PodCondition::getReason).orElse("DisruptionTarget");
      return Optional.of(new RunEnding(name, uid, EndingKind.DISRUPTED, terminated.map(t -> t.getExitCode())
          .orElse(null), reason, st.getMessage(), now));
    }
    if ("NodeLost".equals(podReason) && (finished || "Unknown".equals(st.getPhase()))) {
      // the node is gone (phase Failed, or Unknown while the node controller cannot reach it): a ContextReset,
      // whatever its containers were last reported as; the next pod waits until this one is really gone
      return Optional.of(new RunEnding(name, uid, EndingKind.NODE_LOST, terminated.map(t -> t.getExitCode())
          .orElse(null), podReason, st.getMessage(), now));
    }
    if (pod.getMetadata().getDeletionTimestamp() != null && !endedBeforeDeletion) {
      return Optional.of(new RunEnding(name, uid, EndingKind.DELETED, terminated.map(t -> t.getExitCode())
          .orElse(null), "Deleted", "pod deleted by someone else", now));
    }
    if (terminated.isPresent()) {
      ContainerStateTerminated t = terminated.get();
      String reason = "DeadlineExceeded".equals(podReason) ? podReason : t.getReason();
      return Optional.of(new RunEnding(name, uid, EndingKind.TERMINATED, t.getExitCode(), reason, t.getMessage(),
          now));
    }
    if ("Succeeded".equals(st.getPhase())) {
      return Optional.of(new RunEnding(name, uid, EndingKind.TERMINATED, 0, "Completed", null, now));
    }
    Optional<ContainerStateTerminated> initFailed = "Failed".equals(st.getPhase()) ? failedInitContainer(pod, st)
        : Optional.empty();
    if (initFailed.isPresent()) {
      // an init container failed (a checkout, a download): the agent never ran; its exit is the run's (a pod
      // deadline that killed it is still the pod's DeadlineExceeded)
      ContainerStateTerminated t = initFailed.get();
      String reason = "DeadlineExceeded".equals(podReason) ? podReason : t.getReason();
      return Optional.of(new RunEnding(name, uid, EndingKind.TERMINATED, t.getExitCode(), reason, t.getMessage(),
          now));
    }
    if ("Failed".equals(st.getPhase())) {
      EndingKind kind = "DeadlineExceeded".equals(podReason) ? EndingKind.TERMINATED : EndingKind.NO_STATE;
      return Optional.of(new RunEnding(name, uid, kind, null, podReason, st.getMessage(), now));
    }
    return Optional.empty();
  }

  /**
   * How far apart a node's clock and the control plane's may be taken to be: a container's end is put before a
   * disruption dated by the other clock only when it is at least this much earlier. An agent stopped by the
   * disruption that exits within this margin (a SIGTERM handler saving a checkpoint, exit 0) is taken as stopped by
   * it, and run again, not as finished.
   */
  static final Duration CLOCK_MARGIN = Duration.ofSeconds(5);

  /**
   * The container had finished before {@code at}: its finish lies in an earlier second (the kubelet's times have
   * whole seconds, so one in the same second may have come after), and {@code margin} earlier still. False when
   * either time is unknown.
   */
  private static boolean endedBefore(ContainerStateTerminated t, Instant at, Duration margin) {
    Instant finished = StatusMapper.time(t.getFinishedAt());
    return finished != null && at != null && latest(finished).plus(margin).isBefore(at);
  }

  /** When the pod's deletion was asked for: its deletionTimestamp less its grace period; null when not deleted. */
  private static Instant deletedAt(Pod pod) {
    Instant deadline = StatusMapper.time(pod.getMetadata().getDeletionTimestamp());
    Long grace = pod.getMetadata().getDeletionGracePeriodSeconds();
    return deadline == null ? null : deadline.minusSeconds(grace == null ? 0 : grace);
  }

  /**
   * The termination of an init container that exited non-zero, if one did; not of a sidecar (an init container
   * with restartPolicy Always), which is stopped with the pod and says nothing about the run.
   */
  private static Optional<ContainerStateTerminated> failedInitContainer(Pod pod, PodStatus st) {
    java.util.Set<String> sidecars = pod.getSpec() == null || pod.getSpec().getInitContainers() == null
        ? java.util.Set.of() : pod.getSpec().getInitContainers().stream()
            .filter(c -> "Always".equals(c.getRestartPolicy())).map(io.fabric8.kubernetes.api.model.Container::getName)
            .collect(java.util.stream.Collectors.toSet());
    return initStatuses(st).stream().filter(c -> !sidecars.contains(c.getName()))
        .map(c -> c.getState() == null ? null : c.getState().getTerminated())
        .filter(t -> t != null && t.getExitCode() != null && t.getExitCode() != 0).findFirst();
  }

  private static Optional<ContainerStatus> agentStatus(Pod pod, String agentContainer) {
    List<ContainerStatus> statuses = pod.getStatus() == null || pod.getStatus().getContainerStatuses() == null
        ? List.of() : pod.getStatus().getContainerStatuses();
    // the pod's own record first: spec.agentContainer may have been edited since the pod was made
    String recorded = pod.getMetadata() == null || pod.getMetadata().getAnnotations() == null ? null
        : pod.getMetadata().getAnnotations().get(AgentInstance.AGENT_CONTAINER_ANNOTATION);
    String wanted = recorded != null ? recorded : agentContainer;
    List<io.fabric8.kubernetes.api.model.Container> containers = pod.getSpec() == null
        || pod.getSpec().getContainers() == null ? List.of() : pod.getSpec().getContainers();
    String named = wanted;
    if (recorded == null && !containers.isEmpty()
        && (named == null || containers.stream().noneMatch(c -> named.equals(c.getName())))) {
      // no record, and the template's container is not in this pod (one made before pods carried the record, the
      // template renamed since): its own first container, as it was then
      wanted = containers.get(0).getName();
    }
    String name = wanted;
    return statuses.stream().filter(s -> name == null || name.equals(s.getName())).findFirst();
  }

  private static Optional<PodCondition> condition(PodStatus st, String type) {
    return st.getConditions() == null ? Optional.empty()
        : st.getConditions().stream().filter(c -> type.equals(c.getType())).findFirst();
  }
}

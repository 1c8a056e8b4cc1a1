package dev.respawn.controller;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.heartbeat.HeartbeatLeases;
import dev.respawn.heartbeat.RenewalClock;
import dev.respawn.policy.EndingKind;
import dev.respawn.policy.InstanceState;
import dev.respawn.policy.LeaseView;
import dev.respawn.policy.Observation;
import dev.respawn.policy.PodView;
import dev.respawn.policy.Bounds;
import dev.respawn.policy.Request;
import dev.respawn.policy.RunEnding;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * Turns what Kubernetes shows of an instance (its pods, its Lease, its annotations) into the core's
 * {@link Observation}. Pods are picked by the run label; a pod the cache does not (yet) show is looked
 * up directly before it is declared gone, so a create the watch has not delivered is never a loss.
 */
final class RunObservation {
  final Observation observation;
  final Optional<Pod> currentPod;
  final List<Pod> pods;
  /** A pod of the next run exists already and was left out (see {@link #of}). */
  final boolean nextRunExists;

  private RunObservation(Observation observation, Optional<Pod> currentPod, List<Pod> pods,
      boolean nextRunExists) {
    this.observation = observation;
    this.currentPod = currentPod;
    this.pods = pods;
    this.nextRunExists = nextRunExists;
  }

  /**
   * Builds the observation. A pod of the next run that status does not know yet was created by an
   * operator that died before it wrote status: it is left out, so the core decides that start again
   * with all its bookkeeping (the ending of the run before it, restarts, restart window, circuit trial)
   * and the create answers AlreadyExists. A pod further ahead, or one met while suspending or before
   * nextRestartAt, is adopted by moving {@code state} to it.
   */
  static RunObservation of(AgentInstance instance, InstanceState state, List<Pod> allPods,
      Function<String, Pod> directGet, Lease lease, RenewalClock renewals, Instant now) {
    String agentContainer = instance.getSpec() == null ? null : instance.getSpec().agentContainer;
    boolean suspend = instance.getSpec() != null && Boolean.TRUE.equals(instance.getSpec().suspend);
    boolean startDue = state.nextRestartAt == null || !now.isBefore(state.nextRestartAt);
    List<Pod> pods = suspend || !startDue ? allPods
        : allPods.stream().filter(p -> run(p) != state.run + 1).toList();
    adopt(state, pods);
    Optional<Pod> current = Optional.ofNullable(state.currentPod)
        .flatMap(name -> pods.stream().filter(p -> name.equals(p.getMetadata().getName())).findFirst());
    Optional<RunEnding> ending = Optional.empty();
    boolean runExpected = state.phase == Phase.Starting || state.phase == Phase.Running;
    if (current.isEmpty() && state.currentPod != null && runExpected) {
      current = Optional.ofNullable(directGet.apply(state.currentPod));
      if (current.isEmpty()) {
        ending = Optional.of(new RunEnding(state.currentPod, null, EndingKind.DELETED, null, "Deleted",
            "pod " + state.currentPod + " vanished", now));
      }
    }
    Optional<PodView> view = current.map(p -> PodObserver.view(p, agentContainer));
    if (current.isPresent()) {
      ending = PodObserver.ending(current.get(), agentContainer, now);
    }
    // a live pod other than the current one (a previous run still terminating) blocks a new start
    Optional<PodView> blocking = pods.stream().filter(p -> !p.getMetadata().getName().equals(state.currentPod))
        .map(p -> PodObserver.view(p, agentContainer)).filter(PodView::isLive).findFirst();
    if (view.isEmpty() && blocking.isPresent()) {
      view = blocking;
    }
    LeaseView leaseView = lease == null ? null : HeartbeatLeases.view(lease, state.currentPod, renewals.seenAt(lease));
    Map<String, String> annotations = instance.getMetadata().getAnnotations() == null ? Map.of()
        : instance.getMetadata().getAnnotations();
    Observation o = new Observation(instance.getMetadata().getNamespace(), instance.getMetadata().getName(),
        suspend, view, ending,
        request(annotations.get(AgentInstance.RESTART_ANNOTATION), annotations.get("respawn.dev/restart-reason")),
        request(annotations.get(AgentInstance.RESUME_ANNOTATION), null), Optional.ofNullable(leaseView));
    return new RunObservation(o, current, pods, pods.size() < allPods.size());
  }

  private static void adopt(InstanceState state, List<Pod> pods) {
    pods.stream().max(Comparator.comparingInt(RunObservation::run)).filter(p -> run(p) > state.run).ifPresent(p -> {
      state.run = run(p);
      state.currentPod = p.getMetadata().getName();
      state.phase = Phase.Starting;
      state.nextRestartAt = null;
      state.runStartedAt = null;
      state.heartbeat = null;
    });
  }

  static int run(Pod p) {
    String label = p.getMetadata().getLabels() == null ? null
        : p.getMetadata().getLabels().get(AgentInstance.RUN_LABEL);
    try {
      return label == null ? 0 : Integer.parseInt(label);
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  private static Optional<Request> request(String id, String reason) {
    if (id == null || id.isBlank()) {
      return Optional.empty();
    }
    return Optional.of(new Request(Bounds.truncateUtf8(id.strip(), Bounds.REQUEST_ID_BYTES),
        reason == null ? null : Bounds.truncateUtf8(reason, Bounds.MESSAGE_BYTES)));
  }
}

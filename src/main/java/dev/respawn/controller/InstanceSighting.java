package dev.respawn.controller;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.HealthVerdict;
import dev.respawn.api.v1alpha1.OperatorRequest;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.heartbeat.HeartbeatLeases;
import dev.respawn.heartbeat.RenewalClock;
import dev.respawn.policy.Bounds;
import dev.respawn.policy.InstanceState;
import dev.respawn.policy.LeaseView;
import dev.respawn.policy.PodFacts;
import dev.respawn.policy.PodView;
import dev.respawn.policy.Request;
import dev.respawn.policy.Sighting;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * Reads what Kubernetes shows of an instance into the core's {@link Sighting}: every pod with its
 * labels, controller ownerReference and ending, the Lease, the annotations. It judges nothing (the
 * core's {@code RunObserver} does); it only looks the current pod up directly when the cache does not
 * show it yet, so a create the watch has not delivered is never taken for a loss.
 */
final class InstanceSighting {
  private InstanceSighting() {}

  /**
   * @param lease the Lease the current run renews ({@code leaseName}: the one its pod was given), or null
   * @param leaseExists whether the Lease the spec names exists (the next run's: made when missing)
   * @param heartbeatsRequired whether the policy has a heartbeat timeout (see {@link RenewalClock#heartbeatsNotRequired})
   */
  static Sighting of(AgentInstance instance, InstanceState state, List<Pod> cached, Function<String, Pod> directGet,
      String leaseName, Lease lease, boolean leaseExists, RenewalClock renewals, boolean heartbeatsRequired,
      Instant now) {
    // what a pod without its own record (its annotation lost to a webhook) is judged by: the template's first
    // container when none is named, not the stored pod's (an injected proxy may be put first)
    String agentContainer = instance.getSpec() == null ? null : PodFactory.agentContainer(instance,
        instance.getSpec().template == null || instance.getSpec().template.getSpec() == null
            ? new io.fabric8.kubernetes.api.model.PodSpec() : instance.getSpec().template.getSpec()).orElse(null);
    List<Pod> pods = new ArrayList<>(cached);
    boolean runExpected = state.phase == Phase.Starting || state.phase == Phase.Running;
    if (runExpected && state.currentPod != null && !heartbeatsRequired) {
      renewals.heartbeatsNotRequired(instance.getMetadata().getNamespace(), leaseName, state.currentPod);
    }
    if (runExpected && state.currentPod != null
        && pods.stream().noneMatch(p -> state.currentPod.equals(p.getMetadata().getName()))) {
      Optional.ofNullable(directGet.apply(state.currentPod)).ifPresent(pods::add);
    }
    List<PodFacts> facts = pods.stream().map(p -> facts(p, instance.getMetadata().getName(), agentContainer, now))
        .toList();
    Map<String, String> annotations = instance.getMetadata().getAnnotations() == null ? Map.of()
        : instance.getMetadata().getAnnotations();
    boolean suspend = suspended(instance);
    RenewalClock.Seen sighting = lease == null ? null : renewals.sighting(lease);
    Optional<LeaseView> view = Optional.ofNullable(HeartbeatLeases.view(lease,
        sighting == null ? null : sighting.at(), sighting != null && sighting.firstSight()));
    String holder = HeartbeatLeases.holder(lease);
    String renewer = holder;
    // the next run, whose start status does not show yet (Decision.deferStatus): its renewals are its own
    boolean nextRunRenewed = facts.stream().anyMatch(p -> p.name().equals(renewer) && p.run() == state.run + 1
        && p.controlledBy(instance.getMetadata().getUid()));
    if (lease != null && state.currentPod != null && !state.currentPod.equals(holder) && !nextRunRenewed) {
      // another pod renewed last: ignored (api.md §5), the current run keeps the heartbeat it left
      Optional<LeaseView> left = renewals.leftBy(lease, state.currentPod);
      Optional<LeaseView> granted = left.isPresent() || !heartbeatsRequired ? left
          : firstLook(instance, leaseName, state, facts, view, renewals);
      if (granted.isPresent()) {
        view = granted; // a later run that has not renewed yet, the last one's renewal still in the Lease
        holder = state.currentPod;
      }
    }
    if (view.map(LeaseView::renewTime).isEmpty() && state.currentPod != null) {
      // the Lease was deleted, or recreated without a renewal: the current run keeps the last renewal seen of it
      Optional<LeaseView> remembered = remembered(instance, leaseName, state, facts, renewals);
      if (remembered.isPresent()) {
        view = remembered;
        holder = state.currentPod;
      } else if (heartbeatsRequired) { // the grant's time is the first look that judges heartbeats
        Optional<LeaseView> granted = firstLook(instance, leaseName, state, facts, view, renewals);
        if (granted.isPresent()) {
          view = granted;
          holder = state.currentPod;
        }
      }
    }
    return new Sighting(instance.getMetadata().getNamespace(), instance.getMetadata().getName(),
        instance.getMetadata().getUid(), suspend, facts, leaseExists, view, holder,
        requests(annotations), Map.of());
  }

  /**
   * The current run's heartbeat while its Lease is gone or unrenewed ({@link RenewalClock#lastRenewalBy}), with
   * the verdict and detail status shows; the checkpoint went with the Lease.
   */
  private static Optional<LeaseView> remembered(AgentInstance instance, String leaseName, InstanceState state,
      List<PodFacts> facts, RenewalClock renewals) {
    Instant runStart = runStart(state, facts).orElse(null);
    if (runStart == null) {
      return Optional.empty();
    }
    InstanceState.HeartbeatInfo shown = state.heartbeat;
    // status shows a verdict the agent gave in this run (a Healthy one is always the current run's: a new run
    // starts without it; a bad one may be the last run's, kept until the new run's first heartbeat)
    boolean reported = shown != null && shown.verdict() != null && shown.verdict().agentMayReport()
        && (shown.verdict() == HealthVerdict.Healthy || (shown.since() != null && !shown.since().isBefore(runStart)));
    return renewals.lastRenewalBy(instance.getMetadata().getNamespace(), leaseName,
            state.currentPod, runStart, reported)
        .map(seen -> new LeaseView(seen.renewTime(), seen.at(), reported ? shown.verdict() : null,
            reported ? shown.detail() : null, null, null, null, null, seen.firstSight()));
  }

  /**
   * A current run that never renewed (its Lease unrenewed, missing, or still showing the last run's renewal) and
   * is older than this process, or was live while its policy required no heartbeats: a full timeout from this
   * process's first look (api.md §12), no heartbeat made up.
   */
  private static Optional<LeaseView> firstLook(AgentInstance instance, String leaseName, InstanceState state,
      List<PodFacts> facts, Optional<LeaseView> lease, RenewalClock renewals) {
    return runStart(state, facts).flatMap(start -> renewals.firstLookAt(instance.getMetadata().getNamespace(),
        leaseName, state.currentPod, start)).map(at -> LeaseView.lookedAt(lease.orElse(null), at));
  }

  /**
   * When the operator made the current run's pod (its own clock, the pod's started-at annotation): no renewal
   * by the run's pod can come before it; the kubelet's startedAt is the node's clock.
   */
  private static Optional<Instant> runStart(InstanceState state, List<PodFacts> facts) {
    return facts.stream().map(PodFacts::view).filter(p -> state.currentPod.equals(p.name()))
        .map(PodView::createdAt).filter(java.util.Objects::nonNull).findFirst();
  }

  private static PodFacts facts(Pod pod, String instanceName, String agentContainer, Instant now) {
    return new PodFacts(PodObserver.view(pod, agentContainer), run(pod, instanceName), controllerUid(pod),
        PodObserver.ending(pod, agentContainer, now));
  }

  /** The UID of the controller ownerReference of a pod or a Lease, or null. */
  static String controllerUid(io.fabric8.kubernetes.api.model.HasMetadata owned) {
    List<OwnerReference> refs = owned.getMetadata().getOwnerReferences();
    if (refs == null) {
      return null;
    }
    return refs.stream().filter(r -> Boolean.TRUE.equals(r.getController())).map(OwnerReference::getUid)
        .findFirst().orElse(null);
  }

  /**
   * The run a pod is of: from its name, {@code <instance>-<run>}, which the operator gave it and nobody can change;
   * the {@code respawn.dev/run} label (anyone may edit it, a webhook may rewrite it) only for a pod not so named.
   */
  static int run(Pod p, String instanceName) {
    String name = p.getMetadata().getName();
    String prefix = instanceName + "-";
    String number = name != null && name.startsWith(prefix) ? name.substring(prefix.length())
        : p.getMetadata().getLabels() == null ? null : p.getMetadata().getLabels().get(AgentInstance.RUN_LABEL);
    try {
      return number == null ? 0 : Math.max(0, Integer.parseInt(number));
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  /** The operator-action annotations present (api.md §6): id bounded, reason bounded. */
  private static Map<OperatorRequest, Request> requests(Map<String, String> annotations) {
    Map<OperatorRequest, Request> requests = new EnumMap<>(OperatorRequest.class);
    for (OperatorRequest kind : OperatorRequest.values()) {
      String id = annotations.get(kind.annotation());
      if (id != null && !id.isBlank()) {
        String reason = kind.reasonAnnotation().map(annotations::get).orElse(null);
        requests.put(kind, new Request(Bounds.truncateUtf8(id.strip(), Bounds.REQUEST_ID_BYTES),
            reason == null ? null : Bounds.truncateUtf8(reason, Bounds.MESSAGE_BYTES)));
      }
    }
    return requests;
  }

  /** Whether spec.suspend is set (api.md §3 step 1). */
  static boolean suspended(AgentInstance instance) {
    return instance.getSpec() != null && Boolean.TRUE.equals(instance.getSpec().suspend);
  }
}

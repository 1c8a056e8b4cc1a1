package dev.respawn.controller;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import dev.respawn.api.v1alpha1.AgentRestartPolicyStatus;
import dev.respawn.api.v1alpha1.StatusCondition;
import dev.respawn.policy.Backoff;
import dev.respawn.policy.FleetCircuits;
import dev.respawn.policy.Bounds;
import dev.respawn.policy.GoDuration;
import dev.respawn.policy.PolicyCompiler;
import dev.respawn.policy.PolicyInvalidException;
import dev.respawn.policy.Tier;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Constants;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.MaxReconciliationInterval;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * Reconciles an AgentRestartPolicy: Accepted (Valid, InvalidSpec naming the field and the rule, or
 * TierRestricted), the number of instances using it, and the worst-case total retry time. Instances
 * using a policy are re-evaluated by the instance reconciler when the policy changes.
 */
@ControllerConfiguration(name = "agentrestartpolicy",
    // also told of a deletion (no finalizer): a deleted policy's gauges are dropped then
    triggerReconcilerOnAllEvents = true,
    maxReconciliationInterval = @MaxReconciliationInterval(interval = Constants.NO_MAX_RECONCILIATION_INTERVAL))
public class AgentRestartPolicyReconciler implements Reconciler<AgentRestartPolicy> {
  private final OperatorSettings settings;
  private final DecisionSink sink;
  private final ReconcileGate gate;
  private final PolicyResolver references;
  private final OwedTransitions owed = new OwedTransitions();
  private InformerEventSource<AgentInstance, AgentRestartPolicy> instances;
  /**
   * The policy an instance's update just left, by instance: noted by the update filter (which sees the older
   * object) and taken by the mapper of that same update (which sees only the newer one), so the policy left
   * behind learns its count dropped. Taken at once, on a standby replica too: nothing stays.
   */
  private final java.util.Map<ResourceID, ResourceID> leftBehind = new java.util.concurrent.ConcurrentHashMap<>();

  public AgentRestartPolicyReconciler(OperatorSettings settings, DecisionSink sink) {
    this(settings, sink, new ReconcileGate());
  }

  AgentRestartPolicyReconciler(OperatorSettings settings, DecisionSink sink, ReconcileGate gate) {
    this.gate = gate;
    this.settings = settings;
    this.sink = sink;
    this.references = new PolicyResolver(settings, id -> java.util.Optional.empty());
  }

  /** The policy an instance refers to, and the one it just left (both count it differently now). */
  private Set<ResourceID> policiesOf(AgentInstance instance) {
    Set<ResourceID> policies = new java.util.HashSet<>(2);
    references.reference(instance).ifPresent(policies::add);
    java.util.Optional.ofNullable(leftBehind.remove(ResourceID.fromResource(instance))).ifPresent(policies::add);
    return policies;
  }

  @Override
  public List<EventSource<?, AgentRestartPolicy>> prepareEventSources(
      EventSourceContext<AgentRestartPolicy> context) {
    instances = new InformerEventSource<>(InformerEventSourceConfiguration
        .from(AgentInstance.class, AgentRestartPolicy.class).withName("instances")
        // a cache of its own: what the policies read of their instances (not their pod templates)
        .withItemStore(TrimmedStore.forWatched(settings.namespaces(), TrimmedStore.ofFleetMembers()))
        .withSecondaryToPrimaryMapper(this::policiesOf)
        // the way back, so that JOSDK keeps no index of policy -> instances (built from the mapper above, it
        // would keep an instance under every policy it ever used)
        .withPrimaryToSecondaryMapper(p -> instances.list(p.getMetadata().getNamespace(), i -> references
            .reference(i).map(ResourceID.fromResource(p)::equals).orElse(false)).map(ResourceID::fromResource)
            .collect(java.util.stream.Collectors.toSet()))
        .withOnUpdateFilter((newer, older) -> {
          java.util.Optional<ResourceID> was = references.reference(older);
          if (was.isPresent() && !was.equals(references.reference(newer))) {
            leftBehind.put(ResourceID.fromResource(newer), was.get());
          }
          return !Objects.equals(newer.getMetadata().getGeneration(), older.getMetadata().getGeneration())
              || DependencyDecisions.changed(newer, older);
        })
        .build(), context);
    return List.of(instances);
  }

  @Override
  public UpdateControl<AgentRestartPolicy> reconcile(AgentRestartPolicy policy,
      Context<AgentRestartPolicy> context) {
    if (!gate.enter()) {
      return UpdateControl.noUpdate(); // the operator stops: its caches may be empty already
    }
    try {
      if (context.isPrimaryResourceDeleted()) {
        owed.forget(policy);
        sink.forget(policy); // after every reconcile of it (JOSDK runs one at a time): no gauge stays
        return UpdateControl.noUpdate();
      }
      return judge(policy, context);
    } finally {
      gate.exit();
    }
  }

  private UpdateControl<AgentRestartPolicy> judge(AgentRestartPolicy policy, Context<AgentRestartPolicy> context) {
    AgentRestartPolicyStatus status = new AgentRestartPolicyStatus();
    status.observedGeneration = policy.getMetadata().getGeneration();
    ResourceID self = ResourceID.fromResource(policy);
    status.instances = (int) instances.list(policy.getMetadata().getNamespace(),
        i -> references.reference(i).map(self::equals).orElse(false)).count();
    StatusCondition accepted;
    Refusal rejected = null;
    String unreadable = policy.unreadable().describe();
    FleetCircuits.Result fleet = null;
    try {
      Tier.Gated gated = settings.tier().gate(PolicyCompiler.compile(policy.getSpec()));
      status.totalRetryTime = GoDuration.format(Backoff.totalRetryTime(gated.policy()));
      if (!gated.policy().dependencies().isEmpty()) {
        fleet = FleetCircuits.step(gated.policy(), DependencyStatuses.of(policy), instances.list(
            policy.getMetadata().getNamespace(), i -> references.reference(i).map(self::equals).orElse(false))
            .map(i -> new FleetCircuits.Member(i.getMetadata().getName(), StatusMapper.toState(i.getStatus()),
                // being deleted, it starts nothing more (AgentInstanceReconciler): no waiter, no probe, like suspended
                (i.getSpec() != null && Boolean.TRUE.equals(i.getSpec().suspend))
                    || i.getMetadata().getDeletionTimestamp() != null)).toList(), settings.clock().instant());
        status.dependencies = fleet.circuits().stream().map(DependencyStatuses::toStatus).toList();
      }
      if (!unreadable.isEmpty()) {
        // fields of the wrong JSON type were left out to read it: refused all the same
        status.totalRetryTime = null;
        throw new PolicyInvalidException(List.of());
      } else if (gated.restriction().isPresent()) {
        rejected = Refusal.TierRestricted;
        accepted = Conditions.of("Accepted", false, rejected.name(), gated.restriction().get());
      } else {
        accepted = Conditions.of("Accepted", true, "Valid", "the policy is valid");
      }
    } catch (PolicyInvalidException e) {
      String message = Bounds.oneLine(unreadable.isEmpty() ? e.getMessage()
          : e.getMessage().isEmpty() ? unreadable : unreadable + "; " + e.getMessage(), Bounds.MESSAGE_BYTES);
      rejected = Refusal.InvalidSpec;
      accepted = Conditions.of("Accepted", false, rejected.name(), message);
      // nothing restarts on it, its circuits included: they are kept as they were until the spec is fixed
      fleet = null;
      status.dependencies = policy.getStatus() == null ? null : policy.getStatus().dependencies;
    }
    List<StatusCondition> previous = policy.getStatus() == null ? List.of() : policy.getStatus().conditions;
    List<StatusCondition> wantedConditions = new java.util.ArrayList<>(List.of(accepted));
    if (fleet != null) {
      wantedConditions.add(DependencyConditions.open(fleet.circuits()));
    } else if (rejected == Refusal.InvalidSpec && Conditions.find(previous, DependencyConditions.TYPE) != null) {
      wantedConditions.add(Conditions.find(previous, DependencyConditions.TYPE));
    }
    status.conditions = Conditions.merge(previous, wantedConditions, status.observedGeneration,
        settings.clock().instant());
    var wanted = Serialization.jsonMapper().valueToTree(status);
    var current = policy.getStatus() == null ? null
        : DependencyStatuses.withProbesShown(Serialization.jsonMapper().valueToTree(policy.getStatus()));
    owed.settle(policy, current, sink); // a write whose answer was lost, found landed: its transitions told now
    try {
      if (!Objects.equals(wanted, current) && !StatusPatch.commit(context, policy, status, onServer ->
          onServer.getStatus() != null && wanted.equals(DependencyStatuses.withProbesShown(
              Serialization.jsonMapper().valueToTree(onServer.getStatus()))))) {
        return UpdateControl.noUpdate(); // deleted (or made anew) meanwhile: nothing to tell
      }
    } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
      if (fleet != null) {
        owed.owe(policy, wanted, fleet.circuits(), fleet.transitions());
      }
      throw e;
    }
    StatusCondition before = Conditions.find(previous, "Accepted");
    boolean news = before == null || !Objects.equals(before.status, accepted.status)
        || !Objects.equals(before.reason, accepted.reason) || !Objects.equals(before.message, accepted.message)
        || !Objects.equals(before.observedGeneration, accepted.observedGeneration);
    if (rejected != null && news) { // committed: only now is the refusal told, once per refusal and generation
      sink.policyRejected(policy, rejected, accepted.message, settings.clock().instant());
    }
    if (fleet == null) {
      // none (left): no gauge counts them; kept while the policy is invalid: counted as they are
      sink.dependencies(policy, rejected == Refusal.InvalidSpec ? List.copyOf(DependencyStatuses.of(policy).values())
          : List.of(), java.util.Map.of());
      return UpdateControl.noUpdate();
    }
    // committed: only now are the circuits' transitions told
    sink.dependencies(policy, fleet.circuits(), fleet.transitions());
    UpdateControl<AgentRestartPolicy> control = UpdateControl.noUpdate();
    if (fleet.wakeAt().isPresent()) {
      java.time.Duration delay = java.time.Duration.between(settings.clock().instant(), fleet.wakeAt().get());
      control = control.rescheduleAfter((delay.isNegative() ? java.time.Duration.ZERO : delay).plusMillis(1));
    }
    return control;
  }
}

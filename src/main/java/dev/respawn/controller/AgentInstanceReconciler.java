package dev.respawn.controller;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import dev.respawn.heartbeat.HeartbeatLeases;
import dev.respawn.heartbeat.RenewalClock;
import dev.respawn.policy.Decision;
import dev.respawn.policy.InstanceState;
import dev.respawn.policy.RestartEvaluator;
import dev.respawn.policy.RestartPolicy;
import dev.respawn.policy.PodFacts;
import dev.respawn.policy.Sighting;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Constants;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.MaxReconciliationInterval;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.stream.Collectors;

/**
 * Reconciles one AgentInstance: observe the current run, decide with the pure core, apply the
 * decision (pods, Lease, one status patch, events), and wake at the next deadline. No state of its
 * own survives a restart: everything durable is in status.
 */
@ControllerConfiguration(name = "agentinstance", generationAwareEventProcessing = false,
    // also told of a deletion (no finalizer): what this process keeps of a deleted instance is dropped then
    triggerReconcilerOnAllEvents = true,
    informer = @Informer(onUpdateFilter = InstanceUpdateFilter.class),
    // no periodic reconcile: every deadline is a wake-up of its own (WakeUps), and JOSDK's 10-hour fail-safe left
    // a cancelled timer task of every deleted instance in java.util.Timer's queue for those 10 hours
    maxReconciliationInterval = @MaxReconciliationInterval(interval = Constants.NO_MAX_RECONCILIATION_INTERVAL))
public class AgentInstanceReconciler implements Reconciler<AgentInstance> {
  private final OperatorSettings settings;
  private final RestartEvaluator evaluator;
  private final RenewalClock renewals;
  private final DecisionSink sink;
  private final ReleaseQueue releases = new ReleaseQueue();
  private final RecentDeletions deletions;
  private final UnwrittenStarts unwritten = new UnwrittenStarts();
  private final RunLeases leaseNames = new RunLeases();
  private final WakeUps wakeUps = new WakeUps();
  private final Commits commits;
  private final ReconcileGate gate;
  private InformerEventSource<Pod, AgentInstance> pods;
  private InformerEventSource<Lease, AgentInstance> leases;
  private InformerEventSource<AgentRestartPolicy, AgentInstance> policies;
  private PolicyResolver resolver;

  public AgentInstanceReconciler(OperatorSettings settings, DecisionSink sink) {
    this(settings, sink, new ReconcileGate());
  }

  AgentInstanceReconciler(OperatorSettings settings, DecisionSink sink, ReconcileGate gate) {
    this.gate = gate;
    this.settings = settings;
    this.evaluator = RestartEvaluator.forTier(settings.tier());
    this.renewals = new RenewalClock(settings.clock(), settings.ticker());
    this.deletions = new RecentDeletions(settings.clock());
    this.sink = sink;
    this.commits = new Commits(sink, unwritten);
  }

  public RenewalClock renewals() {
    return renewals;
  }

  /** The starts whose status write waits (tests: nothing stays once status shows them). */
  UnwrittenStarts unwrittenStarts() {
    return unwritten;
  }

  /** The wake-ups set (tests: none stays of a deleted instance). */
  WakeUps wakeUps() {
    return wakeUps;
  }

  /** The instance is gone: its Lease's renewal times, metrics and Event series are dropped. */
  private void forget(AgentInstance instance) {
    String ns = instance.getMetadata().getNamespace();
    renewals.forget(ns, HeartbeatLeases.leaseName(instance));
    // and every other Lease a run of it renewed (spec.heartbeat.leaseName was edited)
    leaseNames.forget(instance.getMetadata().getUid()).forEach(name -> renewals.forget(ns, name));
    unwritten.gone(instance.getMetadata().getUid());
    commits.forget(instance.getMetadata().getUid());
    wakeUps.cancel(ResourceID.fromResource(instance));
    releases.forget(ns + "/" + instance.getMetadata().getName());
    sink.forget(instance);
  }

  @Override
  public List<EventSource<?, AgentInstance>> prepareEventSources(EventSourceContext<AgentInstance> context) {
    pods = new InformerEventSource<>(InformerEventSourceConfiguration.from(Pod.class, AgentInstance.class)
        .withName("pods").withLabelSelector(AgentInstance.INSTANCE_LABEL)
        .withItemStore(TrimmedStore.forWatched(settings.namespaces(), TrimmedStore.ofPods()))
        .withSecondaryToPrimaryMapper(InstancesTold::of).build(), context);
    leases = new InformerEventSource<>(InformerEventSourceConfiguration.from(Lease.class, AgentInstance.class)
        .withName("leases").withLabelSelector(AgentInstance.INSTANCE_LABEL)
        .withItemStore(TrimmedStore.forWatched(settings.namespaces(), TrimmedStore.<Lease>ofMetadata()))
        .withSecondaryToPrimaryMapper(InstancesTold::of)
        .withOnUpdateFilter(new LeaseRenewalFilter(renewals)).build(), context);
    resolver = new PolicyResolver(settings, new PolicyLookup(id -> policies.get(id), context.getClient()));
    policies = new InformerEventSource<>(InformerEventSourceConfiguration
        .from(AgentRestartPolicy.class, AgentInstance.class).withName("policies")
        .withItemStore(TrimmedStore.forWatched(settings.namespaces(), TrimmedStore.<AgentRestartPolicy>ofMetadata()))
        // a spec change or a shared circuit's decision (state, probes, release order) matters to the instances; the
        // policy's own status (its instance count, changed by every instance made) must not reconcile them all
        .withOnUpdateFilter((newer, older) -> !Objects.equals(newer.getMetadata().getGeneration(),
            older.getMetadata().getGeneration()) || DependencyDecisions.changed(newer, older))
        // a deleted policy's compiled entry goes with it (the delete is told to its instances all the same)
        .withOnDeleteFilter((policy, unknown) -> resolver.forget(ResourceID.fromResource(policy)))
        .withSecondaryToPrimaryMapper(policy -> context.getPrimaryCache()
            .list(i -> resolver.reference(i).map(ref -> ref.equals(ResourceID.fromResource(policy))).orElse(false))
            .map(ResourceID::fromResource).collect(Collectors.toSet()))
        // the way back, so that JOSDK keeps no index of policy -> instances: built from the mapper above at
        // every policy event, it kept an entry for every instance that ever used the policy (a leak with churn)
        .withPrimaryToSecondaryMapper(i -> resolver.reference((AgentInstance) i).map(Set::of).orElse(Set.of()))
        .build(), context);
    return List.of(pods, leases, policies, wakeUps);
  }

  @Override
  public UpdateControl<AgentInstance> reconcile(AgentInstance instance, Context<AgentInstance> context) {
    if (!gate.enter()) {
      return UpdateControl.noUpdate(); // the operator stops: its caches may be empty already
    }
    try {
      if (context.isPrimaryResourceDeleted()) {
        forget(wakeUps.deleted(instance)); // after every reconcile of it (one at a time): nothing it told stays
        wakeUps.afterDeletion(instance);
      } else if (instance.getMetadata().getDeletionTimestamp() != null) {
        // being deleted (a foreground deletion, a finalizer of someone else's): its pods go with it, and a pod
        // that goes is no failure to restart; nothing is started or written for it any more
        wakeUps.cancel(ResourceID.fromResource(instance));
      } else {
        // the wake-up it asks for is set here rather than by JOSDK's reschedule (see WakeUps): each reconcile
        // replaces the one before
        wakeUps.set(ResourceID.fromResource(instance), decide(instance, context));
      }
      return UpdateControl.noUpdate();
    } finally {
      gate.exit();
    }
  }

  /** Observes, decides and acts for one instance; the wake-up it needs next, if any. */
  private Optional<Duration> decide(AgentInstance instance, Context<AgentInstance> context) {
    Instant now = settings.clock().instant();
    var resolved = resolver.resolve(instance);
    InstanceStatusWriter writer = new InstanceStatusWriter(instance, context, now);
    Optional<Optional<Duration>> settled = commits.settle(instance, writer);
    if (settled.isPresent()) {
      return settled.get(); // a decision owed to status was written first: decided again on it
    }
    Optional<InstanceRefused> refused = InstanceRefused.of(instance, resolved);
    if (refused.isPresent() && !InstanceSighting.suspended(instance)) {
      refuse(instance, writer, refused.get().reason(), refused.get().message(), now);
      return Optional.empty();
    }
    // api.md §3 step 1 comes first: a refused instance is suspended all the same (its live pod deleted, so that
    // a user can always stop an agent); the core decides nothing else then and needs none of the policy
    RestartPolicy policy = resolved.policy().orElse(PolicyResolver.WHILE_REFUSED);
    boolean refusalShown = refused.map(r -> writer.showsRefusal(r.reason(), r.message())).orElse(true);
    InstanceState state = StatusMapper.toState(instance.getStatus());
    String ns = instance.getMetadata().getNamespace();
    List<Pod> cached = List.copyOf(context.getSecondaryResources(Pod.class));
    UnwatchedPod unwatched = new UnwatchedPod(instance);
    java.util.function.Function<String, Pod> directGet = unwatched.reading(name -> context.getClient().pods()
        .inNamespace(ns).withName(name).get());
    RefusedStart.retryAfterEdit(state, instance, now);
    RefusedStart.retryOnceFreed(state, instance, name -> pods.get(new ResourceID(name, ns)),
        name -> context.getClient().pods().inNamespace(ns).withName(name).get(), now);
    String uid = instance.getMetadata().getUid();
    // the current run renews the Lease its pod was given: an edit of spec.heartbeat.leaseName is for the next run
    String specLease = HeartbeatLeases.leaseName(instance);
    String runLease = HeartbeatLeases.leaseName(instance, cached.stream()
        .filter(p -> p.getMetadata().getName().equals(state.currentPod)
            && uid.equals(InstanceSighting.controllerUid(p))).findFirst().orElse(null));
    leaseNames.remember(uid, specLease, runLease);
    Lease lease = leaseNames.heartbeat(leases.get(new ResourceID(runLease, ns)), instance).orElse(null);
    Optional<PodFacts> vanished = unwritten.vanished(uid, state, cached, directGet, now);
    // gone already: the decision's delete of it needs no API call
    vanished.ifPresent(p -> deletions.record(p.uid()));
    java.util.function.BiFunction<List<Pod>, Lease, Sighting> sight = (p, l) -> {
      // another's Lease of that name is not made again (nor heard) until it is gone
      boolean specLeaseExists = runLease.equals(specLease) && l != null
          || leases.get(new ResourceID(specLease, ns)).isPresent();
      Sighting sighted = InstanceSighting.of(instance, state, p, directGet, runLease, l, specLeaseExists,
          renewals, policy.heartbeat().timeout().isPresent(), now).withDependencies(resolver.circuits(instance))
          .withStartUntold(!unwritten.holds(uid));
      return vanished.map(sighted::withPod).orElse(sighted);
    };
    Sighting cachedSight = sight.apply(cached, lease);
    long started = System.nanoTime();
    Decision onCache = evaluator.decide(policy, state, cachedSight, now, random(instance, state));
    Duration took = Duration.ofNanos(System.nanoTime() - started);
    // a live run is ended on the API server's word, not the watches' alone (a hung watch would end every healthy
    // agent)
    RunEndRecheck.Judged judged = RunEndRecheck.confirm(new RunEndRecheck.Judged(cachedSight, onCache), cached, lease,
        deletions::deleted, directGet, () -> RunEndRecheck.handOver(lease, Optional.ofNullable(context.getClient().leases()
            .inNamespace(ns).withName(runLease).get()).filter(l -> RunLeases.heartbeatOf(l, instance))
            .orElse(null), renewals), sight, s -> evaluator.decide(policy, state, s, now, random(instance, state)));
    Sighting seen = judged.seen();
    Decision decided = judged.decision();
    Optional<Duration> held = ReleaseGate.releasing(decided).flatMap(dependency -> policy.dependency(dependency)
        .flatMap(d -> releases.hold(instance, resolver.reference(instance).map(ResourceID::getName).orElse(""),
            seen.dependencies().get(dependency), d,
            () -> context.getPrimaryCache().list(i -> resolver.reference(i).equals(resolver.reference(instance))),
            i -> pods.get(ReleaseQueue.nextRunPod(i)).isPresent(), settings.clock().instant())));
    if (held.isPresent()) {
      // its turn of the release came while an earlier one or others' still start: it waits, nothing is written
      return Optional.of(held.get().plusMillis(1));
    }
    // a Lease made is told to its cache (no event back, no reconcile); a refused instance gets none (see below)
    PodActions actions = new PodActions(context.getClient(), pods, instance, deletions, leaseNames,
        made -> leases.handleRecentResourceCreate(ResourceID.fromResource(made), made));
    // a refused instance gets nothing made for it, its heartbeat Lease neither (its name may be the refusal)
    Decision toDo = refused.isPresent() ? decided.withoutLease() : decided;
    // a decision that deletes the current run's pod (and starts none) is recorded first: an operator that stops in
    // between leaves the decision in status (its successor deletes the pod), not a pod that "vanished"
    boolean recordFirst = toDo.deletesCurrentPod() && toDo.start().isEmpty();
    Decision decision = recordFirst ? toDo : actions.execute(toDo, (invalid, message) -> evaluator.spawnFailed(
        policy, state, seen, invalid, message, now, random(instance, state)));
    // the next release slot counts from when the server took this pod, not from the decision (api.md §11)
    ReleaseGate.releasing(decision).flatMap(policy::dependency).ifPresent(d -> releases.created(instance,
        resolver.reference(instance).map(ResourceID::getName).orElse(""), d, settings.clock().instant()));
    if (decision.start().isPresent() && !decision.startsExisting() && refused.isEmpty()) {
      // a pod made for the next run: the Lease it renews must not hand it the last run's verdict
      leases.get(new ResourceID(specLease, ns)).filter(HeartbeatLeases::carriesVerdict)
          .ifPresent(actions::clearVerdict);
    }
    // the pod made is in the cache: a create is told to it at once (PodActions)
    unwritten.decided(uid, state, decision, name -> pods.get(new ResourceID(name, ns)));
    // one decision, one Event (api.md §8): a refusal shown for the first time rides in the decision's Event
    boolean refusalInEvent = !refusalShown && !decision.notices().isEmpty();
    Decision told = refusalInEvent ? decision.withNotice(refused.get().reason().notice(refused.get().message()))
        : decision;
    Optional<InstanceRefused> refusal = refused;
    Pod pod = currentPod(context, decision);
    Runnable tell = () -> {
      sink.decided(instance, told, pod);
      if (refusalInEvent) {
        sink.refusalInDecision(instance, refusal.get().reason(), now);
      } else if (!refusalShown) {
        sink.policyRefused(instance, refusal.get().reason(), refusal.get().message(), now);
      }
    };
    Commits.Commit commit = new Commits.Commit(decision, recordFirst, instance.getMetadata().getGeneration(),
        w -> refusal.map(r -> w.write(decision, r.reason(), r.message())).orElseGet(() -> w.write(decision)), tell);
    // committed, then told (Events, audit line, metrics): a failed write leaves no trace (but is owed, see Commits)
    if (!commits.commitThenTell(instance, commit, writer)) {
      return Optional.empty(); // the instance was deleted meanwhile
    }
    if (recordFirst) {
      actions.execute(decision, (invalid, message) -> decision);
    }
    sink.decisionTook(took);
    // from the time this reconcile ends, not when it began: its writes took time (measured from the start, every
    // backoff would be late by this reconcile's duration)
    return unwatched.lookAgain(decision.wakeAt().map(at -> Duration.between(settings.clock().instant(), at))
        .map(delay -> (delay.isNegative() ? Duration.ZERO : delay).plusMillis(1)));
  }

  /** Nothing is restarted: status says why, then it is told (Event, audit line). */
  private void refuse(AgentInstance instance, InstanceStatusWriter writer, Refusal reason, String message,
      Instant now) {
    if (writer.writeRefused(reason, message)) {
      sink.policyRefused(instance, reason, message, now);
    }
  }

  /** The pod the decision concerns (the Event's related object), when the cache shows it. */
  private static Pod currentPod(Context<AgentInstance> context, Decision decision) {
    String name = decision.state().currentPod;
    return name == null ? null : context.getSecondaryResources(Pod.class).stream()
        .filter(p -> name.equals(p.getMetadata().getName())).findFirst().orElse(null);
  }

  private java.util.random.RandomGenerator random(AgentInstance instance, InstanceState state) {
    long seed = settings.jitterSeed() ^ instance.getMetadata().getUid().hashCode() * 0x9E3779B97F4A7C15L
        ^ (long) state.run << 32 ^ state.attempt;
    return new SplittableRandom(seed);
  }
}

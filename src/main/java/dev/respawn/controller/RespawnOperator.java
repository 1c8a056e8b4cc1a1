package dev.respawn.controller;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.RuntimeInfo;
import io.javaoperatorsdk.operator.monitoring.micrometer.MicrometerMetrics;
import io.javaoperatorsdk.operator.processing.retry.GenericRetry;
import io.javaoperatorsdk.operator.processing.retry.Retry;
import io.micrometer.core.instrument.MeterRegistry;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.LoggerFactory;

/**
 * The operator: both reconcilers registered on one JOSDK {@link Operator}, writing status with JSON
 * Patch (no server-side apply), watching the configured namespaces, optionally leader-elected.
 */
public final class RespawnOperator implements AutoCloseable {
  /** Name of the leader-election Lease unless one is given. */
  public static final String LEADER_LEASE = "respawn-operator-leader";

  /**
   * A failed reconcile is retried for as long as it fails (JOSDK's default gives up after 5 retries,
   * about 26 s, and then waits for the next event or its 10 h maximum interval: a restart that fell due
   * during a longer API outage would be lost), 2 s at first, growing by 1.5x, at most every 10 s.
   */
  static final Retry RETRY = new GenericRetry().setInitialInterval(2000).setIntervalMultiplier(1.5)
      .setMaxInterval(10_000).withoutMaxAttempts();

  private final Operator operator;
  private final KubernetesClient client;
  private final Optional<LeaderElection> election;
  private final AgentInstanceReconciler instances;
  /** Closed before JOSDK stops: no reconcile acts on the caches JOSDK empties as it stops. */
  private final ReconcileGate gate = new ReconcileGate();
  /** Set once {@link #close()} began: giving up the leader Lease then is no loss to exit for. */
  private volatile boolean closing;
  /** How often coalesced Event repeats are written. */
  static final Duration FLUSH_EVERY = Duration.ofSeconds(10);
  private final DecisionSink sink;
  private final ScheduledExecutorService flusher = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "respawn-event-series");
    t.setDaemon(true);
    return t;
  });

  /**
   * @param client built with {@link TolerantResources#forOperator()} (or {@link TolerantResources#serialization()},
   *     which keeps managed fields; anything else is refused: one resource with a field of the wrong JSON type
   *     would stop the operator)
   * @param leaderNamespace namespace of the leader-election Lease; empty turns leader election off
   */
  public RespawnOperator(KubernetesClient client, OperatorSettings settings, DecisionSink sink,
      Optional<String> leaderNamespace) {
    this(client, settings, sink, leaderNamespace.map(ns -> LeaderElection.standard(LEADER_LEASE, ns)),
        Optional.empty());
  }

  /**
   * @param registry where JOSDK's reconcile metrics go (without per-resource meters, which leak)
   */
  public RespawnOperator(KubernetesClient client, OperatorSettings settings, DecisionSink sink,
      Optional<LeaderElection> election, Optional<MeterRegistry> registry) {
    TolerantResources.requireTolerant(client);
    this.client = client;
    this.election = election;
    this.operator = new Operator(o -> {
      o.withKubernetesClient(client).withUseSSAToPatchPrimaryResource(false).withCloseClientOnStop(false)
          .withStopOnInformerErrorDuringStartup(false).withCacheSyncTimeout(settings.informerSyncTimeout());
      registry.ifPresent(r -> o.withMetrics(new ReconcileMetrics(MicrometerMetrics.withoutPerResourceMetrics(r))));
      election.ifPresent(e -> o.withLeaderElectionConfiguration(new LeaderElectionConfiguration(e.leaseName(),
          e.namespace(), e.leaseDuration(), e.renewDeadline(), e.retryPeriod(), e.identity(),
          // a leader that lost its Lease stops acting at once (the new leader acts now), and exits when so set;
          // JOSDK is told never to exit itself: it would call System.exit from within close() too, and in a
          // shutdown hook (SIGTERM) that call blocks for ever, until the kubelet kills the pod
          new LeaderCallbacks(() -> { }, () -> lostLeadership(e), leader -> { }), false)));
    });
    this.instances = new AgentInstanceReconciler(settings, sink, gate);
    this.sink = sink;
    operator.register(instances, c -> namespaces(c, settings)
        .withItemStore(TrimmedStore.forWatched(settings.namespaces(), TrimmedStore.<AgentInstance>ofMetadata())));
    AgentRestartPolicyReconciler policies = new AgentRestartPolicyReconciler(settings, sink, gate);
    operator.register(policies, c -> namespaces(c, settings).withItemStore(
        TrimmedStore.forWatched(settings.namespaces(), TrimmedStore.<AgentRestartPolicy>ofMetadata())));
  }

  /** The namespaces watched and the retry, on {@code c}; returns it. */
  private static <R extends io.fabric8.kubernetes.api.model.HasMetadata>
      io.javaoperatorsdk.operator.api.config.ControllerConfigurationOverrider<R> namespaces(
          io.javaoperatorsdk.operator.api.config.ControllerConfigurationOverrider<R> c, OperatorSettings settings) {
    c.withRetry(RETRY);
    if (settings.namespaces().isEmpty()) {
      c.watchingAllNamespaces();
    } else {
      c.settingNamespaces(settings.namespaces());
    }
    return c;
  }

  public RespawnOperator start() {
    operator.start();
    // repeats of an Event fold into its series; the count is written within FLUSH_EVERY (api.md §8: 30 s)
    flusher.scheduleWithFixedDelay(this::flush, FLUSH_EVERY.toMillis(), FLUSH_EVERY.toMillis(), TimeUnit.MILLISECONDS);
    return this;
  }

  private void flush() {
    try {
      sink.flushPending();
    } catch (RuntimeException e) {
      LoggerFactory.getLogger(RespawnOperator.class).warn("Could not write pending Event series: {}", e.getMessage());
    }
  }

  public AgentInstanceReconciler instanceReconciler() {
    return instances;
  }

  public Operator josdk() {
    return operator;
  }

  /** Whether its reconcilers act: false once it stops, or once it lost leadership (and did not exit). */
  boolean acting() {
    return gate.open();
  }

  /** Started, and every informer healthy (the /readyz answer). */
  public boolean isReady() {
    RuntimeInfo info = new RuntimeInfo(operator);
    return info.isStarted() && info.allEventSourcesAreHealthy();
  }

  /**
   * The leader's Lease is lost, or given up by {@link #close()}: its reconcilers stop acting. A lost one exits the
   * process when so set (the Deployment starts a new one that stands by), on a thread of its own; not when the
   * operator is being closed, which ends the process its own way.
   */
  private void lostLeadership(LeaderElection election) {
    gate.shut();
    if (election.exitOnStopLeading() && !closing) {
      LoggerFactory.getLogger(RespawnOperator.class).warn("Lost the leader Lease {}: exiting",
          election.leaseName());
      Thread exit = new Thread(() -> System.exit(1), "respawn-lost-leadership");
      exit.setDaemon(true);
      exit.start();
    }
  }

  @Override
  public void close() {
    closing = true;
    flusher.shutdownNow();
    boolean drained = gate.close(ReconcileGate.DRAIN);
    if (!drained) {
      LoggerFactory.getLogger(RespawnOperator.class).warn("Reconciles still running after {}; stopping anyway",
          ReconcileGate.DRAIN);
    }
    operator.stop();
    // it acts no more: a standby may lead at once (not while a reconcile may still write: the Lease expires then)
    election.filter(e -> drained && e.release(client)).ifPresent(e -> LoggerFactory.getLogger(RespawnOperator.class)
        .info("Gave the leader Lease {} up", e.leaseName()));
    sink.close();
  }
}

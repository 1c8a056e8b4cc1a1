package dev.respawn.controller;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.RuntimeInfo;
import io.javaoperatorsdk.operator.monitoring.micrometer.MicrometerMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import java.util.Optional;

/**
 * The operator: both reconcilers registered on one JOSDK {@link Operator}, writing status with JSON
 * Patch (no server-side apply), watching the configured namespaces, optionally leader-elected.
 */
public final class RespawnOperator implements AutoCloseable {
  /** Name of the leader-election Lease. */
  public static final String LEADER_LEASE = "respawn-operator-leader";

  private final Operator operator;
  private final AgentInstanceReconciler instances;

  /**
   * @param leaderNamespace namespace of the leader-election Lease; empty turns leader election off
   */
  public RespawnOperator(KubernetesClient client, OperatorSettings settings, DecisionSink sink,
      Optional<String> leaderNamespace) {
    this(client, settings, sink, leaderNamespace.map(LeaderElection::standard), Optional.empty());
  }

  /**
   * @param registry where JOSDK's reconcile metrics go (without per-resource meters, which leak)
   */
  public RespawnOperator(KubernetesClient client, OperatorSettings settings, DecisionSink sink,
      Optional<LeaderElection> election, Optional<MeterRegistry> registry) {
    this.operator = new Operator(o -> {
      o.withKubernetesClient(client).withUseSSAToPatchPrimaryResource(false).withCloseClientOnStop(false)
          .withStopOnInformerErrorDuringStartup(false);
      registry.ifPresent(r -> o.withMetrics(MicrometerMetrics.withoutPerResourceMetrics(r)));
      election.ifPresent(e -> o.withLeaderElectionConfiguration(new LeaderElectionConfiguration(LEADER_LEASE,
          e.namespace(), e.leaseDuration(), e.renewDeadline(), e.retryPeriod(), e.identity(), null,
          e.exitOnStopLeading())));
    });
    this.instances = new AgentInstanceReconciler(settings, sink);
    operator.register(instances, c -> namespaces(c, settings));
    operator.register(new AgentRestartPolicyReconciler(settings, sink), c -> namespaces(c, settings));
  }

  private static void namespaces(io.javaoperatorsdk.operator.api.config.ControllerConfigurationOverrider<?> c,
      OperatorSettings settings) {
    if (settings.namespaces().isEmpty()) {
      c.watchingAllNamespaces();
    } else {
      c.settingNamespaces(settings.namespaces());
    }
  }

  public RespawnOperator start() {
    operator.start();
    return this;
  }

  public AgentInstanceReconciler instanceReconciler() {
    return instances;
  }

  public Operator josdk() {
    return operator;
  }

  /** Started, and every informer healthy (the /readyz answer). */
  public boolean isReady() {
    RuntimeInfo info = new RuntimeInfo(operator);
    return info.isStarted() && info.allEventSourcesAreHealthy();
  }

  @Override
  public void close() {
    operator.stop();
  }
}

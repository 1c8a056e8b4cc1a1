package dev.respawn.chaos;

import dev.respawn.testsupport.PodHistory;
import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentInstanceSpec;
import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.api.v1alpha1.PolicyReference;
import dev.respawn.controller.OperatorSettings;
import dev.respawn.controller.RespawnOperator;
import dev.respawn.observability.KubeEventRecorder;
import dev.respawn.observability.ReportingSink;
import dev.respawn.observability.RestartMetrics;
import dev.respawn.testsupport.MockApi;
import dev.respawn.sandbox.SimulatedKubelet;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * A mock API server with the {@link ServerLedger} in front, the test's pod watch, a simulated kubelet,
 * and one operator at a time that can be killed and replaced. Only the operator's client is faulted.
 */
final class ChaosWorld implements AutoCloseable {
  static final String NS = MockApi.NAMESPACE;
  final MockApi api;
  final KubernetesClient client;
  final ServerLedger ledger;
  final PodHistory timeline;
  final SimulatedKubelet kubelet;
  private RespawnOperator operator;
  private KubernetesClient operatorClient;
  private int incarnation;

  ChaosWorld(long seed) {
    api = MockApi.start();
    client = api.client();
    ledger = new ServerLedger(seed);
    api.faults(ledger);
    timeline = new PodHistory(api.newClient(), NS);
    kubelet = new SimulatedKubelet(api.newClient(), NS).start();
  }

  /**
   * Starts a fresh operator on a fresh client; {@code clientRetries} is the client's own retry limit
   * for 5xx/429 answers (0: every fault reaches the reconciler).
   */
  synchronized int startOperator(int clientRetries) {
    incarnation++;
    int n = incarnation;
    operatorClient = api.newClient(b -> b.withUserAgent(ServerLedger.OPERATOR_AGENT + "/" + n)
        .withRequestRetryBackoffLimit(clientRetries).withRequestRetryBackoffInterval(50)
        .withWatchReconnectInterval(200));
    KubeEventRecorder events = new KubeEventRecorder(operatorClient, "respawn-chaos-" + n, Clock.systemUTC(),
        new KubeEventRecorder.Settings(Duration.ofMinutes(10), 4096, 1000, Duration.ZERO));
    operator = new RespawnOperator(operatorClient, OperatorSettings.defaults(),
        new ReportingSink(events, new RestartMetrics(new SimpleMeterRegistry())), Optional.empty()).start();
    return n;
  }

  /**
   * Kills the operator. {@code abrupt}: its client is closed first, so whatever it was doing fails at
   * once, as if the process died; otherwise JOSDK stops it.
   */
  synchronized void killOperator(boolean abrupt) {
    if (operator == null) {
      return;
    }
    if (abrupt) {
      operatorClient.close();
    }
    operator.close();
    operatorClient.close();
    operator = null;
  }

  synchronized boolean operatorRunning() {
    return operator != null;
  }

  /** Drops the operator's open watch connections (server side). */
  int dropOperatorWatches() {
    return api.dropWatches(ServerLedger::fromOperator);
  }

  AgentRestartPolicy policy(String name, String yamlSpec) {
    AgentRestartPolicy p = new AgentRestartPolicy();
    p.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(NS).build());
    p.setSpec(Serialization.unmarshal(yamlSpec, AgentRestartPolicySpec.class));
    return client.resource(p).create();
  }

  AgentInstance instance(String name, String policy) {
    AgentInstance i = new AgentInstance();
    i.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(NS).build());
    AgentInstanceSpec spec = new AgentInstanceSpec();
    spec.policyRef = new PolicyReference(policy);
    spec.template = new PodTemplateSpecBuilder().withNewSpec().addNewContainer().withName("agent")
        .withImage("registry.example/agents/chaos:1").endContainer().endSpec().build();
    i.setSpec(spec);
    return client.resource(i).create();
  }

  AgentInstance get(String name) {
    return client.resources(AgentInstance.class).inNamespace(NS).withName(name).get();
  }

  /** Changes an unrelated annotation: the operator's next status write with the old resourceVersion gets a 409. */
  void touch(String name, int n) {
    client.resources(AgentInstance.class).inNamespace(NS).withName(name).edit(i -> {
      Map<String, String> a = i.getMetadata().getAnnotations() == null ? new HashMap<>()
          : new HashMap<>(i.getMetadata().getAnnotations());
      a.put("chaos.respawn.dev/touch", Integer.toString(n));
      i.getMetadata().setAnnotations(a);
      return i;
    });
  }

  @Override
  public void close() {
    try {
      killOperator(false);
    } finally {
      timeline.close();
      kubelet.close();
      api.close();
    }
  }
}

package dev.respawn.bench;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentInstanceStatus;
import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.api.v1alpha1.HealthVerdict;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.controller.OperatorSettings;
import dev.respawn.controller.RespawnOperator;
import dev.respawn.testsupport.MockApi;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;

/**
 * A world of its own for the measurements that need agents as users run them: one mock API server, the
 * operator in-process with the production sink (User-Agent {@value AgentFleet#OPERATOR}), a
 * {@link BeatingKubelet} (every agent renews its Lease every 10 s) and N instances of one policy with
 * {@code heartbeat: {timeout: 60s}} and otherwise the documented defaults, plus, when asked, the shared
 * dependency {@value #DEPENDENCY} with its defaults.
 */
final class OutageWorld implements AutoCloseable {
  static final String NS = "outage";
  static final String POLICY = "fleet";
  static final String DEPENDENCY = "model-api";
  static final String HEARTBEAT = "heartbeat: {timeout: 60s}\n";
  static final String DEPENDENCIES = "dependencies:\n- name: " + DEPENDENCY + "\n  match: {messageContains: "
      + "[\"HTTP 503\"]}\n";

  final MockApi api = MockApi.start();
  final KubernetesClient harness = api.newClient(b -> b.withUserAgent(AgentFleet.HARNESS));
  final Observer observer;
  final BeatingKubelet kubelet;
  final CountingSink sink;
  final List<String> instances;
  final AgentRestartPolicySpec policy;
  private final RespawnOperator operator;

  OutageWorld(int size, boolean sharedDependency) {
    observer = new Observer(api.newClient(b -> b.withUserAgent("observer")), NS).start();
    kubelet = new BeatingKubelet(api.newClient(b -> b.withUserAgent(AgentFleet.KUBELET)), NS);
    KubernetesClient operatorClient = api.newClient(b -> b.withUserAgent(AgentFleet.OPERATOR));
    sink = AgentFleet.productionSink(operatorClient);
    operator = new RespawnOperator(operatorClient, OperatorSettings.defaults().withNamespaces(Set.of(NS)), sink,
        Optional.empty()).start();
    policy = Serialization.unmarshal(HEARTBEAT + (sharedDependency ? DEPENDENCIES : ""),
        AgentRestartPolicySpec.class);
    AgentRestartPolicy p = new AgentRestartPolicy();
    p.setMetadata(new ObjectMetaBuilder().withName(POLICY).withNamespace(NS).build());
    p.setSpec(policy);
    harness.resource(p).create();
    instances = AgentFleet.names("o-", size);
  }

  /** Creates the instances and waits until every one runs with a Healthy heartbeat. */
  OutageWorld populate() {
    long t0 = System.nanoTime();
    AgentFleet.inParallel(instances, name -> harness.resource(AgentFleet.instance(NS, name, POLICY)).create());
    Observer.require("every instance running with a Healthy heartbeat", Duration.ofMinutes(10),
        () -> count(this::healthy) == instances.size());
    System.out.printf("  %,d instances running and Healthy after %s%n", instances.size(),
        Results.seconds(System.nanoTime() - t0));
    return this;
  }

  long count(Predicate<AgentInstanceStatus> which) {
    return instances.stream().map(observer::instance).flatMap(Optional::stream).map(AgentInstance::getStatus)
        .filter(s -> s != null && which.test(s)).count();
  }

  /** Running, its current pod running, and Ready on a Healthy heartbeat. */
  boolean healthy(AgentInstanceStatus s) {
    return running(s) && s.heartbeat != null && s.heartbeat.verdict == HealthVerdict.Healthy;
  }

  /** Running on a pod the observer sees running. */
  boolean running(AgentInstanceStatus s) {
    return s.phase == Phase.Running && s.currentPod != null
        && observer.pod(NS, s.currentPod).filter(Observer::running).isPresent();
  }

  static boolean terminal(AgentInstanceStatus s) {
    return s.phase != null && s.phase.isTerminal();
  }

  /** How often the shared circuit opened (0 without the dependency). */
  long trips() {
    AgentRestartPolicy p = harness.resources(AgentRestartPolicy.class).inNamespace(NS).withName(POLICY).get();
    return p.getStatus() == null || p.getStatus().dependencies == null ? 0 : p.getStatus().dependencies.stream()
        .mapToLong(d -> d.trips == null ? 0 : d.trips).sum();
  }

  long operatorWrites() {
    return api.requests().writeCount(AgentFleet.OPERATOR);
  }

  /** Pods of the world's namespace the server stores (finished ones included). */
  int storedPods() {
    return harness.pods().inNamespace(NS).list().getItems().size();
  }

  @Override
  public void close() {
    for (AutoCloseable c : new AutoCloseable[] {operator, kubelet, observer, api}) {
      try {
        c.close();
      } catch (Exception e) {
        System.out.println("  (closing " + c.getClass().getSimpleName() + ": " + e + ")");
      }
    }
  }
}

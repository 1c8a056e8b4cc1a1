package dev.respawn.controller;

import static org.awaitility.Awaitility.await;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentInstanceSpec;
import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.api.v1alpha1.PolicyReference;
import dev.respawn.testsupport.MockApi;
import dev.respawn.testsupport.SimulatedKubelet;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * One mock API server, one Respawn operator and one simulated kubelet, talking only through the
 * Kubernetes API. Tests create policies and instances and assert on what the API server holds.
 */
final class OperatorFixture implements AutoCloseable {
  static final String NS = MockApi.NAMESPACE;
  final MockApi api;
  final KubernetesClient client;
  final SimulatedKubelet kubelet;
  final OperatorSettings settings;
  RespawnOperator operator;

  OperatorFixture(OperatorSettings settings) {
    this.api = MockApi.start();
    this.client = api.client();
    this.settings = settings;
    this.kubelet = new SimulatedKubelet(api.newClient(), NS).start();
    this.operator = newOperator().start();
  }

  OperatorFixture() {
    this(OperatorSettings.defaults());
  }

  RespawnOperator newOperator() {
    return new RespawnOperator(api.newClient(), settings, DecisionSink.NONE, Optional.empty());
  }

  /** Stops the operator abruptly and starts a fresh one against the same API server. */
  void restartOperator() {
    operator.close();
    operator = newOperator().start();
  }

  AgentRestartPolicy policy(String name, String yamlSpec) {
    AgentRestartPolicy p = new AgentRestartPolicy();
    p.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(NS).build());
    p.setSpec(yamlSpec == null ? new AgentRestartPolicySpec()
        : Serialization.unmarshal(yamlSpec, AgentRestartPolicySpec.class));
    return client.resource(p).create();
  }

  AgentInstance instance(String name, String policy) {
    AgentInstance i = new AgentInstance();
    i.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(NS).build());
    AgentInstanceSpec spec = new AgentInstanceSpec();
    spec.policyRef = policy == null ? null : new PolicyReference(policy);
    spec.task = "TASK-31-1";
    spec.template = new PodTemplateSpecBuilder().withNewSpec().addNewContainer().withName("agent")
        .withImage("registry.example/agents/coder:1.4").endContainer().endSpec().build();
    i.setSpec(spec);
    return client.resource(i).create();
  }

  AgentInstance get(String name) {
    return client.resources(AgentInstance.class).inNamespace(NS).withName(name).get();
  }

  AgentRestartPolicy getPolicy(String name) {
    return client.resources(AgentRestartPolicy.class).inNamespace(NS).withName(name).get();
  }

  List<Pod> pods(String instance) {
    return client.pods().inNamespace(NS).withLabel(AgentInstance.INSTANCE_LABEL, instance).list().getItems();
  }

  AgentInstance awaitInstance(String name, Predicate<AgentInstance> condition) {
    return await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20)).until(() -> get(name),
        i -> i != null && i.getStatus() != null && condition.test(i));
  }

  void annotate(String name, String key, String value) {
    client.resources(AgentInstance.class).inNamespace(NS).withName(name)
        .edit(i -> {
          i.getMetadata().getAnnotations().put(key, value);
          return i;
        });
  }

  @Override
  public void close() {
    operator.close();
    kubelet.close();
    api.close();
  }
}

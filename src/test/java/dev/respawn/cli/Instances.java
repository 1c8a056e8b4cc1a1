package dev.respawn.cli;

import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentInstanceSpec;
import dev.respawn.api.v1alpha1.AgentInstanceStatus;
import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.api.v1alpha1.PolicyReference;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;

/** AgentInstances and policies for the plugin tests, with hand-written statuses (no operator). */
final class Instances {
  private static final YAMLMapper YAML = new YAMLMapper();
  private Instances() {}

  static AgentInstance instance(String namespace, String name, String policy) {
    AgentInstance i = new AgentInstance();
    i.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(namespace).build());
    AgentInstanceSpec spec = new AgentInstanceSpec();
    spec.policyRef = policy == null ? null : new PolicyReference(policy);
    spec.task = "TASK-31-1";
    spec.template = new PodTemplateSpecBuilder().withNewSpec().addNewContainer().withName("agent")
        .withImage("registry.example/agents/coder:1.4").endContainer().endSpec().build();
    i.setSpec(spec);
    return i;
  }

  /** Creates the instance and then writes {@code status} (YAML; null: none) through the status subresource. */
  static AgentInstance create(KubernetesClient client, String namespace, String name, String policy,
      String status) {
    AgentInstance created = client.resources(AgentInstance.class).inNamespace(namespace)
        .resource(instance(namespace, name, policy)).create();
    if (status == null) {
      return created;
    }
    try {
      created.setStatus(YAML.readValue(status, AgentInstanceStatus.class));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return client.resources(AgentInstance.class).inNamespace(namespace).resource(created).updateStatus();
  }

  static AgentRestartPolicy policy(KubernetesClient client, String namespace, String name, String yamlSpec) {
    AgentRestartPolicy p = new AgentRestartPolicy();
    p.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(namespace).build());
    try {
      p.setSpec(YAML.readValue(yamlSpec, AgentRestartPolicySpec.class));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return client.resources(AgentRestartPolicy.class).inNamespace(namespace).resource(p).create();
  }

  static AgentInstance get(KubernetesClient client, String namespace, String name) {
    return client.resources(AgentInstance.class).inNamespace(namespace).withName(name).get();
  }

  static Map<String, String> annotations(KubernetesClient client, String namespace, String name) {
    Map<String, String> a = get(client, namespace, name).getMetadata().getAnnotations();
    return a == null ? Map.of() : a;
  }
}

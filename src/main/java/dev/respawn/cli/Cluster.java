package dev.respawn.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import io.fabric8.kubernetes.api.model.KubernetesResourceList;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.NonNamespaceOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The AgentInstances of one namespace, as a plugin command sees them, and the command's clock. */
final class Cluster implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();
  final KubernetesClient client;
  final String namespace;
  final InstantSource clock;
  private final boolean ownsClient;

  Cluster(KubernetesClient client, String namespace, InstantSource clock, boolean ownsClient) {
    this.client = client;
    this.namespace = namespace;
    this.clock = clock;
    this.ownsClient = ownsClient;
  }

  /** The namespace of {@code -n}, else the client's (the kubeconfig's), else {@code default}. */
  static String namespaceOf(PluginOptions options, KubernetesClient client) {
    if (options.namespace != null && !options.namespace.isBlank()) {
      return options.namespace;
    }
    String configured = client.getNamespace();
    return configured == null || configured.isBlank() ? "default" : configured;
  }

  NonNamespaceOperation<AgentInstance, KubernetesResourceList<AgentInstance>, Resource<AgentInstance>> instances() {
    return client.resources(AgentInstance.class).inNamespace(namespace);
  }

  /** The instance, or a failure saying it is not there. */
  AgentInstance instance(String name) {
    AgentInstance found = instances().withName(name).get();
    if (found == null) {
      throw CommandFailure.notFound(name, namespace);
    }
    return found;
  }

  List<AgentInstance> list() {
    return instances().list().getItems();
  }

  /** Sets annotations with a JSON merge patch of metadata.annotations (works without server-side apply). */
  AgentInstance annotate(String name, Map<String, String> annotations) {
    String patch;
    try {
      patch = JSON.writeValueAsString(Map.of("metadata", Map.of("annotations", annotations)));
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
    try {
      return instances().withName(name).patch(PatchContext.of(PatchType.JSON_MERGE), patch);
    } catch (KubernetesClientException e) {
      if (e.getCode() == 404) {
        throw CommandFailure.notFound(name, namespace);
      }
      throw e;
    }
  }

  /** spec.maxRetries of the named policy (3 when unset); empty when it cannot be read. */
  /** The shared circuit of a policy's dependency, as the policy's status shows it. */
  Optional<dev.respawn.api.v1alpha1.DependencyStatus> dependency(String policy, String dependency) {
    try {
      AgentRestartPolicy p = client.resources(AgentRestartPolicy.class).inNamespace(namespace).withName(policy).get();
      if (p == null || p.getStatus() == null || p.getStatus().dependencies == null) {
        return Optional.empty();
      }
      return p.getStatus().dependencies.stream().filter(d -> d != null && dependency.equals(d.name)).findFirst();
    } catch (KubernetesClientException e) {
      return Optional.empty();
    }
  }

  /** spec.maxRetries of a policy: NAME in this namespace, or NAMESPACE/NAME (as --default-policy names it). */
  Optional<Integer> policyMaxRetries(String policy) {
    int slash = policy.indexOf('/');
    String ns = slash < 0 ? namespace : policy.substring(0, slash);
    String name = policy.substring(slash + 1);
    try {
      AgentRestartPolicy p = client.resources(AgentRestartPolicy.class).inNamespace(ns).withName(name).get();
      if (p == null) {
        return Optional.empty();
      }
      return Optional.of(p.getSpec() == null || p.getSpec().maxRetries == null ? 3 : p.getSpec().maxRetries);
    } catch (KubernetesClientException e) {
      return Optional.empty();
    }
  }

  Instant now() {
    return clock.instant();
  }

  /** The API server's URL, for messages. */
  String url() {
    return String.valueOf(client.getConfiguration().getMasterUrl());
  }

  @Override
  public void close() {
    if (ownsClient) {
      client.close();
    }
  }
}

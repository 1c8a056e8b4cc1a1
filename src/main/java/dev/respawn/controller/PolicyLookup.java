package dev.respawn.controller;

import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.util.Optional;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds an instance's policy: in the informer's cache, else (a policy created a moment before its instance,
 * one `kubectl apply -f` of both, that the watch has not delivered yet) on the API server. Without the second
 * look such an instance was refused as PolicyNotFound, with a Warning Event, for the moment the cache lagged.
 * Only a miss costs a request, and only an instance whose policy is missing is reconciled on a miss again and
 * again: at its own events, not on timers.
 */
final class PolicyLookup implements Function<ResourceID, Optional<AgentRestartPolicy>> {
  private static final Logger LOG = LoggerFactory.getLogger(PolicyLookup.class);
  private final Function<ResourceID, Optional<AgentRestartPolicy>> cache;
  private final KubernetesClient client;

  PolicyLookup(Function<ResourceID, Optional<AgentRestartPolicy>> cache, KubernetesClient client) {
    this.cache = cache;
    this.client = client;
  }

  @Override
  public Optional<AgentRestartPolicy> apply(ResourceID id) {
    Optional<AgentRestartPolicy> cached = cache.apply(id);
    if (cached.isPresent()) {
      return cached;
    }
    try {
      return Optional.ofNullable(client.resources(AgentRestartPolicy.class)
          .inNamespace(id.getNamespace().orElse(null)).withName(id.getName()).get());
    } catch (KubernetesClientException e) {
      // a role without get on policies (one made before it was needed), a server that cannot answer: refused as
      // missing, as the cache says, rather than a reconcile that fails and retries for good (a refused instance
      // can still be suspended)
      LOG.debug("Could not read AgentRestartPolicy {}/{}: {}", id.getNamespace().orElse(""), id.getName(),
          e.getMessage());
      return Optional.empty();
    }
  }
}

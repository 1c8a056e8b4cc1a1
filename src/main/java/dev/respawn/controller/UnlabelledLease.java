package dev.respawn.controller;

import dev.respawn.api.v1alpha1.AgentInstance;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A heartbeat Lease the create of which met a Lease of that name the informer does not show: it lacks the instance
 * label. When this instance is its controller owner, an agent wrote it back whole without the operator's label
 * (its Role allows update), and it is labelled again; unheard, the run and every later one would end stale.
 * Read by a list of that name (the RBAC grants list, not get); the label is added with the version read, and read
 * again when the agent renewed in between.
 */
final class UnlabelledLease {
  private static final Logger LOG = LoggerFactory.getLogger(UnlabelledLease.class);
  /** Reads and patches at most: an agent renewing every second leaves a read's version standing long enough. */
  static final int TRIES = 3;

  /** What became of the Lease. */
  enum Outcome {
    /** Not this instance's (no controller ownerReference to it): never touched. */
    NOT_OURS,
    /** This instance's, labelled again. */
    RELABELLED,
    /** This instance's, changed at every try (an agent renewing in between): tried again with the next create. */
    NOT_NOW,
    /** Refused or unanswered (RBAC, a webhook, the server): like another's, tried again with the next run only. */
    FAILED
  }

  record Result(Outcome outcome, Optional<Lease> lease) {}

  private UnlabelledLease() {}

  static Result relabel(KubernetesClient client, AgentInstance instance, String name) {
    String namespace = instance.getMetadata().getNamespace();
    try {
      for (int i = 0; i < TRIES; i++) {
        Optional<Lease> ours = client.leases().inNamespace(namespace).withField("metadata.name", name).list()
            .getItems().stream().filter(l -> instance.getMetadata().getUid().equals(InstanceSighting.controllerUid(l)))
            .findFirst();
        if (ours.isEmpty()) {
          return new Result(Outcome.NOT_OURS, Optional.empty());
        }
        String label = "{\"metadata\":{\"resourceVersion\":\"" + ours.get().getMetadata().getResourceVersion()
            + "\",\"labels\":{\"" + AgentInstance.INSTANCE_LABEL + "\":\"" + instance.getMetadata().getName()
            + "\"}}}";
        try {
          Lease labelled = client.leases().inNamespace(namespace).resource(ours.get())
              .patch(PatchContext.of(PatchType.JSON_MERGE), label);
          LOG.info("Heartbeat Lease {}/{} had lost its {} label (written back without it): labelled again",
              namespace, name, AgentInstance.INSTANCE_LABEL);
          return new Result(Outcome.RELABELLED, Optional.of(labelled));
        } catch (KubernetesClientException e) {
          if (e.getCode() != 409) {
            throw e;
          }
          // renewed since it was read: read again
        }
      }
    } catch (KubernetesClientException e) {
      LOG.warn("Could not label heartbeat Lease {}/{} again (tried again with the next run): {}", namespace, name,
          e.getMessage());
      return new Result(Outcome.FAILED, Optional.empty());
    }
    LOG.warn("Could not label heartbeat Lease {}/{} again: it changed at each of {} tries", namespace, name, TRIES);
    return new Result(Outcome.NOT_NOW, Optional.empty());
  }
}

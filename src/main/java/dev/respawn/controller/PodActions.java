package dev.respawn.controller;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.heartbeat.HeartbeatLeases;
import dev.respawn.policy.Decision;
import dev.respawn.policy.InstanceState;
import dev.respawn.policy.PodView;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies a decision's pod actions: delete the run that must end, create the next run's pod (told to
 * the pod cache at once), clean up older finished pods once the next run started, and create the
 * heartbeat Lease. Transient API errors propagate (JOSDK retries the whole reconcile, which decides
 * the same again); a pod the server refuses becomes a spawn failure decision.
 */
final class PodActions {
  private static final Logger LOG = LoggerFactory.getLogger(PodActions.class);
  private final KubernetesClient client;
  private final InformerEventSource<Pod, AgentInstance> pods;
  private final AgentInstance instance;
  private final String leaseName;

  PodActions(KubernetesClient client, InformerEventSource<Pod, AgentInstance> pods, AgentInstance instance,
      String leaseName) {
    this.client = client;
    this.pods = pods;
    this.instance = instance;
    this.leaseName = leaseName;
  }

  /** Applies the decision and returns it, or the spawn-failure decision that replaced it. */
  Decision apply(Decision decision, RunObservation seen, InstanceState before,
      BiFunction<Boolean, String, Decision> spawnFailed) {
    seen.currentPod.ifPresent(pod -> {
      PodView view = seen.observation.pod().orElse(null);
      boolean endedButLive = seen.observation.ending().isPresent() && view != null && view.isLive()
          && view.stage() != PodView.Stage.TERMINATING;
      if (decision.deletePod() || endedButLive) {
        delete(pod);
      }
    });
    if (decision.start().isPresent()) {
      Pod pod = PodFactory.build(instance, decision.start().get(), leaseName);
      try {
        Pod created = client.pods().inNamespace(namespace()).resource(pod).create();
        pods.handleRecentResourceCreate(ResourceID.fromResource(created), created);
      } catch (KubernetesClientException e) {
        if (e.getCode() == 409) {
          LOG.info("pod {} already exists: the run was started before", pod.getMetadata().getName());
        } else if (e.getCode() == 422 || (e.getCode() >= 400 && e.getCode() < 500 && e.getCode() != 429)) {
          return spawnFailed.apply(e.getCode() == 422, e.getStatus() != null && e.getStatus().getMessage() != null
              ? e.getStatus().getMessage() : e.getMessage());
        } else {
          throw e;
        }
      }
    }
    cleanUpFinished(decision.state());
    return decision;
  }

  /** Deletes earlier runs' finished pods once the current run is running (logs stay until then). */
  private void cleanUpFinished(InstanceState state) {
    if (state.phase != dev.respawn.api.v1alpha1.Phase.Running) {
      return;
    }
    for (Pod p : seenPods()) {
      if (RunObservation.run(p) < state.run && p.getMetadata().getDeletionTimestamp() == null) {
        delete(p);
      }
    }
  }

  private Iterable<Pod> seenPods() {
    return pods.getSecondaryResources(instance);
  }

  /** Creates the heartbeat Lease; returns it when this call created it (to be told to the Lease cache). */
  Optional<Lease> ensureLease() {
    try {
      return Optional.of(client.leases().inNamespace(namespace()).resource(HeartbeatLeases.newLease(instance,
          PodFactory.owner(instance))).create());
    } catch (KubernetesClientException e) {
      if (e.getCode() == 409) {
        labelExistingLease();
      } else {
        // the agent may still run without its Lease; the next reconcile tries again
        LOG.warn("Could not create the heartbeat Lease {}/{}: {}", namespace(), leaseName, e.getMessage());
      }
    }
    return Optional.empty();
  }

  /**
   * A Lease of that name existed before the operator made it (the agent's, or another tool's): without
   * the instance label the Lease informer never shows it, and every renewal would be missed. Label it
   * (unless it is labelled already, for this or for another instance).
   */
  private void labelExistingLease() {
    try {
      Lease lease = client.leases().inNamespace(namespace()).withName(leaseName).get();
      if (lease == null || (lease.getMetadata().getLabels() != null
          && lease.getMetadata().getLabels().containsKey(AgentInstance.INSTANCE_LABEL))) {
        return;
      }
      LOG.info("Labelling the existing heartbeat Lease {}/{} for instance {}", namespace(), leaseName,
          instance.getMetadata().getName());
      client.leases().inNamespace(namespace()).withName(leaseName).edit(l -> {
        Map<String, String> labels = new HashMap<>(l.getMetadata().getLabels() == null ? Map.of()
            : l.getMetadata().getLabels());
        labels.put(AgentInstance.INSTANCE_LABEL, instance.getMetadata().getName());
        l.getMetadata().setLabels(labels);
        return l;
      });
    } catch (KubernetesClientException e) {
      LOG.warn("Could not label the heartbeat Lease {}/{}: {}", namespace(), leaseName, e.getMessage());
    }
  }

  private void delete(Pod pod) {
    client.pods().inNamespace(namespace()).withName(pod.getMetadata().getName()).delete();
  }

  private String namespace() {
    return instance.getMetadata().getNamespace();
  }
}

package dev.respawn.controller;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.heartbeat.HeartbeatLeases;
import dev.respawn.policy.Decision;
import dev.respawn.policy.PodDeletion;
import io.fabric8.kubernetes.api.model.DeleteOptions;
import io.fabric8.kubernetes.api.model.DeleteOptionsBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Executes a decision's actions exactly, and nothing else: the pod deletions (each with the pod's UID
 * as a precondition, so a pod of the same name made since is never touched), the next run's pod (told
 * to the pod cache at once) and the heartbeat Lease. Transient API errors propagate (JOSDK retries the
 * whole reconcile, which decides the same again); a pod the server refuses becomes the spawn-failure
 * decision that replaces this one.
 */
final class PodActions {
  private static final Logger LOG = LoggerFactory.getLogger(PodActions.class);
  private final KubernetesClient client;
  private final InformerEventSource<Pod, AgentInstance> pods;
  private final AgentInstance instance;
  private final RecentDeletions deletions;
  private final RunLeases leases;
  private final Consumer<Lease> leaseCreated;

  /** {@code leaseCreated} is handed each heartbeat Lease created. */
  PodActions(KubernetesClient client, InformerEventSource<Pod, AgentInstance> pods, AgentInstance instance,
      RecentDeletions deletions, RunLeases leases, Consumer<Lease> leaseCreated) {
    this.client = client;
    this.pods = pods;
    this.instance = instance;
    this.deletions = deletions;
    this.leases = leases;
    this.leaseCreated = leaseCreated;
  }

  /**
   * Executes the decision and returns it, or the spawn-failure decision that replaced it ({@code
   * spawnFailed} takes whether the template is invalid and the server's message).
   */
  Decision execute(Decision decision, BiFunction<Boolean, String, Decision> spawnFailed) {
    for (PodDeletion deletion : decision.deletions()) {
      delete(deletion);
    }
    if (decision.start().isPresent() && !decision.startsExisting()) {
      Pod pod = PodFactory.build(instance, decision.start().get(), HeartbeatLeases.leaseName(instance));
      try {
        Pod created = LostLabels.restore(client, pod, client.pods().inNamespace(namespace()).resource(pod).create());
        pods.handleRecentResourceCreate(ResourceID.fromResource(created), created);
      } catch (KubernetesClientException e) {
        Pod existing = e.getCode() == 409 ? existing(pod.getMetadata().getName(), e) : null;
        if (existing != null && instance.getMetadata().getUid().equals(InstanceSighting.controllerUid(existing))) {
          LOG.info("pod {} already exists: the run was started before", pod.getMetadata().getName());
          LostLabels.restore(client, pod, existing);
        } else if (existing != null) {
          // a pod of that name that is not ours: never touched (api.md §2); retried until it goes
          return spawnFailed.apply(false, inTheWay(existing));
        } else if (e.getCode() == 422 || (e.getCode() >= 400 && e.getCode() < 500 && e.getCode() != 429)
            || webhookUnreachable(e)) {
          return spawnFailed.apply(e.getCode() == 422, serverWords(e));
        } else {
          throw e;
        }
      }
    }
    if (decision.createLease()) {
      createLease(decision.state().run).ifPresent(leaseCreated);
    }
    return decision;
  }

  /**
   * An admission webhook the API server could not call (down, timed out): a 500 whose message says so. An
   * admission refusal like any other (api.md §4: retried with the backoff, spawn_failed, said in status and a
   * Warning Event), where other 5xx are retried by the reconcile: an outage of a webhook lasts minutes, and the
   * user must see what holds the run up.
   */
  static boolean webhookUnreachable(KubernetesClientException e) {
    var status = e.getStatus();
    return e.getCode() >= 500 && status != null && status.getMessage() != null
        && status.getMessage().contains("failed calling webhook");
  }

  /**
   * What the API server said of a refused create: its Status message, else its code and reason (never the
   * client's description of the request, which names the server's URL and may be a page of discovery paths).
   */
  static String serverWords(KubernetesClientException e) {
    var status = e.getStatus();
    if (status != null && status.getMessage() != null && !status.getMessage().isBlank()) {
      return status.getMessage();
    }
    String reason = status == null || status.getReason() == null || status.getReason().isBlank() ? ""
        : " " + status.getReason();
    return "the API server refused the pod: HTTP " + e.getCode() + reason;
  }

  /** The pod of that name that exists (the create's conflict); the conflict again when it is gone since. */
  private Pod existing(String name, KubernetesClientException conflict) {
    Pod existing = client.pods().inNamespace(namespace()).withName(name).get();
    if (existing == null) {
      throw conflict; // gone again since: the retried reconcile decides (and creates) anew
    }
    return existing;
  }

  /** Whether a refused start's message is {@link #inTheWay}'s for a pod of that name. */
  static boolean heldUpBy(String message, String podName) {
    return message != null && message.startsWith("pod " + podName + " ")
        && (message.contains(NOT_OWNED) || message.contains(PREDECESSOR));
  }

  private static final String NOT_OWNED = "is not owned by this AgentInstance";
  private static final String PREDECESSOR = "belongs to an earlier AgentInstance of this name";

  /**
   * Why a pod that is not ours stands in the way. Most often it is the pod of an earlier AgentInstance of the same
   * name (deleted and made again, as GitOps or {@code kubectl replace --force} do): the garbage collector deletes it,
   * and a graceful stop takes up to its terminationGracePeriodSeconds; nothing to do but wait.
   */
  private String inTheWay(Pod existing) {
    String name = existing.getMetadata().getName();
    boolean predecessor = existing.getMetadata().getOwnerReferences() != null && existing.getMetadata()
        .getOwnerReferences().stream().anyMatch(r -> Boolean.TRUE.equals(r.getController())
            && r.getApiVersion() != null
            && r.getApiVersion().startsWith(HasMetadata.getGroup(AgentInstance.class) + "/")
            && HasMetadata.getKind(AgentInstance.class).equals(r.getKind())
            && instance.getMetadata().getName().equals(r.getName()));
    if (predecessor) {
      return "pod " + name + " " + PREDECESSOR + " (deleted; the garbage collector "
          + "deletes its pods" + (existing.getMetadata().getDeletionTimestamp() != null ? ", this one is stopping"
          : "") + "); the start is tried again until it is gone";
    }
    if (existing.getMetadata().getDeletionTimestamp() != null) {
      return "pod " + name + " is being deleted and " + NOT_OWNED + "; the start is tried again "
          + "until it is gone";
    }
    return "pod " + name + " exists and " + NOT_OWNED + " (no controller ownerReference with its "
        + "UID); delete or rename that pod";
  }

  /** Deletes one pod, on the condition that it is still the pod of that UID; gone or replaced is fine. */
  private void delete(PodDeletion deletion) {
    if (deletions.deleted(deletion.uid())) {
      return; // deleted a moment ago; the pod cache has not heard yet
    }
    if (pods.get(new ResourceID(deletion.name(), namespace())).filter(p -> deletion.uid().equals(p.getMetadata()
        .getUid()) && p.getMetadata().getDeletionTimestamp() != null).isPresent()) {
      return; // its deletion is under way, held by a finalizer (the template's own): asked once is enough
    }
    DeleteOptions options = new DeleteOptionsBuilder().withNewPreconditions().withUid(deletion.uid())
        .endPreconditions().build();
    String url = client.getMasterUrl().toString().replaceAll("/+$", "") + "/api/v1/namespaces/"
        + encode(namespace()) + "/pods/" + encode(deletion.name());
    try {
      client.raw(url, "DELETE", options);
      LOG.debug("deleted pod {}/{} ({})", namespace(), deletion.name(), deletion.why());
    } catch (KubernetesClientException e) {
      if (e.getCode() != 404 && e.getCode() != 409) {
        throw e;
      }
      LOG.info("pod {}/{} is gone or was replaced: {}", namespace(), deletion.name(), e.getMessage());
    }
    deletions.record(deletion.uid());
  }

  /**
   * Removes the last run's verdict and detail from the heartbeat Lease, once the next run's pod is made (api.md
   * §5: a stale run cannot vouch for the new one, nor condemn it): an agent that renews without them would
   * otherwise be judged Stalled or Crashed by its predecessor's words. Only a Lease this instance controls;
   * the checkpoint annotations stay (the next run resumes from them).
   */
  void clearVerdict(Lease lease) {
    if (!instance.getMetadata().getUid().equals(InstanceSighting.controllerUid(lease))) {
      return;
    }
    // one JSON Patch of the keys the cached Lease shows, no read first: the RBAC grants patch, not get
    Map<String, String> annotations = lease.getMetadata().getAnnotations() == null ? Map.of()
        : lease.getMetadata().getAnnotations();
    List<String> keys = Stream.of(HeartbeatLeases.HEALTH, HeartbeatLeases.DETAIL).filter(annotations::containsKey)
        .toList();
    if (keys.isEmpty()) {
      return;
    }
    try {
      removeAnnotations(lease, keys);
    } catch (KubernetesClientException e) {
      if (e.getCode() == 422 && keys.size() > 1) {
        // a JSON Patch is all or nothing: one key was gone already (the cache was behind); each on its own
        keys.forEach(key -> {
          try {
            removeAnnotations(lease, List.of(key));
          } catch (KubernetesClientException gone) {
            LOG.debug("annotation {} of Lease {} is gone already", key, lease.getMetadata().getName());
          }
        });
        return;
      }
      LOG.warn("Could not clear the last run's verdict on Lease {}/{}: {}", namespace(), lease.getMetadata().getName(),
          e.getMessage());
    }
  }

  private void removeAnnotations(Lease lease, List<String> keys) {
    String removals = keys.stream().map(key -> "{\"op\":\"remove\",\"path\":\"/metadata/annotations/"
        + key.replace("~", "~0").replace("/", "~1") + "\"}").collect(Collectors.joining(",", "[", "]"));
    // on the cached object, not by name: fabric8 reads a named object before it patches it
    client.leases().inNamespace(namespace()).resource(lease).patch(PatchContext.of(PatchType.JSON), removals);
  }

  /**
   * Creates the heartbeat Lease; returns it when this call created it (to be told to the Lease cache). Not when its
   * create for this run met someone else's Lease of that name already (told once, not tried at every wake-up).
   */
  private Optional<Lease> createLease(int run) {
    String uid = instance.getMetadata().getUid();
    String name = HeartbeatLeases.leaseName(instance);
    if (leases.heldByAnotherInRun(uid, name, run)) {
      return Optional.empty();
    }
    try {
      return Optional.of(client.leases().inNamespace(namespace()).resource(HeartbeatLeases.newLease(instance,
          PodFactory.owner(instance))).create());
    } catch (KubernetesClientException e) {
      if (e.getCode() == 409) {
        // a Lease of that name exists but the informer does not show it: it lacks the instance label
        UnlabelledLease.Result found = UnlabelledLease.relabel(client, instance, name);
        UnlabelledLease.Outcome outcome = found.outcome();
        if (outcome == UnlabelledLease.Outcome.RELABELLED || outcome == UnlabelledLease.Outcome.NOT_NOW) {
          return found.lease(); // ours: labelled again, or tried again with the next create
        }
        // not ours (never touched; the agent's renewals of it are not seen), or refused: tried once per run
        leases.heldByAnother(uid, name, run);
        if (outcome == UnlabelledLease.Outcome.FAILED) {
          return Optional.empty(); // said by UnlabelledLease
        }
      }
      LOG.warn("Could not create the heartbeat Lease {}/{}: {}", namespace(), name, e.getCode() == 409
          ? "a Lease of that name exists and is not this instance's (owned by another, and no "
              + AgentInstance.INSTANCE_LABEL + " label); rename spec.heartbeat.leaseName or delete that Lease (tried"
              + " again with the next run)"
          : e.getMessage());
    }
    return Optional.empty();
  }

  private String namespace() {
    return instance.getMetadata().getNamespace();
  }

  private static String encode(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }
}

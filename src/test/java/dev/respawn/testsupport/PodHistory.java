package dev.respawn.testsupport;

import dev.respawn.api.v1alpha1.AgentInstance;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A pod watch of the test (not the operator's): every pod of every instance that ever appeared, in
 * order, and every moment at which one instance had two live (non-terminal) pods at once. The watch
 * sees the API server's changes in their order, so "two live pods" here means two live pods in the
 * server's history, not a race of the test.
 */
public final class PodHistory implements AutoCloseable {
  private final SharedIndexInformer<Pod> informer;
  private final Map<String, Pod> byUid = new HashMap<>();
  private final Set<String> seenUids = new HashSet<>();
  private final Map<String, List<String>> created = new HashMap<>();
  private final Map<String, Integer> maxLive = new HashMap<>();
  private final List<String> violations = new ArrayList<>();

  public PodHistory(KubernetesClient client, String namespace) {
    informer = client.pods().inNamespace(namespace).withLabel(AgentInstance.INSTANCE_LABEL)
        .inform(new ResourceEventHandler<>() {
          @Override
          public void onAdd(Pod pod) {
            seen(pod, false);
          }

          @Override
          public void onUpdate(Pod old, Pod pod) {
            seen(pod, false);
          }

          @Override
          public void onDelete(Pod pod, boolean finalStateUnknown) {
            seen(pod, true);
          }
        });
  }

  private synchronized void seen(Pod pod, boolean deleted) {
    String uid = pod.getMetadata().getUid();
    String instance = pod.getMetadata().getLabels().get(AgentInstance.INSTANCE_LABEL);
    if (seenUids.add(uid)) {
      created.computeIfAbsent(instance, k -> new ArrayList<>()).add(pod.getMetadata().getName());
    }
    if (deleted) {
      byUid.remove(uid);
    } else {
      byUid.put(uid, pod);
    }
    // the singleton promise covers the pods the instance controls, not strangers that carry its label
    String owner = controller(pod);
    if (owner == null) {
      return;
    }
    List<String> live = byUid.values().stream().filter(p -> owner.equals(controller(p)))
        .filter(PodHistory::isLive).map(p -> p.getMetadata().getName()).sorted().toList();
    maxLive.merge(instance, live.size(), Math::max);
    if (live.size() > 1) {
      violations.add(instance + ": live at once " + live);
    }
  }

  /** The UID of the pod's controller ownerReference, or null. */
  private static String controller(Pod p) {
    return p.getMetadata().getOwnerReferences() == null ? null : p.getMetadata().getOwnerReferences().stream()
        .filter(r -> Boolean.TRUE.equals(r.getController())).map(r -> r.getUid()).findFirst().orElse(null);
  }

  /** Not Succeeded or Failed (a pod without a phase yet is live: it may still start). */
  public static boolean isLive(Pod p) {
    String phase = p.getStatus() == null ? null : p.getStatus().getPhase();
    return !"Succeeded".equals(phase) && !"Failed".equals(phase);
  }

  /** Names of the pods of this instance that ever existed, in the order they appeared (one entry per pod UID). */
  public synchronized List<String> created(String instance) {
    return List.copyOf(created.getOrDefault(instance, List.of()));
  }

  /** Every moment an instance had more than one live pod. */
  public synchronized List<String> violations() {
    return List.copyOf(violations);
  }

  /** The most live pods one instance had at once. */
  public synchronized int maxLive(String instance) {
    return maxLive.getOrDefault(instance, 0);
  }

  @Override
  public void close() {
    informer.stop();
  }
}

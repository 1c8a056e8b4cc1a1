package dev.respawn.chaos;

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
 * The test's own pod watch (its client is never faulted, its watch never dropped): every pod of every
 * instance that appeared, in order, and every moment one instance had two live (not Succeeded or
 * Failed) pods in the server's history.
 */
final class PodTimeline implements AutoCloseable {
  private final SharedIndexInformer<Pod> informer;
  private final Map<String, Pod> byUid = new HashMap<>();
  private final Set<String> seenUids = new HashSet<>();
  private final Map<String, List<String>> created = new HashMap<>();
  private final List<String> overlaps = new ArrayList<>();

  PodTimeline(KubernetesClient client, String namespace) {
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
    List<String> live = byUid.values().stream()
        .filter(p -> instance.equals(p.getMetadata().getLabels().get(AgentInstance.INSTANCE_LABEL)))
        .filter(PodTimeline::isLive).map(p -> p.getMetadata().getName()).sorted().toList();
    if (live.size() > 1) {
      overlaps.add(instance + ": live at once " + live);
    }
  }

  static boolean isLive(Pod p) {
    String phase = p.getStatus() == null ? null : p.getStatus().getPhase();
    return !"Succeeded".equals(phase) && !"Failed".equals(phase);
  }

  /** Pod names of the instance, one per pod UID, in the order they appeared. */
  synchronized List<String> created(String instance) {
    return List.copyOf(created.getOrDefault(instance, List.of()));
  }

  synchronized List<String> overlaps() {
    return List.copyOf(overlaps);
  }

  @Override
  public void close() {
    informer.stop();
  }
}

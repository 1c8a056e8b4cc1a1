package dev.respawn.bench;

import dev.respawn.api.v1alpha1.AgentInstance;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The physical limit: a bare fabric8 informer that creates the next pod the moment it sees one
 * terminate (phase Succeeded or Failed), then deletes the finished one. No decision, no status, no
 * Events. It hands each replacement to a small thread pool so, like the operator's reconciler pool, it
 * is never serialised behind its own round trips. Pods are named {@code <instance>-<run>} like Respawn's.
 */
final class BareLoop implements AutoCloseable {
  static final int THREADS = 8;
  private final KubernetesClient client;
  private final String namespace;
  private final ExecutorService pool = Executors.newFixedThreadPool(THREADS, r -> {
    Thread t = new Thread(r, "bare-loop");
    t.setDaemon(true);
    return t;
  });
  private final Set<String> handled = ConcurrentHashMap.newKeySet();
  private final AtomicLong errors = new AtomicLong();
  private SharedIndexInformer<Pod> informer;

  BareLoop(KubernetesClient client, String namespace) {
    this.client = client;
    this.namespace = namespace;
  }

  BareLoop start() {
    informer = client.pods().inNamespace(namespace).withLabel(AgentInstance.INSTANCE_LABEL)
        .inform(new ResourceEventHandler<>() {
          @Override
          public void onAdd(Pod pod) {
            react(pod);
          }

          @Override
          public void onUpdate(Pod old, Pod pod) {
            react(pod);
          }

          @Override
          public void onDelete(Pod pod, boolean unknown) {}
        });
    return this;
  }

  private void react(Pod pod) {
    String phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
    if (("Failed".equals(phase) || "Succeeded".equals(phase)) && handled.add(pod.getMetadata().getUid())) {
      pool.execute(() -> replace(pod));
    }
  }

  private void replace(Pod ended) {
    try {
      String instance = ended.getMetadata().getLabels().get(AgentInstance.INSTANCE_LABEL);
      Pod next = pod(namespace, instance, Observer.run(ended) + 1);
      next.setSpec(ended.getSpec());
      try {
        client.pods().inNamespace(namespace).resource(next).create();
      } catch (KubernetesClientException e) {
        if (e.getCode() != 409) {
          throw e;
        }
      }
      client.pods().inNamespace(namespace).withName(ended.getMetadata().getName()).delete();
    } catch (RuntimeException e) {
      errors.incrementAndGet();
    }
  }

  /** Replacements that failed. */
  long errors() {
    return errors.get();
  }

  /** Run {@code run} of a bare-loop "instance": one container, restartPolicy Never, the instance/run labels. */
  static Pod pod(String namespace, String instance, int run) {
    return new PodBuilder().withNewMetadata().withName(Observer.podName(instance, run)).withNamespace(namespace)
        .withLabels(Map.of(AgentInstance.INSTANCE_LABEL, instance, AgentInstance.RUN_LABEL, Integer.toString(run)))
        .endMetadata().withNewSpec().withRestartPolicy("Never").addNewContainer().withName("agent")
        .withImage("registry.example/agents/coder:1.4").endContainer().endSpec().build();
  }

  @Override
  public void close() {
    if (informer != null) {
      informer.stop();
    }
    pool.shutdownNow();
  }
}

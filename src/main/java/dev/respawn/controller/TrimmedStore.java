package dev.respawn.controller;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.heartbeat.HeartbeatLeases;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.client.informers.cache.BasicItemStore;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.fabric8.kubernetes.client.informers.cache.ItemStore;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * An informer's store that keeps of each object only what the operator reads, as Kubernetes' own controllers do
 * with an informer transform. On a real API server {@code metadata.managedFields} is a third to a half of a pod,
 * and {@code kubectl apply} keeps a whole second copy of an object in the last-applied annotation; the operator
 * reads neither, and writes no object back whole (status goes by JSON Patch, pods are created and deleted, Leases
 * created, their verdict removed by JSON Patch, their label put back by a merge patch), so what is dropped here is
 * never written back missing.
 *
 * <p>The object is trimmed in place, before it is stored: the informer's handlers are told the same trimmed
 * object, so an update's old and new copies always compare like with like.
 *
 * <p>Only for an informer of its own: JOSDK gives a configuration's one store to the informer of every namespace
 * it watches, and the relist of one namespace would drop the objects of the others ({@link #forWatched}).
 */
public final class TrimmedStore<T extends HasMetadata> implements ItemStore<T> {
  /** kubectl apply's copy of the whole object, kept on it as an annotation. */
  public static final String LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";
  /** The prefix of the pod annotations the operator reads (run start, agent container). */
  static final String OWN_PREFIX = "respawn.dev/";

  private final BasicItemStore<T> items = new BasicItemStore<>(Cache::metaNamespaceKeyFunc);
  private final Consumer<T> trim;

  private TrimmedStore(Consumer<T> trim) {
    this.trim = trim;
  }

  /** Instances, policies and Leases: without managed fields and the last-applied copy. */
  public static <T extends HasMetadata> TrimmedStore<T> ofMetadata() {
    return new TrimmedStore<>(TrimmedStore::trimMetadata);
  }

  /**
   * Pods: their status whole, and of the rest what the operator reads: its own annotations ({@value #OWN_PREFIX},
   * not those the template gave), the names of the containers, the heartbeat Lease the run was given (its
   * {@value HeartbeatLeases#LEASE_NAME_ENV}), the init containers' names and restart policy (sidecars). Not the
   * rest of the template they were made from (images, env, volumes, resources), which the instance's cache holds.
   */
  public static TrimmedStore<Pod> ofPods() {
    return new TrimmedStore<>(pod -> {
      trimMetadata(pod);
      Map<String, String> annotations = pod.getMetadata().getAnnotations();
      if (annotations != null && !annotations.isEmpty()) {
        pod.getMetadata().setAnnotations(annotations.entrySet().stream().filter(a -> a.getKey().startsWith(OWN_PREFIX))
            .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue, (a, b) -> a, LinkedHashMap::new)));
      }
      PodSpec spec = pod.getSpec();
      if (spec != null) {
        PodSpec kept = new PodSpec();
        kept.setContainers(spec.getContainers() == null ? null : spec.getContainers().stream()
            .map(c -> new ContainerBuilder().withName(c.getName()).withEnv(c.getEnv() == null ? null
                : c.getEnv().stream().filter(e -> HeartbeatLeases.LEASE_NAME_ENV.equals(e.getName())).toList())
                .build()).toList());
        kept.setInitContainers(spec.getInitContainers() == null ? null : spec.getInitContainers().stream()
            .map(c -> new ContainerBuilder().withName(c.getName()).withRestartPolicy(c.getRestartPolicy()).build())
            .toList());
        pod.setSpec(kept);
      }
    });
  }

  /**
   * Instances as the policies see them: who they are, the policy they use, whether suspended, and their status;
   * not the pod template, the task, the heartbeat or the agent container, which only the instance's own
   * reconcile reads (from a cache of its own).
   */
  public static TrimmedStore<AgentInstance> ofFleetMembers() {
    return new TrimmedStore<>(instance -> {
      trimMetadata(instance);
      if (instance.getSpec() != null) {
        instance.getSpec().template = null;
        instance.getSpec().task = null;
        instance.getSpec().heartbeat = null;
        instance.getSpec().agentContainer = null;
      }
    });
  }

  /**
   * {@code store} when the operator watches one namespace or all of them (one informer per configuration), else
   * null (JOSDK's own store): with several namespaces JOSDK shares a store between their informers (see the class
   * comment).
   */
  static <T extends HasMetadata> ItemStore<T> forWatched(Set<String> namespaces, ItemStore<T> store) {
    return namespaces.size() <= 1 ? store : null;
  }

  private static void trimMetadata(HasMetadata object) {
    ObjectMeta meta = object.getMetadata();
    if (meta == null) {
      return;
    }
    meta.setManagedFields(null);
    if (meta.getAnnotations() != null && meta.getAnnotations().containsKey(LAST_APPLIED)) {
      Map<String, String> annotations = new LinkedHashMap<>(meta.getAnnotations());
      annotations.remove(LAST_APPLIED);
      meta.setAnnotations(annotations);
    }
  }

  @Override
  public String getKey(T object) {
    return items.getKey(object);
  }

  @Override
  public T put(String key, T object) {
    trim.accept(object);
    return items.put(key, object);
  }

  @Override
  public T remove(String key) {
    return items.remove(key);
  }

  @Override
  public Stream<String> keySet() {
    return items.keySet();
  }

  @Override
  public Stream<T> values() {
    return items.values();
  }

  @Override
  public int size() {
    return items.size();
  }

  @Override
  public T get(String key) {
    return items.get(key);
  }
}

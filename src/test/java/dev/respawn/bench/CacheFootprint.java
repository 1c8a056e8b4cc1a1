package dev.respawn.bench;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.controller.PodFactory;
import dev.respawn.controller.TolerantResources;
import dev.respawn.controller.TrimmedStore;
import dev.respawn.policy.Decision;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodStatusBuilder;
import io.fabric8.kubernetes.client.informers.cache.BasicItemStore;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.fabric8.kubernetes.client.informers.cache.ItemStore;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * What the operator's two caches of an instance cost (the instances' own, and the policies' view of them), with
 * the instance as a real API server serves it: {@code bench/instance-as-served.json} was read from realapi
 * (apiextensions-apiserver 1.36) after a {@code kubectl apply} of a production-like coding agent (env from
 * Secrets, volumes, security context, a task) and a status written by a field manager of its own, so it carries
 * the managed fields and the last-applied copy a cluster gives it. Each store holds N copies, each parsed from
 * the JSON as the informer parses a watch event (by fabric8's serialization for the untrimmed figure, by the
 * operator's for the others); the heap after GC is read before and after.
 *
 * <p>Its pod cannot be had that way (realapi serves no pods): the pod the operator makes of that instance, with a
 * running agent's status, is measured as it is, without what a server adds (defaults, managed fields), which the
 * trimmed store drops too; so its saving is the smaller one.
 */
final class CacheFootprint {
  static final String NAME = "cache footprint";

  private CacheFootprint() {}

  static void run(Plan plan, Results results) {
    String json = fixture();
    int n = plan.scaleSizes().get(plan.scaleSizes().size() - 1); // as many as the largest scale step
    KubernetesSerialization fabric8 = new KubernetesSerialization();
    KubernetesSerialization operators = TolerantResources.forOperator();
    long untrimmed = perInstance(n, json, fabric8, CacheFootprint::whole, CacheFootprint::whole);
    long severalNamespaces = perInstance(n, json, operators, CacheFootprint::whole, CacheFootprint::whole);
    long trimmed = perInstance(n, json, operators, TrimmedStore::ofMetadata, TrimmedStore::ofFleetMembers);
    results.info(NAME, String.format("instance as served (%,d B of JSON), both caches: untrimmed",
        json.getBytes(StandardCharsets.UTF_8).length),
        String.format("%,d B per instance", untrimmed));
    results.info(NAME, "the same, with --namespaces a,b (whole stores, the operator's serialization reads no "
        + "managedFields)", perInstance(severalNamespaces, untrimmed));
    results.info(NAME, "the same, one or all namespaces (TrimmedStore)", perInstance(trimmed, untrimmed));
    results.info(NAME, String.format("at %,d instances: untrimmed / several namespaces / trimmed", n),
        Results.mib(untrimmed * n) + " / " + Results.mib(severalNamespaces * n) + " / " + Results.mib(trimmed * n));
    String pod = podJson(json);
    long podUntrimmed = perPod(n, pod, fabric8, CacheFootprint::whole);
    long podTrimmed = perPod(n, pod, operators, TrimmedStore::ofPods);
    results.info(NAME, String.format("its pod as the operator makes it, running (%,d B of JSON; no server defaults,"
        + " no managedFields): untrimmed / trimmed", pod.getBytes(StandardCharsets.UTF_8).length),
        String.format("%,d / %,d B per pod (%s)", podUntrimmed, podTrimmed,
            Results.number(100.0 * (podTrimmed - podUntrimmed) / podUntrimmed) + " %"));
  }

  /** The pod PodFactory makes of the instance, with the status of a running agent (not a server's defaults). */
  private static String podJson(String instanceJson) {
    AgentInstance instance = Serialization.unmarshal(instanceJson, AgentInstance.class);
    Pod pod = PodFactory.build(instance, new Decision.PodStart(2, "coder-0001-2", 1, Optional.empty(),
        Optional.empty(), Optional.empty(), Instant.parse("2026-11-27T17:00:00Z")), "coder-0001");
    pod.getMetadata().setUid("3f6c2a4e-8b1d-4c5e-9a7f-2d4b6e8c0a13");
    pod.getMetadata().setResourceVersion("48213");
    pod.getMetadata().setCreationTimestamp("2026-11-27T17:00:00Z");
    pod.setStatus(new PodStatusBuilder().withPhase("Running").withHostIP("10.0.3.17").withPodIP("10.244.3.41")
        .withStartTime("2026-11-27T17:00:00Z").withQosClass("Burstable")
        .addNewCondition().withType("Ready").withStatus("True").withLastTransitionTime("2026-11-27T17:00:09Z")
        .endCondition()
        .addNewCondition().withType("PodScheduled").withStatus("True")
        .withLastTransitionTime("2026-11-27T17:00:00Z").endCondition()
        .addNewContainerStatus().withName("agent").withImage("registry.example/agents/coder:1.4.2")
        .withImageID("registry.example/agents/coder@sha256:" + "0123456789abcdef".repeat(4))
        .withContainerID("containerd://" + "fedcba9876543210".repeat(4)).withReady(true).withStarted(true)
        .withRestartCount(0).withNewState().withNewRunning().withStartedAt("2026-11-27T17:00:08Z").endRunning()
        .endState().endContainerStatus().build());
    return Serialization.asJson(pod);
  }

  private static String perInstance(long bytes, long untrimmed) {
    return String.format("%,d B per instance (%s)", bytes, Results.number(100.0 * (bytes - untrimmed) / untrimmed)
        + " %");
  }

  private static <T extends HasMetadata> ItemStore<T> whole() {
    return new BasicItemStore<>(Cache::metaNamespaceKeyFunc);
  }

  private static long perPod(int n, String json, KubernetesSerialization reading, Supplier<ItemStore<Pod>> store) {
    ItemStore<Pod> pods = store.get();
    long before = ScaleRun.heapAfterGc();
    for (int i = 0; i < n; i++) {
      Pod pod = reading.unmarshal(json.replace("coder-0001-2", String.format("coder-%05d-2", i)), Pod.class);
      pods.put(pods.getKey(pod), pod);
    }
    long after = ScaleRun.heapAfterGc();
    if (pods.size() != n) {
      throw new IllegalStateException("the store holds " + pods.size());
    }
    return (after - before) / n;
  }

  private static long perInstance(int n, String json, KubernetesSerialization reading,
      Supplier<ItemStore<AgentInstance>> own, Supplier<ItemStore<AgentInstance>> policies) {
    List<ItemStore<AgentInstance>> stores = List.of(own.get(), policies.get());
    long before = ScaleRun.heapAfterGc();
    for (int i = 0; i < n; i++) {
      String named = json.replace("coder-0001", String.format("coder-%05d", i));
      for (ItemStore<AgentInstance> store : stores) {
        AgentInstance instance = reading.unmarshal(named, AgentInstance.class);
        store.put(store.getKey(instance), instance);
      }
    }
    long after = ScaleRun.heapAfterGc();
    if (stores.stream().mapToInt(ItemStore::size).sum() != 2 * n) {
      throw new IllegalStateException("the stores hold " + stores.stream().mapToInt(ItemStore::size).sum());
    }
    return (after - before) / n;
  }

  private static String fixture() {
    try (InputStream in = CacheFootprint.class.getResourceAsStream("/bench/instance-as-served.json")) {
      // compact, as the API server sends it
      return Serialization.jsonMapper().readTree(new String(in.readAllBytes(), StandardCharsets.UTF_8)).toString();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}

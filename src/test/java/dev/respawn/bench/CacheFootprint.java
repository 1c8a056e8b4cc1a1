package dev.respawn.bench;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.controller.TrimmedStore;
import io.fabric8.kubernetes.client.informers.cache.BasicItemStore;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.fabric8.kubernetes.client.informers.cache.ItemStore;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.function.Supplier;

/**
 * What the operator's two caches of an instance cost (the instances' own, and the policies' view of them), with
 * the instance as a real API server serves it: {@code bench/instance-as-served.json} was read from realapi
 * (apiextensions-apiserver 1.36) after a {@code kubectl apply} of a production-like coding agent (env from
 * Secrets, volumes, security context, a task) and a status written by a field manager of its own, so it carries
 * the managed fields and the last-applied copy a cluster gives it. Each store holds N copies, each parsed from
 * the JSON as the informer parses a watch event; the heap after GC is read before and after.
 *
 * <p>Not measured here: pods (realapi serves no pods), whose managed fields and template annotations are
 * dropped too.
 */
final class CacheFootprint {
  static final String NAME = "cache footprint";

  private CacheFootprint() {}

  static void run(Plan plan, Results results) {
    String json = fixture();
    int n = plan.scaleSizes().get(plan.scaleSizes().size() - 1); // as many as the largest scale step
    long untrimmed = perInstance(n, json, () -> new BasicItemStore<>(Cache::metaNamespaceKeyFunc),
        () -> new BasicItemStore<>(Cache::metaNamespaceKeyFunc));
    long trimmed = perInstance(n, json, TrimmedStore::ofMetadata, TrimmedStore::ofFleetMembers);
    results.info(NAME, String.format("instance as served (%,d B of JSON), both caches: untrimmed",
        json.getBytes(StandardCharsets.UTF_8).length),
        String.format("%,d B per instance", untrimmed));
    results.info(NAME, "the same, trimmed (TrimmedStore)", String.format("%,d B per instance (%s)", trimmed,
        Results.number(100.0 * (trimmed - untrimmed) / untrimmed) + " %"));
    results.info(NAME, String.format("at %,d instances: untrimmed / trimmed", n), Results.mib(untrimmed * n)
        + " / " + Results.mib(trimmed * n));
  }

  private static long perInstance(int n, String json, Supplier<ItemStore<AgentInstance>> own,
      Supplier<ItemStore<AgentInstance>> policies) {
    List<ItemStore<AgentInstance>> stores = List.of(own.get(), policies.get());
    long before = heapAfterGc();
    for (int i = 0; i < n; i++) {
      String named = json.replace("coder-0001", String.format("coder-%05d", i));
      for (ItemStore<AgentInstance> store : stores) {
        AgentInstance instance = Serialization.unmarshal(named, AgentInstance.class);
        store.put(store.getKey(instance), instance);
      }
    }
    long after = heapAfterGc();
    if (stores.stream().mapToInt(ItemStore::size).sum() != 2 * n) {
      throw new IllegalStateException("the stores hold " + stores.stream().mapToInt(ItemStore::size).sum());
    }
    return (after - before) / n;
  }

  private static long heapAfterGc() {
    long used = Long.MAX_VALUE;
    for (int i = 0; i < 5; i++) { // the lowest of a few full collections
      System.gc();
      used = Math.min(used, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
    }
    return used;
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

package dev.respawn.controller;

import dev.respawn.api.v1alpha1.AgentInstance;
import io.fabric8.kubernetes.client.informers.cache.BasicItemStore;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.fabric8.kubernetes.client.informers.cache.ItemStore;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * The operator's cache of AgentInstances (fabric8's own store, through its public ItemStore API) that
 * says when an instance leaves it: whatever the operator keeps in memory about that instance (renewal
 * times, gauges, Event series) is dropped then, so nothing grows with churn (api.md §8).
 */
final class InstanceStore implements ItemStore<AgentInstance> {
  private final BasicItemStore<AgentInstance> store = new BasicItemStore<>(Cache::metaNamespaceKeyFunc);
  private final Consumer<AgentInstance> gone;

  InstanceStore(Consumer<AgentInstance> gone) {
    this.gone = gone;
  }

  @Override
  public String getKey(AgentInstance instance) {
    return store.getKey(instance);
  }

  @Override
  public AgentInstance put(String key, AgentInstance instance) {
    return store.put(key, instance);
  }

  @Override
  public AgentInstance remove(String key) {
    AgentInstance removed = store.remove(key);
    if (removed != null) {
      gone.accept(removed);
    }
    return removed;
  }

  @Override
  public Stream<String> keySet() {
    return store.keySet();
  }

  @Override
  public Stream<AgentInstance> values() {
    return store.values();
  }

  @Override
  public int size() {
    return store.size();
  }

  @Override
  public AgentInstance get(String key) {
    return store.get(key);
  }
}

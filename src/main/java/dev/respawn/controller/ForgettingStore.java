package dev.respawn.controller;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.informers.cache.BasicItemStore;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.fabric8.kubernetes.client.informers.cache.ItemStore;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * The operator's cache of a primary resource (fabric8's own store, through its public ItemStore API) that
 * says when a resource leaves it: whatever the operator keeps in memory about it (renewal times, gauges,
 * Event series) is dropped then, so nothing grows with churn (api.md §8). No finalizer is needed for it.
 */
final class ForgettingStore<T extends HasMetadata> implements ItemStore<T> {
  private final BasicItemStore<T> store = new BasicItemStore<>(Cache::metaNamespaceKeyFunc);
  private final Consumer<T> gone;

  ForgettingStore(Consumer<T> gone) {
    this.gone = gone;
  }

  /**
   * Called when a reconcile of {@code resource} is done: if the resource left the store while it ran,
   * what that reconcile remembered after the store's own forgetting (a gauge, a renewal time) is
   * forgotten again. A resource of the same name made since then keeps its key.
   */
  void forgetIfGone(T resource) {
    if (store.get(getKey(resource)) == null) {
      gone.accept(resource);
    }
  }

  @Override
  public String getKey(T resource) {
    return store.getKey(resource);
  }

  @Override
  public T put(String key, T resource) {
    return store.put(key, resource);
  }

  @Override
  public T remove(String key) {
    T removed = store.remove(key);
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
  public Stream<T> values() {
    return store.values();
  }

  @Override
  public int size() {
    return store.size();
  }

  @Override
  public T get(String key) {
    return store.get(key);
  }
}

package dev.respawn.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ForgettingStoreTest {
  private final List<String> forgotten = new ArrayList<>();
  private final ForgettingStore<ConfigMap> store = new ForgettingStore<>(
      c -> forgotten.add(c.getMetadata().getName() + "@" + c.getMetadata().getUid()));

  private static ConfigMap named(String name, String uid) {
    return new ConfigMapBuilder().withNewMetadata().withNamespace("agents").withName(name).withUid(uid).endMetadata()
        .build();
  }

  @Test
  void aResourceIsForgottenWhenItLeavesTheStoreAndOnlyThen() {
    ConfigMap a = named("a", "1");
    store.put(store.getKey(a), a);
    assertThat(store.remove("agents/missing")).isNull();
    assertThat(forgotten).isEmpty();
    store.remove(store.getKey(a));
    assertThat(forgotten).containsExactly("a@1");
  }

  @Test
  void aReconcileThatEndsAfterItsResourceLeftForgetsItAgain() {
    ConfigMap a = named("a", "1");
    store.put(store.getKey(a), a);
    store.forgetIfGone(a);
    assertThat(forgotten).as("still there: nothing to forget").isEmpty();
    store.remove(store.getKey(a));
    // the reconcile in flight remembered something after the store forgot it: done again
    store.forgetIfGone(a);
    assertThat(forgotten).containsExactly("a@1", "a@1");
  }

  @Test
  void aResourceOfTheSameNameMadeSinceKeepsItsKey() {
    ConfigMap old = named("a", "1");
    store.put(store.getKey(old), old);
    store.remove(store.getKey(old));
    ConfigMap again = named("a", "2");
    store.put(store.getKey(again), again);
    store.forgetIfGone(old);
    assertThat(forgotten).containsExactly("a@1");
  }
}

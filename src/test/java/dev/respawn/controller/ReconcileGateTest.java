package dev.respawn.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The operator stops only once no reconcile runs, and none acts after that (JOSDK empties its caches). */
class ReconcileGateTest {
  @Test
  void reconcilesEnterUntilClosedAndNoneAfter() {
    ReconcileGate gate = new ReconcileGate();
    assertThat(gate.enter()).isTrue();
    assertThat(gate.enter()).as("several at once").isTrue();
    gate.exit();
    gate.exit();
    assertThat(gate.close(Duration.ofSeconds(1))).isTrue();
    assertThat(gate.enter()).isFalse();
  }

  /** Shut (leadership lost): no reconcile enters, and it does not wait for those inside. */
  @Test
  void shuttingTurnsNewReconcilesAwayWithoutWaiting() {
    ReconcileGate gate = new ReconcileGate();
    assertThat(gate.enter()).isTrue();
    gate.shut();
    assertThat(gate.open()).isFalse();
    assertThat(gate.enter()).isFalse();
    gate.exit();
    assertThat(gate.close(Duration.ofSeconds(1))).isTrue();
  }

  @Test
  void closingWaitsForTheReconcilesInside() throws Exception {
    ReconcileGate gate = new ReconcileGate();
    CountDownLatch inside = new CountDownLatch(1);
    CountDownLatch leave = new CountDownLatch(1);
    CompletableFuture<Void> reconcile = CompletableFuture.runAsync(() -> {
      assertThat(gate.enter()).isTrue();
      inside.countDown();
      try {
        leave.await(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } finally {
        gate.exit();
      }
    });
    assertThat(inside.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(gate.close(Duration.ofMillis(50))).as("one is still inside").isFalse();
    assertThat(gate.enter()).as("closing turns new ones away at once").isFalse();
    leave.countDown();
    reconcile.get(10, TimeUnit.SECONDS);
    assertThat(gate.close(Duration.ofSeconds(10))).isTrue();
  }

  /** A reconcile of a closed gate touches nothing: not its context (null here), not the API. */
  @Test
  void aReconcileAfterTheGateClosedDoesNothing() {
    ReconcileGate gate = new ReconcileGate();
    gate.close(Duration.ofSeconds(1));
    OperatorSettings settings = OperatorSettings.defaults();
    AgentInstance instance = new AgentInstance();
    instance.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName("a").withNamespace("n")
        .withUid("u").build());
    assertThat(new AgentInstanceReconciler(settings, DecisionSink.NONE, gate).reconcile(instance, null).isNoUpdate())
        .isTrue();
    AgentRestartPolicy policy = new AgentRestartPolicy();
    policy.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName("p").withNamespace("n")
        .build());
    assertThat(new AgentRestartPolicyReconciler(settings, DecisionSink.NONE, gate).reconcile(policy, null)
        .isNoUpdate()).isTrue();
  }
}

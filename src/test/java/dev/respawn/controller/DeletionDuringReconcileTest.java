package dev.respawn.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentInstanceSpec;
import dev.respawn.policy.Decision;
import dev.respawn.testsupport.MockApi;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * What this process keeps of an instance is dropped by the reconcile JOSDK runs for its deletion
 * ({@code forget(instance)}), keyed partly by the instance's UID. When the instance is deleted while a reconcile of it
 * runs, JOSDK submits that deletion reconcile only once the running one ends, and it hands it the object its cache holds
 * for the name then: an instance made anew under the same name meanwhile ({@code kubectl replace --force}, a GitOps
 * re-create) is the one "deleted". forget() dropped the new UID's entries, and the deleted instance's stayed for the
 * life of the process; the deleted one is known from its delete event ({@link WakeUps#deleted}).
 *
 * <p>The running reconcile is held in {@code DecisionSink.decisionTook}, its last call, while the test deletes and
 * re-creates the instance. The clock stands still, so the instance's unwritten start (its pod made, no kubelet to run
 * it) stays unwritten: {@code UnwrittenStarts} holds the old UID until the deletion is handled.
 */
class DeletionDuringReconcileTest {
  static final Instant T0 = Instant.parse("2026-11-25T10:00:00Z");

  static AgentInstance instance(String name) {
    AgentInstance i = new AgentInstance();
    i.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(MockApi.NAMESPACE).build());
    AgentInstanceSpec spec = new AgentInstanceSpec();
    spec.policyRef = new dev.respawn.api.v1alpha1.PolicyReference("p");
    spec.task = "TASK-1";
    spec.template = new PodTemplateSpecBuilder().withNewSpec().addNewContainer().withName("agent")
        .withImage("registry.example/agents/coder:1.4").endContainer().endSpec().build();
    i.setSpec(spec);
    return i;
  }

  @Test
  void theDeletedInstanceIsForgottenThoughItWasMadeAnewWhileItsLastReconcileRan() throws Exception {
    deleteAndMakeAnew(true);
  }

  /** The control: the same deletion and re-make while no reconcile of it runs. */
  @Test
  void theDeletedInstanceIsForgottenWhenMadeAnewWhileNoReconcileRan() throws Exception {
    deleteAndMakeAnew(false);
  }

  void deleteAndMakeAnew(boolean whileReconciling) throws Exception {
    java.util.List<String> forgotten = new java.util.concurrent.CopyOnWriteArrayList<>();
    AtomicBoolean armed = new AtomicBoolean();
    CountDownLatch held = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    DecisionSink sink = new DecisionSink() {
      @Override
      public void decided(AgentInstance instance, Decision decision, Pod pod) {}

      @Override
      public void policyRefused(AgentInstance instance, Refusal reason, String message, Instant at) {}

      @Override
      public void forget(AgentInstance instance) {
        forgotten.add(instance.getMetadata().getUid());
      }

      @Override
      public void decisionTook(Duration duration) {
        if (armed.getAndSet(false)) {
          held.countDown();
          try {
            release.await(30, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
      }
    };
    try (MockApi api = MockApi.start()) {
      KubernetesClient client = api.client();
      java.util.concurrent.atomic.AtomicReference<Instant> now = new java.util.concurrent.atomic.AtomicReference<>(T0);
      InstantSource clock = now::get;
      dev.respawn.api.v1alpha1.AgentRestartPolicy policy = new dev.respawn.api.v1alpha1.AgentRestartPolicy();
      policy.setMetadata(new ObjectMetaBuilder().withName("p").withNamespace(MockApi.NAMESPACE).build());
      policy.setSpec(io.fabric8.kubernetes.client.utils.Serialization.unmarshal(
          "backoff: {type: Exponential, initialDelay: 2s}\nresume: {mode: Off}\n",
          dev.respawn.api.v1alpha1.AgentRestartPolicySpec.class));
      client.resource(policy).create();
      dev.respawn.sandbox.SimulatedKubelet kubelet = new dev.respawn.sandbox.SimulatedKubelet(api.newClient(),
          MockApi.NAMESPACE, clock);
      RespawnOperator operator = new RespawnOperator(api.newClient(), OperatorSettings.defaults().withClock(clock),
          sink, Optional.empty()).start();
      try {
        AgentInstanceReconciler reconciler = operator.instanceReconciler();
        AgentInstance old = client.resource(instance("coder")).create();
        String oldUid = old.getMetadata().getUid();
        // its first run fails; the restart waits 2 s
        await().atMost(Duration.ofSeconds(30)).until(() -> client.pods().inNamespace(MockApi.NAMESPACE)
            .withName("coder-1").get() != null);
        kubelet.startRunning("coder-1");
        await().atMost(Duration.ofSeconds(30)).until(() -> phase(client) == dev.respawn.api.v1alpha1.Phase.Running);
        kubelet.terminate("coder-1", 1, "Error", "boom");
        await().atMost(Duration.ofSeconds(30)).until(() -> phase(client) == dev.respawn.api.v1alpha1.Phase.Backoff);
        now.set(T0.plusSeconds(10)); // the clock then stands still
        // its second run's pod is made; its start is not written yet (the pod has not run)
        await().atMost(Duration.ofSeconds(30)).until(() -> reconciler.unwrittenStarts().holds(oldUid));

        if (whileReconciling) {
          // a reconcile of it runs (an event of its pod) ...
          armed.set(true);
          client.pods().inNamespace(MockApi.NAMESPACE).withName("coder-2")
              .edit(p -> { p.getMetadata().getAnnotations().put("touched", "1"); return p; });
          assertThat(held.await(30, TimeUnit.SECONDS)).isTrue();
        }
        // ... while it is deleted and made anew under its name
        client.resource(old).delete();
        AgentInstance made = client.resource(instance("coder")).create();
        assertThat(made.getMetadata().getUid()).isNotEqualTo(oldUid);
        ResourceID id = new ResourceID("coder", MockApi.NAMESPACE);
        if (whileReconciling) { // the new one is in the informer's cache before the running reconcile ends
          await().atMost(Duration.ofSeconds(30)).until(() -> reconciler.wakeUps().madeAnew(id));
        }
        release.countDown();

        // the deletion is handled, then the new instance is reconciled (its status written)
        await().atMost(Duration.ofSeconds(30)).until(() -> {
          AgentInstance current = client.resources(AgentInstance.class).inNamespace(MockApi.NAMESPACE).withName("coder")
              .get();
          return current != null && current.getStatus() != null;
        });
        assertThat(forgotten).as("the UID of the instance its deletion reconcile forgot").containsExactly(oldUid);
        assertThat(reconciler.unwrittenStarts().holds(oldUid))
            .as("the deleted instance's unwritten start, after its deletion was handled").isFalse();
      } finally {
        release.countDown();
        operator.close();
      }
    }
  }

  static dev.respawn.api.v1alpha1.Phase phase(KubernetesClient client) {
    AgentInstance i = client.resources(AgentInstance.class).inNamespace(MockApi.NAMESPACE).withName("coder").get();
    return i == null || i.getStatus() == null ? null : i.getStatus().phase;
  }
}

package dev.respawn.controller;

import static dev.respawn.controller.OperatorFixture.NS;
import static dev.respawn.controller.OperatorFixture.condition;
import static dev.respawn.controller.OperatorFixture.hasCondition;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.api.v1alpha1.StatusCondition;
import dev.respawn.policy.Decision;
import dev.respawn.testsupport.MockApi;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Resources with a field of the wrong JSON type (as an API server without the CRD schema stores them)
 * reach the reconcilers as JOSDK's copies of its cache, and are refused on every reconcile.
 */
class MalformedResourceScenarioTest {
  static final String SUSPEND_RULE = "spec.suspend: must be true or false (got \"maybe\")";
  static final String RETRIES_RULE = "spec.maxRetries: must be an integer (got \"three\")";

  @Test
  void aFieldOfTheWrongJsonTypeIsRefusedOnEveryReconcileAndTheOthersAreServed() {
    try (OperatorFixture f = new OperatorFixture()) {
      List<String> refusals = new CopyOnWriteArrayList<>();
      f.observer = new DecisionSink() {
        @Override
        public void decided(AgentInstance instance, Decision decision, Pod pod) {}

        @Override
        public void policyRefused(AgentInstance instance, Refusal reason, String message, java.time.Instant at) {
          refusals.add(instance.getMetadata().getName() + " " + reason + " " + message);
        }
      };
      f.policy("standard", "backoff: {type: Immediate}");
      create(f.client, "AgentRestartPolicy", "wrong", Map.of("maxRetries", "three"));
      create(f.client, "AgentInstance", "malformed", Map.of("suspend", "maybe", "policyRef", Map.of("name", "standard"),
          "template", Map.of("spec", Map.of("containers", List.of(Map.of("name", "agent", "image", "a:1"))))));
      f.instance("uses-wrong", "wrong");
      f.instance("healthy", "standard");

      AgentRestartPolicy wrong = f.awaitPolicy("wrong", p -> condition(p, "Accepted") != null);
      StatusCondition accepted = condition(wrong, "Accepted");
      assertThat(accepted.status).isEqualTo("False");
      assertThat(accepted.reason).isEqualTo("InvalidSpec");
      assertThat(accepted.message).contains(RETRIES_RULE);
      assertThat(wrong.getStatus().totalRetryTime).isNull();
      await().atMost(OperatorFixture.AT_MOST).until(() -> f.events("wrong").stream().anyMatch(e ->
          "PolicyInvalid".equals(e.getReason()) && e.getNote().contains(RETRIES_RULE)));
      AgentInstance blocked = f.awaitInstance("uses-wrong", i -> hasCondition(i, "Ready", "False", "PolicyInvalid"));
      assertThat(condition(blocked, "Ready").message).contains("wrong", RETRIES_RULE);
      AgentInstance malformed = f.awaitInstance("malformed", i -> hasCondition(i, "Ready", "False", "InvalidSpec"));
      assertThat(condition(malformed, "Ready").message).contains("AgentInstance malformed is invalid", SUSPEND_RULE);
      await().atMost(OperatorFixture.AT_MOST).until(() -> f.events("malformed").stream().anyMatch(e ->
          "PolicyInvalid".equals(e.getReason()) && e.getNote().contains(SUSPEND_RULE)));
      f.awaitInstance("healthy", i -> OperatorFixture.at(i, 1, Phase.Running));

      assertThat(refusals).filteredOn(r -> r.startsWith("malformed ")).as("told once, when status recorded it")
          .containsExactly("malformed InvalidSpec " + condition(malformed, "Ready").message);
      // a restart request makes a reconcile of JOSDK's copy of what it cached last (its status write's answer):
      // had the copy lost the report, it would read suspend as unset and act on the request with a pod
      f.annotate("malformed", AgentInstance.RESTART_ANNOTATION, "please");
      f.holdsFor(Duration.ofSeconds(1), () -> f.podsEverCreated("malformed").size()
          + f.podsEverCreated("uses-wrong").size(), n -> n == 0);
      assertThat(f.get("malformed").getStatus().handledRequests).as("the request is not acted on").isNull();
      assertThat(refusals).filteredOn(r -> r.startsWith("malformed ")).as("nor told again: status is unchanged")
          .hasSize(1);
      assertThat(f.pods("healthy")).hasSize(1);
      // the server keeps what the user wrote: the operator wrote neither a repair nor its report
      Map<?, ?> spec = (Map<?, ?>) raw(f.client, "AgentInstance", "malformed").getAdditionalProperties().get("spec");
      assertThat(spec.get("suspend")).isEqualTo("maybe");
      assertThat(raw(f.client, "AgentRestartPolicy", "wrong").getAdditionalProperties().get("spec"))
          .isEqualTo(Map.of("maxRetries", "three"));
    }
  }

  @Test
  void josdkHandsTheReconcilerACopyOfItsCacheThatKeepsTheReport() {
    try (MockApi api = MockApi.start()) {
      create(api.client(), "AgentRestartPolicy", "wrong", Map.of("maxRetries", "three"));
      Capture capture = new Capture();
      Operator josdk = new Operator(o -> o.withKubernetesClient(api.newClient()).withCloseClientOnStop(false));
      josdk.register(capture, c -> c.settingNamespaces(NS));
      josdk.start();
      try {
        await().atMost(OperatorFixture.AT_MOST).until(() -> capture.given.get() != null);
        assertThat(capture.given.get()).isNotSameAs(capture.cached.get());
        assertThat(capture.given.get().unreadable().describe()).isEqualTo(RETRIES_RULE);
        assertThat(capture.cached.get().unreadable().describe()).isEqualTo(RETRIES_RULE);
      } finally {
        josdk.stop();
      }
    }
  }

  /** Keeps the first policy it is given and the object JOSDK's cache holds for it at that moment. */
  static final class Capture implements Reconciler<AgentRestartPolicy> {
    final AtomicReference<AgentRestartPolicy> given = new AtomicReference<>();
    final AtomicReference<AgentRestartPolicy> cached = new AtomicReference<>();

    @Override
    public UpdateControl<AgentRestartPolicy> reconcile(AgentRestartPolicy policy, Context<AgentRestartPolicy> c) {
      if (given.compareAndSet(null, policy)) {
        cached.set(c.getPrimaryCache().get(ResourceID.fromResource(policy)).orElseThrow());
      }
      return UpdateControl.noUpdate();
    }
  }

  /** Creates the object as given, through the generic API (as a typed object it could not be written). */
  static void create(KubernetesClient client, String kind, String name, Map<String, Object> spec) {
    GenericKubernetesResource r = new GenericKubernetesResource();
    r.setApiVersion("respawn.dev/v1alpha1");
    r.setKind(kind);
    r.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName(name).withNamespace(NS).build());
    r.setAdditionalProperties(Map.of("spec", spec));
    client.genericKubernetesResources("respawn.dev/v1alpha1", kind).inNamespace(NS).resource(r).create();
  }

  static GenericKubernetesResource raw(KubernetesClient client, String kind, String name) {
    return client.genericKubernetesResources("respawn.dev/v1alpha1", kind).inNamespace(NS).withName(name).get();
  }
}

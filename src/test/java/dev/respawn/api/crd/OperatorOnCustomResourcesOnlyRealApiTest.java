package dev.respawn.api.crd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The operator itself, on a server that serves Respawn's resources and nothing else (no pods, Leases or Events).
 */
class OperatorOnCustomResourcesOnlyRealApiTest extends RealApiServerFixture {
  /**
   * The operator answers every policy and instance on a server of custom resources only: its pod and Lease
   * informers never list, and after its informer sync timeout it goes on without them (api.md §1, §2 status).
   */
  @Test
  void theOperatorAnswersOnAServerOfCustomResourcesOnly() {
    String ns = "op-" + run;
    String other = "op2-" + run;
    // made before the operator starts, in the second of the namespaces it watches (one informer each)
    for (String early : List.of("early-1", "early-2")) {
      createIn(ns, INSTANCE, early, "{policyRef: {name: nowhere}, " + MINIMAL_TEMPLATE + "}");
      createIn(other, INSTANCE, early, "{policyRef: {name: nowhere}, " + MINIMAL_TEMPLATE + "}");
    }
    KubernetesClient operatorClient = new KubernetesClientBuilder().withConfig(client.getConfiguration())
        .withKubernetesSerialization(dev.respawn.controller.TolerantResources.serialization()).build();
    try (dev.respawn.controller.RespawnOperator operator = new dev.respawn.controller.RespawnOperator(operatorClient,
        dev.respawn.controller.OperatorSettings.defaults().withNamespaces(java.util.Set.of(ns, other))
            .withInformerSyncTimeout(Duration.ofSeconds(3)), dev.respawn.controller.DecisionSink.NONE,
        java.util.Optional.empty()).start()) {
      createIn(ns, POLICY, "standard", "{}");
      createIn(ns, INSTANCE, "lost", "{policyRef: {name: nowhere}, " + MINIMAL_TEMPLATE + "}");
      createIn(ns, INSTANCE, "coder", "{policyRef: {name: standard}, " + MINIMAL_TEMPLATE + "}");
      await("policy status").atMost(AT_MOST).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
        JsonNode status = getIn(ns, POLICY, "standard").path("status");
        assertThat(status.path("totalRetryTime").asText()).isEqualTo("14s");
        assertThat(status.path("conditions").toString()).contains("\"type\":\"Accepted\"", "\"status\":\"True\"");
      });
      await("refused instance").atMost(AT_MOST).pollInterval(Duration.ofMillis(200)).untilAsserted(() ->
          assertThat(getIn(ns, INSTANCE, "lost").path("status").path("conditions").toString())
              .contains("PolicyNotFound"));
      for (String namespace : List.of(ns, other)) {
        for (String early : List.of("early-1", "early-2")) {
          await(namespace + "/" + early).atMost(AT_MOST).pollInterval(Duration.ofMillis(200)).untilAsserted(() ->
              assertThat(getIn(namespace, INSTANCE, early).path("status").path("conditions").toString())
                  .contains("PolicyNotFound"));
        }
      }
      // its pod cannot be made here (no pods API): a refused create, retried with the backoff (api.md §4)
      await("instance status").atMost(AT_MOST).pollInterval(Duration.ofMillis(200)).untilAsserted(() ->
          assertThat(getIn(ns, INSTANCE, "coder").path("status").path("lastDecision").path("reasonCode").asText())
              .isEqualTo("spawn_failed"));
    } finally {
      for (ResourceDefinitionContext kind : KINDS.values()) {
        client.genericKubernetesResources(kind).inNamespace(ns).delete();
        client.genericKubernetesResources(kind).inNamespace(other).delete();
      }
      operatorClient.close();
    }
  }

  static void createIn(String namespace, String kind, String name, String spec) {
    GenericKubernetesResource r = parse(kind, name, spec);
    r.getMetadata().setNamespace(namespace);
    client.genericKubernetesResources(KINDS.get(kind)).inNamespace(namespace).resource(r).create();
  }

  static JsonNode getIn(String namespace, String kind, String name) {
    GenericKubernetesResource found =
        client.genericKubernetesResources(KINDS.get(kind)).inNamespace(namespace).withName(name).get();
    assertThat(found).as("%s %s/%s", kind, namespace, name).isNotNull();
    return JSON.valueToTree(found);
  }
}

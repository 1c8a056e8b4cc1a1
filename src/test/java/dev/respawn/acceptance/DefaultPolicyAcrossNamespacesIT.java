package dev.respawn.acceptance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * A default policy of another namespace (--default-policy NAMESPACE/NAME) serves instances everywhere; its shared
 * circuits count only its own namespace's (README). An agent of another namespace that fails into an Open circuit
 * waits out the Open time and goes: it is never the circuit's probe, and the policy's namespace may have no instance
 * left to probe it (its owner deleted them), so a HalfOpen without a probe held it for good (tenancy tester).
 */
class DefaultPolicyAcrossNamespacesIT extends OperatorScenario {
  static final String SHARED = "shared-policies";

  @Override
  String[] operatorArgs() {
    return new String[] {"--default-policy", SHARED + "/fleet"};
  }

  void instanceWithoutPolicy(String namespace, String name) {
    cluster.apply(namespace, "apiVersion: respawn.dev/v1alpha1\nkind: AgentInstance\nmetadata: {name: " + name
        + "}\nspec:\n  template:\n    spec:\n      containers:\n      - {name: agent, image: example/agent:1}\n");
  }

  JsonNode awaitIn(String namespace, String instance, java.util.function.Predicate<JsonNode> holds) {
    await().atMost(PATIENCE).pollInterval(Duration.ofMillis(100))
        .until(() -> holds.test(cluster.status(namespace, instance)));
    return cluster.status(namespace, instance);
  }

  void runs(String namespace, String instance, String pod) {
    await().atMost(PATIENCE).pollInterval(Duration.ofMillis(100)).until(() -> cluster.pod(namespace, pod) != null);
    kubelet.running(namespace, pod);
    awaitIn(namespace, instance, s -> "Running".equals(s.path("phase").asText())
        && pod.equals(s.path("currentPod").asText()));
  }

  @Test
  void anAgentOfAnotherNamespaceWaitsOutTheOpenTimeThoughTheFleetIsGone() {
    cluster.apply(SHARED, """
        apiVersion: respawn.dev/v1alpha1
        kind: AgentRestartPolicy
        metadata: {name: fleet}
        spec:
          backoff: {type: Linear, initialDelay: 1s, maxDelay: 5s}
          dependencies:
          - name: model-api
            match: {messageContains: ["HTTP 503"]}
            failureThreshold: 2
            openDuration: 4s
        """);
    instanceWithoutPolicy(SHARED, "s1");
    instanceWithoutPolicy(SHARED, "s2");
    instanceWithoutPolicy(ns, "elsewhere");
    runs(SHARED, "s1", "s1-1");
    runs(SHARED, "s2", "s2-1");
    runs(ns, "elsewhere", "elsewhere-1");
    kubelet.terminated(SHARED, "s1-1", 1, "Error", "HTTP 503 from the model API");
    kubelet.terminated(SHARED, "s2-1", 1, "Error", "HTTP 503 from the model API");
    await().atMost(PATIENCE).until(() -> "Open".equals(cluster.policyStatus(SHARED, "fleet").path("dependencies")
        .path(0).path("state").asText()));

    kubelet.terminated(ns, "elsewhere-1", 1, "Error", "HTTP 503 from the model API");
    JsonNode waiting = awaitIn(ns, "elsewhere", s -> "CircuitOpen".equals(s.path("phase").asText()));
    assertThat(waiting.path("waitingFor").asText()).isEqualTo("model-api");
    Instant halfOpenAt = Instant.parse(cluster.policyStatus(SHARED, "fleet").path("dependencies").path(0)
        .path("halfOpenAt").asText());
    assertThat(Instant.parse(waiting.path("nextRestartAt").asText())).as("its wait ends with the Open time")
        .isEqualTo(halfOpenAt);
    // the policy's namespace is left with no instance to probe the circuit
    cluster.client.genericKubernetesResources(MockCluster.INSTANCES).inNamespace(SHARED).delete();

    await().atMost(PATIENCE).pollInterval(Duration.ofMillis(100))
        .until(() -> cluster.pod(ns, "elsewhere-2") != null);
    assertThat(Instant.parse(cluster.pod(ns, "elsewhere-2").getMetadata().getCreationTimestamp()))
        .as("not before its Open time is out").isAfterOrEqualTo(halfOpenAt.minusSeconds(1));
    JsonNode restarted = awaitIn(ns, "elsewhere", s -> s.path("run").asInt() == 2);
    assertThat(restarted.path("attempt").asInt()).as("its wait was no failure of the agent").isZero();
    assertThat(restarted.path("waitingFor").isMissingNode() || restarted.path("waitingFor").isNull())
        .as("it runs as no probe: %s", restarted).isTrue();
  }
}

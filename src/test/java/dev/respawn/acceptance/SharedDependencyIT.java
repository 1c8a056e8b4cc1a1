package dev.respawn.acceptance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** api.md §11: a shared dependency's circuit opens on blames of distinct instances, probes, closes and releases. */
class SharedDependencyIT extends OperatorScenario {

  JsonNode dependency() {
    return cluster.policyStatus(ns, "p").path("dependencies").path(0);
  }

  @Test
  void aDependencyOpensOnDistinctInstancesThenAProbeClosesItAndTheWaitingAreReleased() {
    policy("p", """
        backoff: {type: Linear, initialDelay: 20s, maxDelay: 60s}
        maxRetries: 3
        resetAfter: 2s
        resume: {mode: 'Off'}
        dependencies:
        - name: model-api
          match: {messageContains: ["model API"]}
          failureThreshold: 2
          window: 1m
          openDuration: 4s
          probes: 1
          releaseRate: 5""");
    for (String n : new String[] {"a", "b", "c"}) {
      instance(n, "p");
      startRun(n, n + "-1");
    }
    kubelet.terminated(ns, "a-1", 1, "Error", "HTTP 503 from model API");
    awaitFailureOf("a", "a-1");
    kubelet.terminated(ns, "b-1", 1, "Error", "HTTP 503 from model API");
    JsonNode b = awaitPhase("b", "CircuitOpen");
    assertThat(b.path("waitingFor").asText()).isEqualTo("model-api");
    assertThat(b.path("lastDecision").path("reasonCode").asText()).isEqualTo("dependency_circuit_open");
    assertThat(b.path("attempt").asInt()).as("not counted: the agent did nothing wrong").isZero();
    await().atMost(PATIENCE).until(() -> "Open".equals(dependency().path("state").asText()));
    assertThat(dependency().path("trips").asInt()).isEqualTo(1);
    assertThat(phase("c")).as("an instance not blamed is untouched").isEqualTo("Running");

    await().atMost(PATIENCE).until(() -> pod("a-2") != null || pod("b-2") != null);
    String probe = pod("a-2") != null ? "a" : "b";
    String other = "a".equals(probe) ? "b" : "a";
    startRun(probe, probe + "-2");
    await().atMost(PATIENCE).until(() -> "Closed".equals(dependency().path("state").asText()));
    startRun(other, other + "-2");
    assertThat(status("b").path("waitingFor").asText("")).isEmpty();
    assertThat(pod("c-2")).isNull();
    assertThat(cluster.events(ns, "AgentRestartPolicy", "p"))
        .anyMatch(e -> "DependencyCircuitChanged".equals(e.getReason()));
    holdsFor(Duration.ofSeconds(2), () -> pod("a-3") == null && pod("b-3") == null);
  }
}

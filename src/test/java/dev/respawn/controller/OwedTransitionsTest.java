package dev.respawn.controller;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.policy.Decision;
import dev.respawn.policy.DependencyCircuit;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class OwedTransitionsTest {
  final OwedTransitions owed = new OwedTransitions();
  final List<Map<String, List<DependencyCircuit.Transition>>> told = new ArrayList<>();
  final DecisionSink sink = new DecisionSink() {
    @Override
    public void decided(AgentInstance instance, Decision decision, Pod pod) {}

    @Override
    public void policyRefused(AgentInstance instance, Refusal reason, String message, Instant at) {}

    @Override
    public void dependencies(AgentRestartPolicy policy, List<DependencyCircuit> circuits,
        Map<String, List<DependencyCircuit.Transition>> transitions) {
      told.add(transitions);
    }
  };

  static AgentRestartPolicy policy(String resourceVersion) {
    AgentRestartPolicy p = new AgentRestartPolicy();
    p.setMetadata(new ObjectMetaBuilder().withName("fleet").withNamespace("ns").withUid("u-1")
        .withResourceVersion(resourceVersion).build());
    return p;
  }

  static JsonNode status(String state) {
    return JsonNodeFactory.instance.objectNode().put("state", state);
  }

  static Map<String, List<DependencyCircuit.Transition>> opened(Instant at) {
    return Map.of("model-api", List.of(new DependencyCircuit.Transition(CircuitState.Closed, CircuitState.Open, at,
        "failures of 3 distinct instances")));
  }

  @Test
  void aWriteThatLandedIsToldOnceTheCacheShowsIt() {
    owed.owe(policy("5"), status("Open"), List.of(), opened(Instant.EPOCH));
    owed.settle(policy("6"), status("Open"), sink);
    assertThat(told).containsExactly(opened(Instant.EPOCH));
    owed.settle(policy("7"), status("Open"), sink);
    assertThat(told).as("once").hasSize(1);
  }

  @Test
  void aWriteThatDidNotLandIsForgottenUntold() {
    owed.owe(policy("5"), status("Open"), List.of(), opened(Instant.EPOCH));
    owed.settle(policy("6"), status("Closed"), sink);
    owed.settle(policy("7"), status("Open"), sink);
    assertThat(told).isEmpty();
  }

  @Test
  void aCacheThatHasNotSeenTheWriteYetKeepsTheFirstOwedThoughTheRetryOwesAnother() {
    owed.owe(policy("5"), status("Open"), List.of(), opened(Instant.EPOCH));
    owed.settle(policy("5"), status("Closed"), sink); // the retry still reads version 5
    assertThat(told).isEmpty();
    // it steps the circuits again from version 5 (another time: another status) and its write fails too
    owed.owe(policy("5"), status("Open, later"), List.of(), opened(Instant.EPOCH.plusSeconds(1)));
    owed.settle(policy("6"), status("Open"), sink); // what landed was the first write
    assertThat(told).containsExactly(opened(Instant.EPOCH));
  }

  @Test
  void aDeletedPolicyOwesNothing() {
    owed.owe(policy("5"), status("Open"), List.of(), opened(Instant.EPOCH));
    owed.forget(policy("5"));
    owed.settle(policy("6"), status("Open"), sink);
    assertThat(told).isEmpty();
  }
}

package dev.respawn.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.api.v1alpha1.Phase;
import io.fabric8.kubernetes.client.utils.Serialization;
import dev.respawn.api.v1alpha1.CircuitState;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * An instance served by a policy of another namespace (the operator's --default-policy NAMESPACE/NAME) is outside
 * that policy's fleet: the shared circuits count the policy's own namespace only (README). Its failures blamed on a
 * dependency never open the circuit: while it is Closed they are counted like any failure; while it is Open the
 * instance waits. A failure that "opened" a circuit no one would ever record waited openDuration each time, not
 * counted, so a crash loop never reached maxRetries (namespaces tester).
 */
class OutsideTheFleetTest {
  static final AgentRestartPolicySpec ONE_OPENS = Serialization.unmarshal("""
      backoff: {type: Linear, initialDelay: 1s}
      maxRetries: 6
      dependencies:
      - name: model-api
        match: {messageContains: ["HTTP 503"]}
        failureThreshold: 1
        openDuration: 20s
      """, AgentRestartPolicySpec.class);

  @Test
  void anInstanceOfTheFleetOpensTheCircuitWithItsFailure() {
    AgentSim own = new AgentSim(AgentSim.policy(ONE_OPENS)).started();
    own.exit(1, "Error", "upstream model API answered HTTP 503");
    assertThat(own.state.phase).isEqualTo(Phase.CircuitOpen);
    assertThat(own.state.waitingFor).isEqualTo("model-api");
  }

  @Test
  void aFailureOfAnInstanceOutsideTheFleetIsCountedWhileTheCircuitIsClosed() {
    AgentSim elsewhere = new AgentSim(AgentSim.policy(ONE_OPENS).outsideTheFleet()).started();
    elsewhere.exit(1, "Error", "upstream model API answered HTTP 503");
    assertThat(elsewhere.state.phase).isEqualTo(Phase.Backoff);
    assertThat(elsewhere.state.waitingFor).isNull();
    assertThat(elsewhere.state.attempt).isEqualTo(1);
    assertThat(elsewhere.state.nextRestartAt).isEqualTo(elsewhere.now.plusSeconds(1));
    elsewhere.restartAndRun();
    elsewhere.exit(1, "Error", "upstream model API answered HTTP 503");
    assertThat(elsewhere.state.attempt).as("a crash loop goes on to maxRetries").isEqualTo(2);

    // the fleet opened the circuit: the instance waits for it, not counted
    elsewhere.restartAndRun();
    elsewhere.modelApiOpen(1, elsewhere.now.minus(Duration.ofSeconds(1)));
    elsewhere.exit(1, "Error", "upstream model API answered HTTP 503");
    assertThat(elsewhere.state.phase).isEqualTo(Phase.CircuitOpen);
    assertThat(elsewhere.state.attempt).isEqualTo(2);
  }

  /**
   * The circuit knows the fleet's instances by name: a same-named instance of another namespace is not the fleet's
   * probe (it would start into the outage, a run the circuit never counts), and not in its release order either
   * (review).
   */
  @Test
  void aSameNamedInstanceOutsideTheFleetIsNeitherItsProbeNorInItsReleaseOrder() {
    AgentSim elsewhere = new AgentSim(AgentSim.policy(ONE_OPENS).outsideTheFleet()).started();
    elsewhere.modelApiOpen(1, elsewhere.now.minusSeconds(1));
    elsewhere.exit(1, "Error", "upstream model API answered HTTP 503");
    assertThat(elsewhere.state.phase).isEqualTo(Phase.CircuitOpen);
    Instant halfOpenAt = elsewhere.now.plusSeconds(20);
    elsewhere.now = halfOpenAt.plusSeconds(1);
    // HalfOpen: the fleet's own "coder" (of the policy's namespace) is the probe
    elsewhere.dependencies.put("model-api", new DependencyCircuit("model-api", CircuitState.HalfOpen, 1,
        halfOpenAt.minusSeconds(21), halfOpenAt, null, halfOpenAt, List.of("coder"), List.of(), List.of(), 1, 1));
    assertThat(elsewhere.reconcile().start()).as("not the fleet's probe: it waits until the circuit closes")
        .isEmpty();
    assertThat(elsewhere.state.phase).isEqualTo(Phase.CircuitOpen);

    // Closed, the fleet's "coder" last in a slow release order: the instance outside goes at once
    Instant closedAt = elsewhere.now.plusSeconds(1);
    elsewhere.now = closedAt.plusMillis(100);
    elsewhere.dependencies.put("model-api", new DependencyCircuit("model-api", CircuitState.Closed, 1,
        halfOpenAt.minusSeconds(21), halfOpenAt, closedAt, closedAt, List.of(),
        List.of("a", "b", "c", "d", "coder"), List.of(), 0, 0));
    Decision released = elsewhere.reconcile();
    assertThat(released.start()).as("not in the fleet's release order").isPresent();
    assertThat(released.start().get().releasedBy()).as("nor held to the fleet's release rate").isEmpty();
  }
}

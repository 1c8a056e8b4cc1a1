package dev.respawn.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.api.v1alpha1.Phase;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Duration;
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
}

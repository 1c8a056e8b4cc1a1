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
 * dependency never open the circuit: while it is Closed or HalfOpen they are counted like any failure; while it is
 * Open the instance waits until its halfOpenAt, never as a probe (a circuit whose namespace has no instance to
 * probe it would hold it for good). A failure that "opened" a circuit no one would ever record waited openDuration each time, not
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

  /** A failure blamed on model-api while its circuit is Open (opened a second ago, halfOpenAt in 29 s): it waits. */
  static void failsIntoTheOpenCircuit(AgentSim s) {
    s.modelApiOpen(1, s.now.minusSeconds(1));
    s.exit(1, "Error", "upstream model API answered HTTP 503");
    assertThat(s.state.phase).isEqualTo(Phase.CircuitOpen);
  }

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
    failsIntoTheOpenCircuit(elsewhere);
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
    failsIntoTheOpenCircuit(elsewhere);
    Instant halfOpenAt = elsewhere.now.plusSeconds(20);
    elsewhere.now = halfOpenAt.plusSeconds(1);
    // HalfOpen: the fleet's own "coder" (of the policy's namespace) is the probe
    elsewhere.dependencies.put("model-api", new DependencyCircuit("model-api", CircuitState.HalfOpen, 1,
        halfOpenAt.minusSeconds(21), halfOpenAt, null, halfOpenAt, List.of("coder"), List.of(), List.of(), 1, 1));
    Decision halfOpen = elsewhere.reconcile();
    assertThat(halfOpen.start()).as("it waited the Open time out and goes").isPresent();
    assertThat(halfOpen.start().get().releasedBy()).isEmpty();
    assertThat(elsewhere.state.waitingFor).as("it runs as no probe: the fleet's \"coder\" is the probe").isNull();
    elsewhere.running();
    elsewhere.exit(1, "Error", "upstream model API answered HTTP 503");
    assertThat(elsewhere.state.phase).as("a failure in HalfOpen is counted: no probe of it ends its wait")
        .isEqualTo(Phase.Backoff);
    assertThat(elsewhere.state.attempt).isEqualTo(1);

    // Closed, the fleet's "coder" last in a slow release order: the instance outside goes at once
    elsewhere.restartAndRun();
    failsIntoTheOpenCircuit(elsewhere);
    Instant closedAt = elsewhere.now.plusSeconds(1);
    elsewhere.now = closedAt.plusMillis(100);
    elsewhere.dependencies.put("model-api", new DependencyCircuit("model-api", CircuitState.Closed, 1,
        halfOpenAt.minusSeconds(21), halfOpenAt, closedAt, closedAt, List.of(),
        List.of("a", "b", "c", "d", "coder"), List.of(), 0, 0));
    Decision released = elsewhere.reconcile();
    assertThat(released.start()).as("not in the fleet's release order").isPresent();
    assertThat(released.start().get().releasedBy()).as("nor held to the fleet's release rate").isEmpty();
  }

  /**
   * The circuit counts only its own namespace, which may have no instance to probe it: an instance outside the
   * fleet waits out the Open time and goes (its policy's status may still say Open: the fleet's writer moves it to
   * HalfOpen only with a probe); it is not held for as long as no one of the fleet fails (tenancy tester).
   */
  @Test
  void anInstanceOutsideTheFleetWaitsOutTheOpenTimeAndGoes() {
    AgentSim elsewhere = new AgentSim(AgentSim.policy(ONE_OPENS).outsideTheFleet()).started();
    Instant halfOpenAt = elsewhere.now.plusSeconds(29); // modelApiOpen: openedAt + 30 s
    failsIntoTheOpenCircuit(elsewhere);
    assertThat(elsewhere.state.nextRestartAt).isEqualTo(halfOpenAt);
    assertThat(elsewhere.last.wakeAt()).contains(halfOpenAt);
    elsewhere.now = halfOpenAt.minusMillis(1);
    assertThat(elsewhere.reconcile().start()).isEmpty();
    elsewhere.now = halfOpenAt;
    assertThat(elsewhere.reconcile().start()).as("Open still, its time out").isPresent();
    assertThat(elsewhere.state.attempt).as("its wait was not a failure of the agent").isZero();
  }

  /**
   * The policy's status may show the circuit Open a while after its halfOpenAt (its writer moves it to HalfOpen with
   * a probe): a failure then is counted as in HalfOpen, not released at once uncounted, again and again (review).
   */
  @Test
  void aFailureAfterTheOpenTimeIsCountedThoughStatusStillSaysOpen() {
    AgentSim elsewhere = new AgentSim(AgentSim.policy(ONE_OPENS).outsideTheFleet()).started();
    elsewhere.modelApiOpen(1, elsewhere.now.minusSeconds(60)); // halfOpenAt 30 s ago
    Decision d = elsewhere.exit(1, "Error", "upstream model API answered HTTP 503");
    assertThat(d.start()).as("no restart at once").isEmpty();
    assertThat(elsewhere.state.phase).isEqualTo(Phase.Backoff);
    assertThat(elsewhere.state.attempt).isEqualTo(1);
  }
}

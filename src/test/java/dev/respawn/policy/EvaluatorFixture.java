package dev.respawn.policy;

import static dev.respawn.policy.Specs.circuit;
import static dev.respawn.policy.Specs.retries;
import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.api.v1alpha1.Phase;
import java.util.List;

/**
 * What the tests of the decision core through RestartEvaluator share: an agent simulated under a policy, the stories it
 * has been through before a test begins, and what a decision told.
 */
final class EvaluatorFixture {
  private EvaluatorFixture() {}

  static AgentSim sim(AgentRestartPolicySpec spec) {
    return new AgentSim(AgentSim.policy(spec));
  }

  /** An agent that failed twice: out of retries, its latched circuit open, it is Escalated. */
  static AgentSim escalatedTwiceFailed() {
    AgentSim s = sim(Specs.window(circuit(retries(Specs.spec(), 1), 2, "10m", "5m", true), 10, "1h")).started();
    s.exit(1);
    s.restartAndRun();
    s.exit(1);
    assertThat(s.state.phase).isEqualTo(Phase.Escalated);
    return s;
  }

  /** Restarts a running agent once per request id, as a person would; each new run runs. */
  static void restartedByHand(AgentSim s, String... ids) {
    for (String id : ids) {
      s.restartRequest = new Request(id, null);
      assertThat(s.reconcile().deletePod()).as("restart %s", id).isTrue();
      s.reconcile();
      s.running();
    }
  }

  /** The controller's view of a refused create: the spawn-failure decision from the state before it. */
  static Decision refused(AgentSim s) {
    Decision d = s.evaluator.spawnFailed(s.policy, s.state, s.sighting(null), false, "pods \"coder-1\" exists",
        s.now, s.random);
    s.state = d.state();
    return d;
  }

  static List<String> reasons(Decision d) {
    return d.notices().stream().map(n -> n.reason().name()).toList();
  }

  /** The decision tells the instance's circuit change (§8 CircuitBreakerStateChanged), e.g. "Open -> Closed". */
  static void assertToldCircuitChange(Decision d, String change) {
    assertThat(d.notices()).anySatisfy(n -> {
      assertThat(n.reason()).isEqualTo(EventReason.CircuitBreakerStateChanged);
      assertThat(n.message()).contains(change);
    });
  }
}

package dev.respawn.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.api.v1alpha1.Phase;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * An instance that waits for a shared dependency whose circuit is Open is moved (spec.policyRef) to a policy with a
 * dependency of the same name whose circuit is Closed: the new policy's circuit lets it go, as a Closed circuit does,
 * rather than the old circuit's HalfOpen time (its openDuration, minutes at worst) holding it.
 */
class MovedWaiterTest {
  @Test
  void aWaiterMovedToAPolicyWhoseSameNamedDependencyIsClosedRunsOnceThatCircuitHasSeenIt() {
    AgentSim s = new AgentSim(AgentSim.policy(DeferredStartTest.DEP)).started();
    Instant opened = s.now.minusSeconds(1);
    s.modelApiOpen(2, opened);
    s.exit(1, "Error", "upstream model API answered HTTP 503");
    assertThat(s.state.phase).isEqualTo(Phase.CircuitOpen);
    Instant failedAt = s.state.lastFailure.at();
    s.advance(Duration.ofMillis(200));
    // moved: the new policy's circuit of that name is Closed and has not seen the failure yet (its writer may be
    // about to open it): the instance keeps its wait
    s.dependencies.put("model-api", DependencyCircuit.closed("model-api"));
    Decision waits = s.reconcile();
    assertThat(waits.start()).isEmpty();
    assertThat(s.state.phase).isEqualTo(Phase.CircuitOpen);
    // a circuit that records a blame tells no instance: it looks again soon, not at the old HalfOpen time
    assertThat(waits.wakeAt()).hasValue(s.now.plus(DependencyWait.UNSEEN_LOOK));
    // its writer saw the failure and keeps the circuit Closed: the instance runs now
    s.advance(Duration.ofMillis(200));
    s.dependencies.put("model-api", new DependencyCircuit("model-api", CircuitState.Closed, 0, null, null, null,
        null, List.of(), List.of(), List.of(new DependencyCircuit.Blame("coder", failedAt)), 1, 1));
    Decision d = s.reconcile();
    assertThat(d.start()).as("released by the Closed circuit that saw its failure, not at %s", opened.plusSeconds(30))
        .isPresent();
  }
}

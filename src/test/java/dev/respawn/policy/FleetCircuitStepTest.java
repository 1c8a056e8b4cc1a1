package dev.respawn.policy;

import static dev.respawn.policy.Fleet.T0;
import static dev.respawn.policy.Fleet.modelApiPolicy;
import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.api.v1alpha1.Phase;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * api.md §11 decided by the shared circuits' one writer alone (FleetCircuits.step over given statuses): the transitions
 * it tells, when it wakes, which probe proved nothing, and which blames reopen a circuit.
 */
class FleetCircuitStepTest {
  /** A member of the fleet for a direct step of the circuits: its status with this last failure and phase. */
  static FleetCircuits.Member member(String name, Phase phase, Instant failedAt, String dependency, String waitingFor) {
    InstanceState st = new InstanceState();
    st.phase = phase;
    st.lastFailure = new InstanceState.FailureInfo(name + "-1", name + "-uid", dev.respawn.api.v1alpha1.InterruptionClass
        .ToolFailure, "UnhandledException", "Error", 1, "x", "", true, failedAt, dependency);
    st.waitingFor = waitingFor;
    return new FleetCircuits.Member(name, st, false);
  }

  /** §11: "Each transition writes a DependencyCircuitChanged Event": the step tells what changed, and only then. */
  @Test
  void aStepTellsTheTransitionsOfTheCircuitsThatChangedAndNoOthers() {
    RestartPolicy p = Fleet.policyOf(modelApiPolicy("", "failureThreshold: 2\n"));
    FleetCircuits.Result opens = FleetCircuits.step(p, Map.of(), List.of(
        member("a", Phase.CircuitOpen, T0, "model-api", "model-api"),
        member("b", Phase.CircuitOpen, T0.plusSeconds(1), "model-api", "model-api")), T0.plusSeconds(2));
    assertThat(opens.circuits()).singleElement().satisfies(c -> assertThat(c.state()).isEqualTo(CircuitState.Open));
    assertThat(opens.transitions()).containsOnlyKeys("model-api");
    assertThat(opens.transitions().get("model-api")).singleElement().satisfies(t -> {
      assertThat(t.from()).isEqualTo(CircuitState.Closed);
      assertThat(t.to()).isEqualTo(CircuitState.Open);
    });
    FleetCircuits.Result quiet = FleetCircuits.step(p, Map.of("model-api", opens.circuits().get(0)), List.of(
        member("a", Phase.CircuitOpen, T0, "model-api", "model-api"),
        member("b", Phase.CircuitOpen, T0.plusSeconds(1), "model-api", "model-api")), T0.plusSeconds(3));
    assertThat(quiet.transitions()).isEmpty();
  }

  /** §11 "none early, no restart lost": with two dependencies open, the step wakes at the earlier HalfOpen. */
  @Test
  void withTwoOpenDependenciesTheStepWakesAtTheEarlierHalfOpen() {
    RestartPolicy p = Fleet.policyOf("""
        dependencies:
        - {name: slow, match: {messageContains: [slow]}, failureThreshold: 1, openDuration: 60s}
        - {name: fast, match: {messageContains: [fast]}, failureThreshold: 1, openDuration: 10s}
        """);
    FleetCircuits.Result r = FleetCircuits.step(p, Map.of(), List.of(
        member("a", Phase.CircuitOpen, T0, "slow", "slow"),
        member("b", Phase.CircuitOpen, T0.plusSeconds(1), "fast", "fast")), T0.plusSeconds(2));
    assertThat(r.circuits()).extracting(DependencyCircuit::state).containsOnly(CircuitState.Open);
    assertThat(r.wakeAt()).contains(T0.plusSeconds(11));
  }

  /**
   * A probe whose run failed for another reason since the HalfOpen proves nothing (README: "the next waiter probes
   * instead"): running again after its own restart, it does not close the circuit as a healthy probe.
   */
  @Test
  void aProbeThatFailedForAnotherReasonAndRunsAgainIsNoHealthyProbe() {
    RestartPolicy p = Fleet.policyOf(modelApiPolicy("", "failureThreshold: 1\nopenDuration: 30s\n"));
    Instant halfOpenAt = T0.plusSeconds(30);
    DependencyCircuit half = new DependencyCircuit("model-api", CircuitState.HalfOpen, 1, T0, halfOpenAt, null,
        halfOpenAt, List.of("a"), List.of(), List.of(), 2, 2);
    FleetCircuits.Result r = FleetCircuits.step(p, Map.of("model-api", half), List.of(
        member("a", Phase.Running, halfOpenAt.plusSeconds(5), null, null), // "disk full", restarted, running
        member("b", Phase.CircuitOpen, T0.plusSeconds(1), "model-api", "model-api")), halfOpenAt.plusSeconds(10));
    assertThat(r.circuits()).singleElement().satisfies(c -> {
      assertThat(c.state()).isEqualTo(CircuitState.HalfOpen);
      assertThat(c.probes()).containsExactly("b");
    });
  }

  /**
   * §11 "Closed again ... the failures ... open the circuit": blames from before the circuit last closed do not count
   * towards reopening it, on the instance's side either.
   */
  @Test
  void blamesFromBeforeTheCircuitClosedDoNotReopenItFromTheInstancesSide() {
    RestartPolicy p = Fleet.policyOf(modelApiPolicy("", "failureThreshold: 2\nwindow: 10m\n"));
    Instant closedAt = T0.plusSeconds(60);
    DependencyCircuit closed = new DependencyCircuit("model-api", CircuitState.Closed, 1, T0, T0.plusSeconds(30),
        closedAt, closedAt, List.of(), List.of(), List.of(new DependencyCircuit.Blame("b", T0.plusSeconds(50))), 0, 1);
    assertThat(closed.opensWith(p.dependency("model-api").orElseThrow(), "a", T0.plusSeconds(70)))
        .as("b's blame is from before the circuit closed").isFalse();
    DependencyCircuit fresh = new DependencyCircuit("model-api", CircuitState.Closed, 1, T0, T0.plusSeconds(30),
        closedAt, closedAt, List.of(), List.of(), List.of(new DependencyCircuit.Blame("b", T0.plusSeconds(65))), 0, 1);
    assertThat(fresh.opensWith(p.dependency("model-api").orElseThrow(), "a", T0.plusSeconds(70)))
        .isTrue();
  }

  /** RestartPolicy.dependency(name): each waiter is judged by its own dependency's settings. */
  @Test
  void aPolicyFindsEachDependencyByItsName() {
    RestartPolicy p = Fleet.policyOf("""
        dependencies:
        - {name: slow, match: {messageContains: [slow]}, openDuration: 60s}
        - {name: fast, match: {messageContains: [fast]}, openDuration: 10s}
        """);
    assertThat(p.dependency("fast")).hasValueSatisfying(d -> assertThat(d.openDuration()).isEqualTo(
        Duration.ofSeconds(10)));
    assertThat(p.dependency("slow")).hasValueSatisfying(d -> assertThat(d.name()).isEqualTo("slow"));
    assertThat(p.dependency("gone")).isEmpty();
  }
}

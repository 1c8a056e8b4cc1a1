package dev.respawn.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.policy.DependencyCircuit;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The policy's DependencyOpen condition: which circuits are not Closed, and what each waits for. */
class DependencyConditionsTest {
  static final Instant OPENED = Instant.parse("2026-11-27T10:00:00Z");

  static DependencyCircuit circuit(String name, CircuitState state, List<String> probes, int waiting) {
    return new DependencyCircuit(name, state, 1, OPENED, OPENED.plusSeconds(30), null, OPENED, probes, List.of(),
        List.of(), waiting, waiting);
  }

  @Test
  void eachCircuitNotClosedSaysWhatItWaitsFor() {
    var condition = DependencyConditions.open(List.of(circuit("model-api", CircuitState.Open, List.of(), 6),
        circuit("tools", CircuitState.HalfOpen, List.of("a0", "a1"), 2),
        circuit("search", CircuitState.HalfOpen, List.of(), 0), DependencyCircuit.closed("db")));
    assertThat(condition.status).isEqualTo("True");
    assertThat(condition.reason).isEqualTo("Open");
    assertThat(condition.message).isEqualTo("model-api Open until 2026-11-27T10:00:30Z, 6 waiting; "
        + "tools HalfOpen (probes a0, a1), 2 waiting; "
        + "search HalfOpen (no probe yet: the next instance blamed on it), 0 waiting");
  }

  @Test
  void allClosedIsFalse() {
    var condition = DependencyConditions.open(List.of(DependencyCircuit.closed("model-api")));
    assertThat(condition.status).isEqualTo("False");
    assertThat(condition.reason).isEqualTo("AllClosed");
  }
}

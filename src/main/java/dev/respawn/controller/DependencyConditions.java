package dev.respawn.controller;

import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.api.v1alpha1.StatusCondition;
import dev.respawn.policy.DependencyCircuit;
import java.util.List;
import java.util.stream.Collectors;

/** The policy's DependencyOpen condition: which shared dependency is not Closed, at a glance. */
final class DependencyConditions {
  static final String TYPE = "DependencyOpen";

  private DependencyConditions() {}

  static StatusCondition open(List<DependencyCircuit> circuits) {
    List<DependencyCircuit> open = circuits.stream().filter(c -> c.state() != CircuitState.Closed).toList();
    if (open.isEmpty()) {
      return Conditions.of(TYPE, false, "AllClosed", "every dependency's circuit is Closed");
    }
    String what = open.stream().map(c -> c.name() + " " + c.state() + (c.state() == CircuitState.Open
        ? " until " + c.halfOpenAt() : c.probes().isEmpty() ? " (no probe yet: the next instance blamed on it)"
        : " (probes " + String.join(", ", c.probes()) + ")") + ", " + c.waiting() + " waiting")
        .collect(Collectors.joining("; "));
    return Conditions.of(TYPE, true, open.get(0).state() == CircuitState.Open ? "Open" : "HalfOpen", what);
  }
}

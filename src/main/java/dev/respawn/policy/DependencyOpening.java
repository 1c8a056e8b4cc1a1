package dev.respawn.policy;

import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.policy.InstanceState.RunInfo;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The failures that opened a shared dependency's circuit (api.md §3 d2: "or that this very failure opens"), seen
 * after the fact. An instance decides its failure from the circuit its policy's status shows; when several instances
 * fail at once, each may decide before that status counts the others, count its failure as usual, and only then
 * see the circuit open. The failure that brought the circuit to its threshold, and any blamed after it, were not
 * the agent's: once the instance sees the circuit Open, such a failure is taken back out of its count.
 */
final class DependencyOpening {
  private DependencyOpening() {}

  /**
   * Takes the instance's last failure out of its count when it was counted as usual (step e, phase Backoff) but
   * was the one that opened the dependency's circuit or came after it (its time is the circuit's openedAt or
   * later; failures at that same instant are the opener's peers and none of them counts): attempt back by one,
   * the failure out of the instance's own circuit breaker, its history entry's reason code
   * {@code dependency_circuit_open}. Not when counting it opened the instance's own circuit breaker (that stays
   * as decided). True when it did.
   */
  static boolean uncountOpener(DecisionDraft d, DependencyCircuit circuit) {
    InstanceState s = d.state;
    InstanceState.DecisionInfo counted = s.lastDecision;
    if (s.phase != Phase.Backoff || s.attempt < 1 || counted == null || counted.action() != DecisionAction.Restart
        || !(counted.reasonCode() == ReasonCode.RESTART_SCHEDULED
            || counted.reasonCode() == ReasonCode.RESUME_BLOCKED_COOLDOWN)
        || s.circuit.state() != CircuitState.Closed || s.lastFailure.at() == null
        || circuit.state() == CircuitState.Closed || circuit.openedAt() == null
        || s.lastFailure.at().isBefore(circuit.openedAt())) {
      return false;
    }
    s.attempt -= 1;
    if (s.attempt == 0) {
      s.firstFailureAt = null;
    }
    List<Instant> times = new ArrayList<>(s.circuit.failureTimes());
    if (times.remove(counted.at())) {
      CircuitSnapshot c = s.circuit;
      s.circuit = new CircuitSnapshot(c.state(), times, c.trips(), c.openedAt(), c.halfOpenAt(), c.lastSuccessAt(),
          times.isEmpty() ? null : times.get(times.size() - 1));
    }
    String uid = s.lastFailure.podUid();
    s.history.replaceAll(r -> uid == null || !uid.equals(r.podUid()) ? r : new RunInfo(r.run(), r.pod(), r.podUid(),
        r.startedAt(), r.endedAt(), r.outcome(), r.interruptionClass(), r.exitCode(),
        ReasonCode.DEPENDENCY_CIRCUIT_OPEN));
    return true;
  }
}

package dev.respawn.policy;

import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.policy.InstanceState.RunInfo;
import dev.respawn.policy.Decision.Notice;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The failures that opened a shared dependency's circuit (api.md §3 d2: "or that this very failure opens"), seen
 * after the fact. An instance decides its failure from the circuit its policy's status shows; when several instances
 * fail at once, each may decide before that status counts the others, count its failure as usual, and only then
 * see the circuit open. The failure that brought the circuit to its threshold, and any blamed after it, were not
 * the agent's: once the instance sees the circuit Open, such a failure is taken back out of its count, and the
 * instance waits for the circuit with the others ({@link #holdBackoff}).
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

  /**
   * A failure blamed on a dependency while its circuit was still Closed was counted and scheduled as
   * usual (a Backoff, or the HalfOpen trial of the circuit breaker it opened); once the dependency's circuit
   * is Open or HalfOpen, that instance is blamed on it like the others and waits with them (api.md §11:
   * every instance blamed on it waits) instead of restarting into the outage. Its own circuit stays as it
   * is: released while that is Open, it waits for its own trial time too, and that run is the trial.
   */
  static void holdBackoff(DecisionDraft d) {
    InstanceState s = d.state;
    // the failure's restart waits in Backoff, or in CircuitOpen for the HalfOpen trial of the instance's own
    // circuit breaker that this very failure opened (§3 j)
    boolean ownWait = s.phase == Phase.Backoff || (s.phase == Phase.CircuitOpen && s.waitingFor == null);
    if (!ownWait || s.lastFailure == null || s.lastFailure.dependency() == null
        || s.lastRestart == null || s.lastRestart.kind() != RestartKind.Failure) {
      return; // only the failure's own restart waits: a restart or resume a person asked for is acted on
    }
    String name = s.lastFailure.dependency();
    Optional<DependencySettings> settings = d.policy.dependency(name);
    DependencyCircuit circuit = d.obs.dependency(name);
    if (settings.isEmpty() || circuit.state() == CircuitState.Closed
        || !settings.get().fleetMember() && !circuit.holdsOutsiders(d.now)) {
      return;
    }
    boolean uncounted = uncountOpener(d, circuit);
    s.phase = Phase.CircuitOpen;
    s.waitingFor = name;
    Optional<Instant> at = circuit.release(settings.get(), DependencyWait.known(d, settings.get()), s.lastFailure.at(),
        s.lastFailure.probe(), d.now).at();
    Duration delay = at.filter(t -> t.isAfter(d.now)).map(t -> Duration.between(d.now, t)).orElse(Duration.ZERO);
    d.decided(DecisionAction.Wait, ReasonCode.DEPENDENCY_CIRCUIT_OPEN, s.lastDecision == null ? 0
        : s.lastDecision.maxAttempts(), delay, s.lastFailure.interruptionClass(), null, 0, "system");
    d.notice(Notice.normal(EventReason.RestartScheduled, "[RST] " + d.instance() + " waits for dependency " + name
        + " (circuit " + circuit.state() + ") instead of its scheduled restart"
        + (uncounted ? "; its failure opened that circuit: not counted as a failure of the agent" : "")
        + at.map(t -> "; next run at " + t).orElse("")));
  }
}

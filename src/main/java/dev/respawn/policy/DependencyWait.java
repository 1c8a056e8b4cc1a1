package dev.respawn.policy;

import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.api.v1alpha1.InterruptionClass;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.api.v1alpha1.ResumeMode;
import dev.respawn.api.v1alpha1.TerminalReason;
import dev.respawn.policy.Decision.Notice;
import dev.respawn.policy.InstanceState.FailureInfo;
import dev.respawn.policy.InstanceState.RestartInfo;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * The instance's side of a shared dependency (api.md §3 d2, §11): a failure blamed on it while its
 * circuit is Open or HalfOpen (or that opens it) is not counted against the agent; the instance waits
 * in CircuitOpen until the dependency lets it run (as a probe, or in its turn of the release).
 */
final class DependencyWait {
  private DependencyWait() {}

  /** How soon a waiter whose failure its circuit has not seen yet looks again (reads only: no write). */
  static final Duration UNSEEN_LOOK = Duration.ofSeconds(2);

  /** Step d2: true when the failure was blamed on a dependency and the instance now waits for it. */
  static boolean blamed(DecisionDraft d, RunEnding e, Classification c, String summary) {
    Optional<DependencySettings> dep = DependencyRules.blamedOn(d.policy, e, c);
    // a probe's run keeps waitingFor while it runs (started): the run that ended was a probe run of it
    String probing = d.state.waitingFor;
    d.state.waitingFor = null; // a run that ends another way (a probe's included) follows §3 as usual
    if (dep.isEmpty()) {
      return false;
    }
    InstanceState s = d.state;
    DependencySettings settings = dep.get();
    DependencyCircuit circuit = d.obs.dependency(settings.name());
    // one of the circuit's probes whose run ends (a run started as a probe keeps waitingFor, also after the circuit
    // closed: only a listed probe's counts, not one of a round the circuit has left behind)
    boolean probe = settings.name().equals(probing) && circuit.probes().contains(known(d, settings));
    s.lastFailure = s.lastFailure.blamedOn(settings.name(), probe);
    boolean opens = circuit.state() == CircuitState.Closed && settings.fleetMember()
        && circuit.opensWith(settings, d.instance(), d.now);
    boolean waits = settings.fleetMember() ? circuit.state() != CircuitState.Closed || opens
        : circuit.holdsOutsiders(d.now);
    if (!waits) {
      // counted as usual (step e), and recorded for the dependency; outside the fleet, once the circuit's Open time
      // is out too (it waits for no probe: see DependencyCircuit.release)
      return false;
    }
    InterruptionClass cls = c.interruptionClass();
    Optional<Instant> at = opens ? Optional.of(d.now.plus(settings.openDuration()))
        : circuit.release(settings, known(d, settings), d.now, s.lastFailure.probe(), d.now).at();
    Duration delay = at.map(t -> t.isAfter(d.now) ? Duration.between(d.now, t) : Duration.ZERO).orElse(Duration.ZERO);
    // the restart it waits for is a restart after an interruption like any other: from its checkpoint when
    // eligible (api.md §7); under Require never a fresh one, which its turn escalates (step d2 comes before h)
    ResumeEligibility.Verdict resume = FailureSteps.resume(d, cls, delay);
    d.recordRunEnd(e.podUid(), RunOutcome.Failure, cls, e.exitCode(), ReasonCode.DEPENDENCY_CIRCUIT_OPEN);
    s.phase = Phase.CircuitOpen;
    s.waitingFor = settings.name();
    s.lastRestart = FailureSteps.restartAfter(d, summary, cls, resume);
    s.nextRestartAt = at.orElse(null);
    d.decided(DecisionAction.Wait, ReasonCode.DEPENDENCY_CIRCUIT_OPEN, c.maxRetries(), delay, cls,
        resume == null ? null : resume.eligible(), 0, "system");
    d.notice(Notice.normal(EventReason.RestartScheduled, "[RST] " + d.instance() + " waits for dependency "
        + settings.name() + " (" + (opens ? "this failure opens its circuit" : "circuit " + circuit.state())
        + "); not counted as a failure of the agent" + at.map(t -> "; next run at " + t).orElse("")));
    at.ifPresent(d::wakeAt);
    return true;
  }

  /**
   * A waiting instance: when it may run, as the dependency's circuit says. Returns true when it may start
   * now; a dependency no longer in the policy lets it go at once.
   */
  static boolean mayStart(DecisionDraft d) {
    InstanceState s = d.state;
    InstanceState.DecisionInfo last = s.lastDecision;
    Instant retry = last == null || last.reasonCode() != ReasonCode.SPAWN_FAILED || last.at() == null ? null
        : last.at().plusMillis(Math.round(last.delaySeconds() * 1000));
    if (retry != null && d.now.isBefore(retry)) {
      // a refused pod create is retried when its retry is due, whatever the circuit says meanwhile
      d.wakeAt(retry);
      return false;
    }
    DependencyOpening.holdBackoff(d);
    if (s.phase != Phase.CircuitOpen || s.waitingFor == null) {
      return true;
    }
    Optional<DependencySettings> settings = d.policy.dependency(s.waitingFor);
    if (settings.isEmpty()) {
      s.waitingFor = null;
      s.nextRestartAt = d.now;
      return !refusedAtTurn(d);
    }
    DependencyCircuit circuit = d.obs.dependency(s.waitingFor);
    Instant blamedAt = s.lastFailure == null ? null : s.lastFailure.at();
    String known = known(d, settings.get());
    if (circuit.state() == CircuitState.Closed && !circuit.releaseOrder().contains(known) && blamedAt != null
        && (circuit.closedAt() == null || !blamedAt.isBefore(circuit.closedAt()))
        && circuit.recentBlame().stream().noneMatch(b -> b.instance().equals(known)
            && blamedAt.equals(b.at()))) {
      // the circuit's one writer has not seen this wait yet (this failure opened it): keep waiting, but no
      // longer than the openDuration this instance computed itself, should the fleet see it otherwise. Once it
      // has seen the failure and keeps the circuit Closed (an instance moved to another policy whose dependency of
      // that name is Closed), it lets the instance go, as a Closed circuit does. A circuit that only records a blame
      // tells its instances nothing (they are told of its decisions): a later look at such a wait looks again a
      // moment on (not the failure's own decision: the circuit it opens tells its instances)
      boolean due = s.nextRestartAt == null || !d.now.isBefore(s.nextRestartAt);
      d.wakeAt(s.nextRestartAt);
      if (blamedAt.isBefore(d.now)) {
        d.wakeAt(d.now.plus(UNSEEN_LOOK));
      }
      return due && !refusedAtTurn(d);
    }
    DependencyCircuit.Release release = circuit.release(settings.get(), known, blamedAt,
        s.lastFailure != null && s.lastFailure.probe(), d.now);
    Instant shown = s.nextRestartAt;
    s.nextRestartAt = release.at().orElse(null);
    Instant notBefore = notBefore(d);
    if (release.now() && notBefore != null && notBefore.isAfter(d.now)) {
      s.nextRestartAt = notBefore;
      d.wakeAt(notBefore);
      return false;
    }
    release.at().ifPresent(d::wakeAt);
    if (release.now() && refusedAtTurn(d)) {
      return false;
    }
    if (release.now() && inReleaseOrder(circuit, known) && !release.at().get().equals(shown)) {
      // api.md §11: each released instance shows its own nextRestartAt in status before it happens. Its turn
      // came before status showed it (the first of the order, whose turn is closedAt; a late look; releaseRate
      // 0): this decision writes the time, the next one, at once, starts the run
      d.wakeAt(d.now.plusMillis(1));
      return false;
    }
    if (release.now() && circuit.state() == CircuitState.Closed && settings.get().releaseRate() > 0
        && settings.get().fleetMember()) {
      d.releasedBy = s.waitingFor; // its turn of the release: the shell keeps the fleet to the rate
    }
    return release.now();
  }

  /**
   * The earliest a released instance may start for reasons of its own: the HalfOpen trial time of its own
   * circuit breaker when that is Open (§3 j: the next run is its trial), and a resume's class cooldown, a
   * minimum delay before any resume (§1) counted from the failure; null when neither holds it.
   */
  private static Instant notBefore(DecisionDraft d) {
    InstanceState s = d.state;
    Instant at = null;
    if (s.circuit.state() == CircuitState.Open) {
      at = CircuitBreaker.trialAt(s.circuit, d.policy.circuitBreaker());
    }
    RestartInfo restart = s.lastRestart;
    if (restart != null && restart.kind() == RestartKind.Failure && restart.resumeCheckpoint() != null
        && restart.interruptionClass() != null && restart.requestedAt() != null) {
      Instant cooled = restart.requestedAt().plus(d.policy.resume().cooldown(restart.interruptionClass()));
      at = at == null || cooled.isAfter(at) ? cooled : at;
    }
    return at;
  }

  /**
   * A waiting instance whose turn came (or whose wait ended otherwise) that may not restart: its restart window is
   * full, or its restart would be a fresh one under {@code resume.mode: Require}. Escalated; returns true when it is.
   */
  private static boolean refusedAtTurn(DecisionDraft d) {
    return windowFull(d) || freshUnderRequire(d);
  }

  /**
   * A waiter whose failure's resume verdict was not eligible under {@code resume.mode: Require} (api.md §7: not
   * eligible -> Escalated with that code): it waited for the dependency first (§3 d2 comes before h), and its turn
   * escalates it rather than restart it fresh. Returns true when it is.
   */
  private static boolean freshUnderRequire(DecisionDraft d) {
    InstanceState s = d.state;
    if (d.policy.resume().mode() != ResumeMode.Require || s.lastRestart == null
        || s.lastRestart.kind() != RestartKind.Failure || s.lastRestart.resumeCheckpoint() != null
        || s.resume.reasonCode() == null) {
      return false;
    }
    ReasonCode code = s.resume.reasonCode();
    d.decided(DecisionAction.Escalate, code, d.sequenceMaxAttempts(), Duration.ZERO,
        s.lastFailure == null ? null : s.lastFailure.interruptionClass(), false, 0, "system");
    d.stop(Phase.Escalated, TerminalReason.UnrecoverableError, code);
    return true;
  }

  /**
   * A waiting instance whose turn came (or whose wait ended otherwise) with its restart window full: restartLimit
   * counts restarts of every kind (api.md §1, §3 i), and a wait for a dependency does not lift it: Escalated.
   * Returns true when it is.
   */
  private static boolean windowFull(DecisionDraft d) {
    InstanceState s = d.state;
    if (!RestartWindow.isFull(s.recentRestarts, d.policy.restartLimit(), d.now)) {
      return false;
    }
    d.decided(DecisionAction.Escalate, ReasonCode.RESTART_LIMIT_EXCEEDED, d.sequenceMaxAttempts(), Duration.ZERO,
        s.lastFailure == null ? null : s.lastFailure.interruptionClass(), null, 0, "system");
    d.stop(Phase.Escalated, TerminalReason.RestartLimitExceeded, ReasonCode.RESTART_LIMIT_EXCEEDED);
    return true;
  }

  /**
   * The name by which the dependency's circuit knows this instance: its own within the policy's fleet; one no
   * probe, release order or blame can name (namespace/name) for an instance of another namespace, which the circuit
   * never counts: a same-named instance of the fleet's probe or turn is not its own.
   */
  static String known(DecisionDraft d, DependencySettings settings) {
    return settings.fleetMember() ? d.instance() : d.obs.namespace() + "/" + d.instance();
  }

  /** True when the circuit is Closed and releases this instance in its turn (its time is its own). */
  private static boolean inReleaseOrder(DependencyCircuit circuit, String instance) {
    return circuit.state() == CircuitState.Closed && circuit.closedAt() != null
        && circuit.releaseOrder().contains(instance);
  }


  /**
   * spec.suspend cleared on an instance that waited for a shared dependency when it was suspended (its last run
   * ended by the failure blamed on it, and the circuit has not closed since): while that circuit is Open or
   * HalfOpen it waits again, in its place in the queue (api.md §11: every instance blamed on it waits), rather
   * than restarting into the outage ahead of the probes. Returns true when it does.
   */
  static boolean waitAgain(DecisionDraft d, RestartInfo restart) {
    InstanceState s = d.state;
    FailureInfo failure = s.lastFailure;
    if (failure == null || failure.dependency() == null || failure.at() == null || s.currentPod == null
        || !s.currentPod.equals(failure.pod()) || d.policy.dependency(failure.dependency()).isEmpty()) {
      return false;
    }
    DependencyCircuit circuit = d.obs.dependency(failure.dependency());
    if (circuit.state() == CircuitState.Closed
        || (circuit.closedAt() != null && !failure.at().isAfter(circuit.closedAt()))) {
      return false;
    }
    d.scheduleRestart(null, restart);
    s.phase = Phase.CircuitOpen;
    s.waitingFor = failure.dependency();
    d.decided(DecisionAction.Wait, ReasonCode.DEPENDENCY_CIRCUIT_OPEN, d.sequenceMaxAttempts(), Duration.ZERO,
        failure.interruptionClass(), null, 0, "operator");
    d.notice(Notice.normal(EventReason.RestartScheduled, "[RST] " + d.instance() + " waits for dependency "
        + failure.dependency() + " again (circuit " + circuit.state() + "): spec.suspend cleared"));
    return true;
  }

  /** The run starts: released by a closed circuit, the instance no longer waits; a probe still does. */
  static void started(DecisionDraft d) {
    InstanceState s = d.state;
    if (s.waitingFor == null) {
      return;
    }
    DependencyCircuit circuit = d.obs.dependency(s.waitingFor);
    // a probe carried over while the circuit is Open (its run restarted by exit 42 or by hand) is a probe still
    String known = d.policy.dependency(s.waitingFor).map(dep -> known(d, dep)).orElse(d.instance());
    // one outside the fleet is never a probe, in HalfOpen neither (DependencyCircuit.release)
    boolean outsider = d.policy.dependency(s.waitingFor).map(dep -> !dep.fleetMember()).orElse(false);
    if (outsider || circuit.state() != CircuitState.HalfOpen && !circuit.probes().contains(known)) {
      s.waitingFor = null;
    }
  }
}

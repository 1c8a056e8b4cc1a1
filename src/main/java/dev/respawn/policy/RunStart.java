package dev.respawn.policy;

import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.api.v1alpha1.HealthVerdict;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.policy.Decision.Notice;
import dev.respawn.policy.Decision.PodStart;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Optional;

/**
 * api.md §3 step 5: the next run starts when one is due and no pod of the instance is live; a run healthy for
 * resetAfter ends the failure sequence.
 */
final class RunStart {
  private RunStart() {}

  /**
   * Starts the next run when it is due; returns true when it did. When the run's pod exists already
   * (a start decided before whose status was not written), the bookkeeping is done again as of the
   * pod's creation, without a create and without notices (they go with the start's own status write), unless the
   * sighting says its start was never told (made by an operator process that stopped before that write).
   */
  static boolean startIfDue(DecisionDraft d) {
    InstanceState s = d.state;
    boolean waiting = s.phase == Phase.Pending || s.phase == Phase.Backoff || s.phase == Phase.CircuitOpen;
    boolean due = s.nextRestartAt == null || !d.now.isBefore(s.nextRestartAt);
    if (!waiting || !due || d.obs.podLive()) {
      return false;
    }
    Optional<PodFacts> existing = d.obs.nextRun();
    d.startsExisting = existing.isPresent();
    // a pod's creationTimestamp has whole seconds: never before the time the start was due
    Instant at = existing.map(p -> p.view().createdAt()).filter(t -> !t.isAfter(d.now)).orElse(d.now);
    if (s.nextRestartAt != null && at.isBefore(s.nextRestartAt)) {
      at = s.nextRestartAt;
    }
    boolean tell = existing.isEmpty() || d.obs.startUntold();
    // a start is written: with the failures the circuit's window has forgotten by then (the same instant at every
    // look, so a start whose write waits for its run's first sign is the same start)
    s.circuit = CircuitBreaker.forgetOld(s.circuit, d.policy.circuitBreaker(), at);
    trial(d, at, tell);
    s.run += 1;
    String podName = d.instance() + "-" + s.run;
    String previous = s.currentPod;
    s.currentPod = podName;
    s.phase = Phase.Starting;
    s.nextRestartAt = null;
    s.runStartedAt = null;
    if (s.heartbeat != null && s.heartbeat.verdict() == HealthVerdict.Healthy) {
      s.heartbeat = null; // a bad verdict stays shown until the new run's first heartbeat
    }
    Optional<String> checkpoint = Optional.empty();
    if (s.run > 1) {
      s.restarts += 1;
      s.recentRestarts = new ArrayList<>(RestartWindow.record(s.recentRestarts, d.policy.restartLimit(), at));
      if (s.lastRestart != null) {
        s.lastRestart = s.lastRestart.started(podName, at);
        checkpoint = Optional.ofNullable(s.lastRestart.resumeCheckpoint());
      }
      boolean requested = s.lastRestart != null && s.lastRestart.kind() == RestartKind.Resume;
      if (checkpoint.isPresent()) {
        s.resume = s.resume.started(!requested);
      }
      if (tell) {
        checkpoint.ifPresent(c -> d.notice(Notice.normal(EventReason.ResumeDecision, "Resumed " + d.instance()
            + " from checkpoint " + c + (requested ? " (resume request: a new lifecycle)"
            : " (resume attempt " + s.resume.attempts() + ")"))));
        d.notice(Notice.normal(EventReason.RestartStarted, "Restart started for " + d.instance() + ": pod " + podName
            + " replaces " + previous + " (attempt " + s.attempt + ")"));
      }
    } else if (s.lastRestart != null && s.lastRestart.startedAt() == null) {
      // a restart asked for before any run (a request while Pending, an unsuspend of an instance created
      // suspended): the first run is what followed it; no restart is counted, but the record names its pod
      s.lastRestart = s.lastRestart.started(podName, at);
    }
    d.start = new PodStart(s.run, podName, s.attempt, checkpoint,
        checkpoint.isPresent() ? Optional.ofNullable(s.lastRestart.interruptionClass()) : Optional.empty(),
        Optional.ofNullable(d.releasedBy), at);
    return true;
  }

  /**
   * api.md §3j: a run that starts while the instance's own circuit is Open is the HalfOpen trial, whatever let
   * it start: the CircuitOpen wait over, a shared dependency's release (DependencyWait holds it until the trial
   * time), or a restart by hand that skipped it (a circuit left Open under a live
   * run would ignore its failure and schedule the next run at a trial time long past). One that starts while the
   * circuit is HalfOpen follows a trial run that ended without a failure (exit 42, a restart by hand, Ignore:
   * attempt and circuit untouched, §3 step 3; or a wait for a shared dependency its failure was blamed on,
   * §11): it is the trial now, and "neither healthy nor ended within another openDuration" counts from its own
   * start. Counted from the previous run's, a restart after openDuration had the new pod ended as a failed
   * trial before it could even run.
   */
  private static void trial(DecisionDraft d, Instant at, boolean tell) {
    InstanceState s = d.state;
    if (s.circuit.state() == CircuitState.HalfOpen) {
      s.circuit = CircuitBreaker.carryTrial(s.circuit, at);
    } else if (s.circuit.state() == CircuitState.Open) {
      s.circuit = CircuitBreaker.startTrial(s.circuit, at);
      if (tell) {
        d.notice(Notice.normal(EventReason.CircuitBreakerStateChanged, "Circuit breaker of " + d.instance()
            + " half-open: trial run (Open -> HalfOpen)"));
      }
    }
  }

  /** A run healthy for resetAfter: attempt 0, circuit Closed, RestartSucceeded. */
  static void endSequence(DecisionDraft d) {
    InstanceState s = d.state;
    CircuitState before = s.circuit.state();
    // one success, one notice (counted once in respawn.restart.attempts): a probe says so in the same words
    d.notice(Notice.normal(EventReason.RestartSucceeded, "[RST] Restart succeeded for " + d.instance() + " on attempt "
        + s.attempt + (s.waitingFor == null ? "" : "; it probed dependency " + s.waitingFor + ": healthy for "
        + GoDuration.format(d.policy.resetAfter()))));
    s.attempt = 0;
    s.firstFailureAt = null;
    s.circuit = CircuitBreaker.recordSuccess(s.circuit, d.policy.circuitBreaker(), d.now);
    s.resume = s.resume.withAttempts(0);
    s.waitingFor = null;
    if (before != CircuitState.Closed) {
      d.notice(Notice.normal(EventReason.CircuitBreakerStateChanged, "Circuit breaker closed for " + d.instance() + " ("
          + before + " -> Closed)"));
    }
  }
}

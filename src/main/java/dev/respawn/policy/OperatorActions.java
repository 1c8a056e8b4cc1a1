package dev.respawn.policy;

import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.api.v1alpha1.InterruptionClass;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.api.v1alpha1.ResumeMode;
import dev.respawn.api.v1alpha1.TerminalReason;
import dev.respawn.policy.Decision.Notice;
import dev.respawn.policy.InstanceState.ResumeInfo;
import dev.respawn.policy.InstanceState.RestartInfo;
import java.time.Duration;
import java.time.Instant;
import dev.respawn.api.v1alpha1.OperatorRequest;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.Map;
import java.util.Optional;

/** spec.suspend (§3 step 1) and the operator-action annotations of §6. */
final class OperatorActions {

  private OperatorActions() {}

  /**
   * spec.suspend=true: stop the run, restart nothing. An instance whose lifecycle has ended (Escalated, Failed,
   * Succeeded) has no run to stop and keeps its phase: suspending and unsuspending it is no way around a resume
   * (api.md §6), as suspending a finished Job changes nothing.
   */
  static void suspend(DecisionDraft d) {
    InstanceState s = d.state;
    boolean decidedButLive = d.currentPod().filter(p -> RestartEvaluator.decidedButLive(d, p)).isPresent();
    // a pod whose run's end is recorded is no live run: kept for logs (sidecars), or its delete still to be made
    boolean runLive = d.obs.podLive() && !s.hasRecorded(currentUid(d));
    if (s.phase.isTerminal() && s.phase != Phase.Suspended && !runLive) {
      refuseRequests(d, "the instance is suspended (spec.suspend: true)");
      d.endRun = decidedButLive; // the operator stopped between recording its end and deleting its pod
      return;
    }
    Optional<RunEnding> ended = d.obs.ending().filter(e -> !s.hasRecorded(e.podUid()));
    if (ended.isPresent() && !d.obs.podLive()) {
      // the run ended as spec.suspend was set: step 1 decides that ending (Suspended, no restart), so it is
      // recorded now, and not decided again (as a failure, a clean exit) once spec.suspend is cleared
      d.recordRunEnd(ended.get().podUid(), RunOutcome.Stopped, null, ended.get().exitCode(), ReasonCode.SUSPENDED);
    } else if (d.obs.podLive() && s.currentPod != null && !s.hasRecorded(currentUid(d))) {
      d.recordRunEnd(currentUid(d), RunOutcome.Stopped, null, null, ReasonCode.SUSPENDED);
      d.endRun = true;
    } else if (decidedButLive) {
      d.endRun = true; // suspended, recorded, but the operator stopped before the pod was deleted
    }
    s.waitingFor = null; // a suspended instance stops waiting for a dependency
    if (s.phase != Phase.Suspended) {
      s.phase = Phase.Suspended;
      s.terminalReason = TerminalReason.OperatorShutdown;
      s.nextRestartAt = null;
      // maxAttempts: the open sequence's own (a cap of its class), kept for when it is unsuspended
      d.decided(DecisionAction.Stop, ReasonCode.SUSPENDED, d.sequenceMaxAttempts(), Duration.ZERO, null, null, 0,
          "operator");
    }
    refuseRequests(d, "the instance is suspended (spec.suspend: true)");
  }

  /**
   * spec.suspend cleared: a fresh run at once, not a failure; but a circuit that was Open stays so while
   * suspended, and the next run is its HalfOpen trial (api.md §3j): once openDuration is over, at once; and an
   * instance that waited for a shared dependency whose circuit is still Open or HalfOpen waits again.
   */
  static void unsuspend(DecisionDraft d) {
    InstanceState s = d.state;
    if (s.circuit.state() == CircuitState.Open && d.policy.circuitBreaker().latch()) {
      // a latched circuit never closes by itself (api.md §1: terminal until forced): clearing spec.suspend
      // brings back the Escalated it latched into, not a trial; a resume in this same edit forces it (the
      // requests that follow start its new lifecycle from Suspended, which is terminal too)
      if (pending(d).containsKey(OperatorRequest.RESUME)) {
        return;
      }
      d.decided(DecisionAction.Escalate, ReasonCode.CIRCUIT_OPEN, d.sequenceMaxAttempts(), Duration.ZERO, null, null,
          0, "operator");
      d.stop(Phase.Escalated, TerminalReason.CircuitBreakerOpen, ReasonCode.CIRCUIT_OPEN);
      return;
    }
    s.terminalReason = null;
    RestartInfo restart = new RestartInfo(RestartKind.Unsuspend, "spec.suspend cleared", s.currentPod, null, d.now,
        null, "", null, null);
    if (DependencyWait.waitAgain(d, restart)) {
      return; // it waited for a shared dependency that is still not Closed: it waits again (api.md §11)
    }
    if (s.circuit.state() != CircuitState.Open) {
      d.scheduleRestart(d.now, restart);
      d.decided(DecisionAction.Restart, ReasonCode.MANUAL_RESTART, d.sequenceMaxAttempts(), Duration.ZERO, null, null,
          0, "operator");
      return;
    }
    Instant trial = CircuitBreaker.trialAt(s.circuit, d.policy.circuitBreaker());
    boolean due = !trial.isAfter(d.now);
    d.scheduleRestart(due ? d.now : trial, restart);
    s.phase = Phase.CircuitOpen; // RunStart moves the circuit Open -> HalfOpen as the run starts
    if (due) {
      d.decided(DecisionAction.Restart, ReasonCode.MANUAL_RESTART, d.sequenceMaxAttempts(), Duration.ZERO, null, null,
          0, "operator");
    } else {
      d.decided(DecisionAction.Wait, ReasonCode.CIRCUIT_OPEN, d.sequenceMaxAttempts(), Duration.between(d.now, trial),
          null, null, 0, "operator");
    }
  }

  /**
   * The annotation requests (api.md §6) with an id not acted on yet, in {@link OperatorRequest} order:
   * each is recorded as handled; once one restarted the instance, the later ones are answered by it.
   */
  static void requests(DecisionDraft d, boolean resumable) {
    boolean restarted = false;
    for (Map.Entry<OperatorRequest, Request> e : pending(d).entrySet()) {
      d.state.handle(e.getKey(), e.getValue().id());
      if (!restarted) {
        restarted = switch (e.getKey()) {
          case RESUME -> resume(d, e.getValue(), resumable);
          case RESTART -> restart(d, e.getValue());
        };
      }
    }
  }

  /** Whether a restart request with an id not acted on yet is there. */
  static boolean restartPending(DecisionDraft d) {
    return pending(d).containsKey(OperatorRequest.RESTART);
  }

  private static Map<OperatorRequest, Request> pending(DecisionDraft d) {
    Map<OperatorRequest, Request> pending = new EnumMap<>(OperatorRequest.class);
    d.obs.requests().forEach((kind, r) -> {
      if (!d.state.handled(kind, r.id())) {
        pending.put(kind, r);
      }
    });
    return pending;
  }

  /**
   * respawn.dev/resume with a new id: a new lifecycle (attempt 0, circuit Closed, window cleared), now; only
   * where the policy gave up (Escalated, Failed, a latched circuit, which is Escalated) or the agent finished
   * (Succeeded), also in the decision that clears spec.suspend, and before the first run's decision (whose start it
   * is). Elsewhere refused: a live or waiting instance is restarted with respawn.dev/restart.
   */
  private static boolean resume(DecisionDraft d, Request r, boolean resumable) {
    InstanceState s = d.state;
    if (!resumable) {
      refuse(d, OperatorRequest.RESUME, r, "phase " + s.phase + " is not Escalated, Failed or Succeeded, nothing to "
          + "resume; use respawn.dev/restart (kubectl respawn restart " + d.instance() + ")");
      return false;
    }
    CircuitState before = s.circuit.state();
    s.attempt = 0;
    s.firstFailureAt = null;
    s.circuit = CircuitBreaker.reset(s.circuit);
    s.recentRestarts = new ArrayList<>();
    s.terminalReason = null;
    s.waitingFor = null;
    s.resume = s.resume.withAttempts(0);
    if (before != CircuitState.Closed) {
      d.notice(Notice.normal(EventReason.CircuitBreakerStateChanged, "Circuit breaker closed for " + d.instance()
          + " by resume request " + r.id() + " (" + before + " -> Closed)"));
    }
    endLiveRun(d, RunOutcome.Stopped, ReasonCode.RESUMED);
    String checkpoint = null;
    InterruptionClass cls = null;
    LeaseView lease = d.obs.checkpointLease().orElse(null);
    if (d.policy.resume().mode() != ResumeMode.Off && s.lastFailure != null) {
      var verdict = ResumeEligibility.evaluate(d.policy.resume(), s.lastFailure.interruptionClass(), lease, 0,
          Duration.ofDays(365));
      d.resumeCode = verdict.reasonCode();
      if (verdict.eligible()) {
        checkpoint = Bounds.truncateUtf8(lease.checkpoint(), Bounds.CHECKPOINT_BYTES);
        cls = s.lastFailure.interruptionClass();
      }
      s.resume = new ResumeInfo(lease == null ? null : Bounds.truncateUtf8(lease.checkpoint(),
          Bounds.CHECKPOINT_BYTES), lease == null ? null : Bounds.truncateUtf8(lease.checkpointStatus(),
          Bounds.CHECKPOINT_BYTES), lease == null ? null : lease.stepIdempotent(), verdict.eligible(),
          verdict.reasonCode(), 0, 0);
    }
    String reason = r.reason() != null ? r.reason() : "resume requested";
    d.scheduleRestart(d.now, new RestartInfo(RestartKind.Resume, reason, s.currentPod, null, d.now, null, r.id(), checkpoint,
        cls));
    // the audit line names the class the resume was judged for, eligible or not (the restart carries it only when
    // it resumes from the checkpoint)
    d.decided(DecisionAction.Restart, ReasonCode.RESUMED, d.sequenceMaxAttempts(), Duration.ZERO,
        s.lastFailure == null ? null : s.lastFailure.interruptionClass(), checkpoint != null, 0, "operator");
    d.notice(Notice.normal(EventReason.RestartRequested, "Resume requested (" + r.id() + "): new lifecycle, restarting now"
        + (checkpoint != null ? " from checkpoint " + checkpoint : "")));
    return true;
  }

  /**
   * respawn.dev/restart with a new id: end a live run or skip a wait; refused in a terminal phase, and when
   * it would end a live run with restartLimit's window full (the run goes on).
   */
  private static boolean restart(DecisionDraft d, Request r) {
    InstanceState s = d.state;
    if (s.phase.isTerminal()) {
      refuse(d, OperatorRequest.RESTART, r, "phase " + s.phase + " is terminal; use respawn.dev/resume (kubectl "
          + "respawn resume " + d.instance() + " --force)");
      return false;
    }
    boolean waitsForDependency = s.phase == Phase.CircuitOpen && s.waitingFor != null;
    if ((d.obs.podLive() || waitsForDependency)
        && RestartWindow.isFull(s.recentRestarts, d.policy.restartLimit(), d.now)) {
      // restartLimit counts restarts of every kind (api.md §1, §3.3): a person's too; the live run goes on, a wait for
      // a shared dependency too (its failure skipped step i). Between runs of a failure's own wait the next restart
      // is due anyway (step i let it): skipping that wait adds none
      refuse(d, OperatorRequest.RESTART, r, d.policy.restartLimit().map(l -> l.maxRestarts() + " restarts within " + GoDuration.format(l.window()))
          .orElse("the restart limit") + " already (restartLimit); " + (waitsForDependency ? "it waits for "
          + s.waitingFor + " as before" : "the current run goes on") + "; a restart fits in the "
          + "window again at " + RestartWindow.roomAt(s.recentRestarts, d.policy.restartLimit(), d.now)
          .map(Instant::toString).orElse("?") + " (use a new request id then)");
      return false;
    }
    RestartInfo waitedFor = waitedFor(s);
    endLiveRun(d, RunOutcome.Restarted, ReasonCode.MANUAL_RESTART);
    if (s.phase == Phase.CircuitOpen && s.waitingFor != null && !d.obs.dependency(s.waitingFor).probes()
        .contains(d.instance())) {
      s.waitingFor = null; // restarted now, whatever a shared dependency's circuit says (api.md §6: restart now)
    } // a probe (its run, or its start a refused create holds back) restarted by hand stays the probe
    String reason = r.reason() != null ? r.reason() : "restart requested";
    // skipping a wait skips only the wait: a resume from the checkpoint the failure decided stays a resume (§7)
    d.scheduleRestart(d.now, new RestartInfo(RestartKind.Manual, reason, s.currentPod, null, d.now, null, r.id(),
        waitedFor == null ? null : waitedFor.resumeCheckpoint(), waitedFor == null ? null
            : waitedFor.interruptionClass()));
    d.decided(DecisionAction.Restart, ReasonCode.MANUAL_RESTART, d.sequenceMaxAttempts(), Duration.ZERO, null, null, 0,
        "operator");
    d.notice(Notice.normal(EventReason.RestartRequested, "Restart requested (" + r.id() + "): " + reason));
    return true;
  }

  /**
   * A run whose pod is gone while a restart request waits: the request ended it, and the status write that said
   * so was lost with the operator that deleted the pod (it deletes, then writes). Recorded as that restart's end,
   * not as a failure (api.md §6); the request is acted on next, as it would have been. Not when the request
   * would be refused (restartLimit's window full): then the pod did not go for it.
   */
  static boolean endedByRestart(DecisionDraft d, RunEnding ending) {
    if (ending.kind() != EndingKind.DELETED || !restartPending(d)
        || RestartWindow.isFull(d.state.recentRestarts, d.policy.restartLimit(), d.now)) {
      return false;
    }
    d.recordRunEnd(ending.podUid(), RunOutcome.Restarted, null, null, ReasonCode.MANUAL_RESTART);
    return true;
  }

  /** The restart a failure decided that has not started yet (a Backoff or CircuitOpen wait), or null. */
  private static RestartInfo waitedFor(InstanceState s) {
    RestartInfo last = s.lastRestart;
    boolean waiting = s.phase == Phase.Backoff || s.phase == Phase.CircuitOpen;
    return waiting && last != null && last.startedAt() == null ? last : null;
  }

  private static void endLiveRun(DecisionDraft d, RunOutcome outcome, ReasonCode code) {
    if (d.obs.podLive() && d.state.currentPod != null && !d.state.hasRecorded(currentUid(d))) {
      d.recordRunEnd(currentUid(d), outcome, null, null, code);
      d.endRun = true;
    }
  }

  private static void refuseRequests(DecisionDraft d, String why) {
    pending(d).forEach((kind, r) -> {
      d.state.refuse(kind, r.id(), why);
      d.notice(Notice.warning(EventReason.RestartRequested, refusal(kind, r, why)));
    });
  }

  /** A request refused in a decision: recorded as handled with why, told by a Warning, audited as request_refused. */
  private static void refuse(DecisionDraft d, OperatorRequest kind, Request r, String why) {
    d.state.refuse(kind, r.id(), why);
    d.reasonCode = ReasonCode.REQUEST_REFUSED;
    d.notice(Notice.warning(EventReason.RestartRequested, refusal(kind, r, why)));
  }

  private static String refusal(OperatorRequest kind, Request r, String why) {
    String name = kind.statusKey();
    return Character.toUpperCase(name.charAt(0)) + name.substring(1) + " request " + r.id() + " refused: " + why;
  }

  private static String currentUid(DecisionDraft d) {
    return d.obs.pod().map(PodView::uid).orElse(null);
  }
}

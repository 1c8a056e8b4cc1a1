package dev.respawn.policy;

import dev.respawn.api.v1alpha1.BackoffType;
import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.api.v1alpha1.FailureAction;
import dev.respawn.api.v1alpha1.InterruptionClass;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.api.v1alpha1.ResumeMode;
import dev.respawn.api.v1alpha1.TerminalReason;
import dev.respawn.policy.Decision.Notice;
import dev.respawn.policy.InstanceState.FailureInfo;
import dev.respawn.policy.InstanceState.ResumeInfo;
import dev.respawn.policy.InstanceState.RestartInfo;
import dev.respawn.policy.spi.CustomEvaluator;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/** api.md §3 steps 2–4 (a–k): what happens after a run ended. */
final class FailureSteps {

  private FailureSteps() {}

  /** A run ended (not yet recorded): steps 2, 3 and 4. */
  static void runEnded(DecisionDraft d, RunEnding e, List<CustomEvaluator> evaluators) {
    if (OperatorActions.endedByRestart(d, e)) {
      return; // a restart request's, decided with the request
    }
    InstanceState s = d.state;
    if (e.kind() == EndingKind.TERMINATED && Integer.valueOf(0).equals(e.exitCode())) {
      d.recordRunEnd(e.podUid(), RunOutcome.Success, null, 0, ReasonCode.CLEAN_EXIT);
      s.phase = Phase.Succeeded;
      s.terminalReason = TerminalReason.CleanExit;
      s.nextRestartAt = null;
      s.waitingFor = null; // a probe that finished waits for nothing; the dependency picks another
      d.decided(DecisionAction.None, ReasonCode.CLEAN_EXIT, d.sequenceMaxAttempts(), Duration.ZERO, null, null, 0,
          "system");
      return;
    }
    if (e.kind() == EndingKind.TERMINATED && Integer.valueOf(d.policy.restartRequestExitCode()).equals(e.exitCode())) {
      String reason = e.message() == null || e.message().isBlank() ? "exit code " + e.exitCode()
          : Bounds.truncateUtf8(e.message().strip(), Bounds.MESSAGE_BYTES);
      d.notice(Notice.normal(EventReason.RestartRequested, "The agent asked for a restart (exit code " + e.exitCode() + "): "
          + reason));
      ReasonCode decided = restartAtOnce(d, RestartKind.RestartRequest, reason, ReasonCode.RESTART_REQUESTED, "agent");
      d.recordRunEnd(e.podUid(), RunOutcome.RestartRequest, null, e.exitCode(), decided);
      return;
    }
    failure(d, e, evaluators);
  }

  /**
   * Restarts that are not failures (exit code 42, Ignore): at once, but inside restartLimit. Returns the
   * reason code decided ({@code code}, or restart_limit_exceeded), which the run's history entry carries.
   */
  static ReasonCode restartAtOnce(DecisionDraft d, RestartKind kind, String reason, ReasonCode code, String actor) {
    return restartNotBefore(d, kind, reason, code, actor, Duration.ZERO);
  }

  /** As {@link #restartAtOnce}, not before {@code wait} (an Ignore rule's cooldown, its minimum delay). */
  private static ReasonCode restartNotBefore(DecisionDraft d, RestartKind kind, String reason, ReasonCode code,
      String actor, Duration wait) {
    InstanceState s = d.state;
    if (RestartWindow.isFull(s.recentRestarts, d.policy.restartLimit(), d.now)) {
      // not a failure's own decision: the open sequence's retries (or the policy's), as for the restart
      d.decided(DecisionAction.Escalate, ReasonCode.RESTART_LIMIT_EXCEEDED, d.sequenceMaxAttempts(), Duration.ZERO,
          null, null, 0, actor);
      d.stop(Phase.Escalated, TerminalReason.RestartLimitExceeded, ReasonCode.RESTART_LIMIT_EXCEEDED);
      return ReasonCode.RESTART_LIMIT_EXCEEDED;
    }
    d.scheduleRestart(d.now.plus(wait), new RestartInfo(kind, reason, s.currentPod, null, d.now, null, "", null,
        null));
    d.decided(DecisionAction.Restart, code, d.sequenceMaxAttempts(), wait, null, null, 0, actor);
    return code;
  }

  private static void failure(DecisionDraft d, RunEnding e, List<CustomEvaluator> evaluators) {
    InstanceState s = d.state;
    RestartPolicy p = d.policy;
    Classification c = FailureClassifier.classify(e, p, evaluators);
    InterruptionClass cls = c.interruptionClass();
    s.lastFailure = new FailureInfo(e.pod(), e.podUid(), cls, c.failureReason(),
        Bounds.truncateUtf8(e.reason(), Bounds.MESSAGE_BYTES), e.exitCode(),
        Bounds.truncateUtf8(e.message(), Bounds.MESSAGE_BYTES), c.rule(), c.retryable(), d.now, null, false,
        e.kind().endsByDeletingThePod());
    String summary = Bounds.truncateUtf8(cls + "/" + c.failureReason() + (e.exitCode() != null ? " exit "
        + e.exitCode() : "") + (e.reason() != null ? " " + e.reason() : ""), Bounds.MESSAGE_BYTES);
    // d. Ignore (taken here, after a. and c. still win): restart at once, not a failure, so told as a scheduled
    // restart and not as a Warning; the rule's cooldown, if it has one, is still its minimum delay
    if (c.action() == FailureAction.Ignore && p.backoff().type() != BackoffType.None
        && cls != InterruptionClass.Unknown) {
      ReasonCode decided = restartNotBefore(d, RestartKind.Ignored, summary, ReasonCode.FAILURE_IGNORED, "system",
          c.cooldown().orElse(Duration.ZERO));
      d.recordRunEnd(e.podUid(), RunOutcome.Ignored, cls, e.exitCode(), decided);
      if (decided == ReasonCode.FAILURE_IGNORED) {
        d.notice(Notice.normal(EventReason.RestartScheduled, "[RST] Restart scheduled for " + d.instance() + " at "
            + s.nextRestartAt + ": " + summary + " ignored by rule " + c.rule()));
      }
      return;
    }
    d.notice(Notice.warning(EventReason.RestartFailed, "[RST] Restart failed for " + d.instance() + ": " + summary));
    // a. backoff type None: never restart a failure
    if (p.backoff().type() == BackoffType.None) {
      end(d, e, cls, ReasonCode.POLICY_NONE, c.maxRetries(), null);
      d.stop(Phase.Failed, null, ReasonCode.POLICY_NONE);
      return;
    }
    // b. Fail
    if (c.action() == FailureAction.Fail) {
      end(d, e, cls, ReasonCode.NON_RETRYABLE_FAILURE, c.maxRetries(), null);
      d.stop(Phase.Failed, TerminalReason.UnrecoverableError, ReasonCode.NON_RETRYABLE_FAILURE);
      return;
    }
    // c. Unknown: fail closed
    if (cls == InterruptionClass.Unknown) {
      resume(d, cls, Duration.ZERO); // status.resume shows why no resume either (api.md §7), with the checkpoint
      end(d, e, cls, ReasonCode.RESUME_UNKNOWN_INTERRUPTION_CLASS, c.maxRetries(), false);
      d.stop(Phase.Escalated, TerminalReason.UnrecoverableError, ReasonCode.RESUME_UNKNOWN_INTERRUPTION_CLASS);
      return;
    }
    // d2. blamed on a shared dependency whose circuit is Open or HalfOpen, or that this failure opens
    if (DependencyWait.blamed(d, e, c, summary)) {
      return;
    }
    // e. count it
    s.attempt += 1;
    if (s.attempt == 1) {
      s.firstFailureAt = d.now;
    }
    CircuitState before = s.circuit.state();
    s.circuit = CircuitBreaker.recordFailure(s.circuit, p.circuitBreaker(), d.now);
    if (before != CircuitState.Open && s.circuit.state() == CircuitState.Open) {
      d.notice(Notice.warning(EventReason.CircuitBreakerStateChanged, "[RST] Circuit breaker opened for " + d.instance()
          + (p.circuitBreaker().latch() ? ", latched: it stays Open until a resume"
              : ", reset in " + GoDuration.format(p.circuitBreaker().openDuration())) + " (" + before + " -> Open)"));
    }
    // f. retries exhausted
    if (s.attempt > c.maxRetries()) {
      end(d, e, cls, ReasonCode.RETRIES_EXHAUSTED, c.maxRetries(), null);
      d.notice(Notice.warning(EventReason.RestartExhausted, "[RST] Restart attempts exhausted for " + d.instance() + " after "
          + (s.attempt - 1) + " attempts"));
      d.stop(Phase.Escalated, e.kind().isStall() ? TerminalReason.StallTimeout : TerminalReason.RestartLimitExceeded,
          ReasonCode.RETRIES_EXHAUSTED);
      return;
    }
    // g. latched circuit
    if (s.circuit.state() == CircuitState.Open && p.circuitBreaker().latch()) {
      end(d, e, cls, ReasonCode.CIRCUIT_OPEN, c.maxRetries(), null);
      d.stop(Phase.Escalated, TerminalReason.CircuitBreakerOpen, ReasonCode.CIRCUIT_OPEN);
      return;
    }
    Duration backoff = Backoff.jitter(Backoff.delay(p.backoff(), s.attempt), p.backoff().jitter(), d.random);
    Duration ruleCooldown = c.cooldown().orElse(Duration.ZERO);
    Duration plain = max(backoff, ruleCooldown);
    // h. resume
    ResumeEligibility.Verdict resume = resume(d, cls, plain);
    if (refusesFresh(d, e, cls, resume, c.maxRetries())) {
      return;
    }
    // i. restart window
    if (RestartWindow.isFull(s.recentRestarts, p.restartLimit(), d.now)) {
      end(d, e, cls, ReasonCode.RESTART_LIMIT_EXCEEDED, c.maxRetries(), resume == null ? null : resume.eligible());
      d.stop(Phase.Escalated, TerminalReason.RestartLimitExceeded, ReasonCode.RESTART_LIMIT_EXCEEDED);
      return;
    }
    boolean resuming = resume != null && resume.eligible();
    RestartInfo restart = restartAfter(d, summary, cls, resume);
    // j. circuit open: wait for the HalfOpen trial
    if (s.circuit.state() == CircuitState.Open) {
      Instant trial = CircuitBreaker.trialAt(s.circuit, p.circuitBreaker());
      if (trial.isBefore(d.now)) {
        trial = d.now; // a run that ran while the circuit stayed Open (one adopted from its pod): its trial is due
      }
      if (resuming && trial.isBefore(d.now.plus(resume.cooldown()))) {
        trial = d.now.plus(resume.cooldown()); // the class's cooldown is a minimum delay before any resume (§1)
      }
      d.recordRunEnd(e.podUid(), RunOutcome.Failure, cls, e.exitCode(), ReasonCode.CIRCUIT_OPEN);
      d.scheduleRestart(trial, restart);
      s.phase = Phase.CircuitOpen;
      d.decided(DecisionAction.Wait, ReasonCode.CIRCUIT_OPEN, c.maxRetries(), Duration.between(d.now, trial), cls,
          resume == null ? null : resume.eligible(), 0, "system");
      return;
    }
    // k. backoff
    Duration wait = resuming ? max(plain, resume.cooldown()) : plain;
    ReasonCode code = resuming && resume.cooldown().compareTo(plain) > 0 ? ReasonCode.RESUME_BLOCKED_COOLDOWN : ReasonCode.RESTART_SCHEDULED;
    d.recordRunEnd(e.podUid(), RunOutcome.Failure, cls, e.exitCode(), code);
    d.scheduleRestart(d.now.plus(wait), restart);
    d.decided(DecisionAction.Restart, code, c.maxRetries(), wait, cls, resume == null ? null : resume.eligible(),
        resuming ? secondsUp(resume.cooldown()) : 0, "system");
    d.notice(Notice.normal(EventReason.RestartScheduled, "[RST] Restart scheduled for " + d.instance() + " at "
        + s.nextRestartAt + " (attempt " + s.attempt + ")"));
  }

  /**
   * Step h (api.md §7): the resume verdict of a failure whose restart waits {@code plain} anyway (null when
   * resume is Off), shown in status.resume and told in a ResumeDecision notice.
   */
  static ResumeEligibility.Verdict resume(DecisionDraft d, InterruptionClass cls, Duration plain) {
    RestartPolicy p = d.policy;
    InstanceState s = d.state;
    if (p.resume().mode() == ResumeMode.Off) {
      return null;
    }
    LeaseView lease = d.obs.checkpointLease().orElse(null);
    ResumeEligibility.Verdict resume = ResumeEligibility.evaluate(p.resume(), cls, lease, s.resume.attempts(), plain);
    d.resumeCode = resume.reasonCode();
    String checkpoint = lease == null || !Bounds.fitsUtf8(lease.checkpoint(), Bounds.CHECKPOINT_BYTES) ? null
        : lease.checkpoint();
    s.resume = new ResumeInfo(checkpoint, lease == null ? null : cut(lease.checkpointStatus()),
        lease == null ? null : lease.stepIdempotent(), resume.eligible(), resume.reasonCode(),
        resume.eligible() ? secondsUp(resume.cooldown()) : 0, s.resume.attempts());
    d.notice(Notice.normal(EventReason.ResumeDecision, "Resume " + (resume.eligible() ? "eligible" : "not eligible")
        + ": " + resume.reasonCode()));
    return resume;
  }

  /** Require and not eligible (api.md §7): never a fresh restart, Escalated with the verdict's code. */
  static boolean refusesFresh(DecisionDraft d, RunEnding e, InterruptionClass cls, ResumeEligibility.Verdict resume,
      int maxRetries) {
    if (resume == null || resume.eligible() || d.policy.resume().mode() != ResumeMode.Require) {
      return false;
    }
    end(d, e, cls, resume.reasonCode(), maxRetries, false);
    d.stop(Phase.Escalated, TerminalReason.UnrecoverableError, resume.reasonCode());
    return true;
  }

  /** The restart that follows a failure: from the run's checkpoint when the verdict allows a resume. */
  static RestartInfo restartAfter(DecisionDraft d, String summary, InterruptionClass cls,
      ResumeEligibility.Verdict resume) {
    boolean resuming = resume != null && resume.eligible();
    return new RestartInfo(RestartKind.Failure, summary, d.state.currentPod, null, d.now, null, "",
        resuming ? d.obs.checkpointLease().get().checkpoint() : null, resuming ? cls : null);
  }

  /** Records the run end and a decision that does not restart (or waits for the circuit). */
  private static void end(DecisionDraft d, RunEnding e, InterruptionClass cls, ReasonCode code, int max,
      Boolean eligible) {
    d.recordRunEnd(e.podUid(), RunOutcome.Failure, cls, e.exitCode(), code);
    DecisionAction action = code == ReasonCode.NON_RETRYABLE_FAILURE || code == ReasonCode.POLICY_NONE
        ? DecisionAction.Fail : DecisionAction.Escalate;
    d.decided(action, code, max, Duration.ZERO, cls, eligible, 0, "system");
  }

  private static String cut(String checkpointText) {
    return Bounds.truncateUtf8(checkpointText, Bounds.CHECKPOINT_BYTES);
  }

  private static Duration max(Duration a, Duration b) {
    return a.compareTo(b) >= 0 ? a : b;
  }

  private static long secondsUp(Duration d) {
    long s = d.getSeconds();
    return d.getNano() > 0 ? s + 1 : s;
  }
}

package dev.respawn.policy;

import dev.respawn.api.v1alpha1.InterruptionClass;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.api.v1alpha1.TerminalReason;
import dev.respawn.policy.Decision.AuditRecord;
import dev.respawn.policy.Decision.Liveness;
import dev.respawn.policy.Decision.Notice;
import dev.respawn.policy.Decision.PodStart;
import dev.respawn.policy.InstanceState.DecisionInfo;
import dev.respawn.policy.InstanceState.RestartInfo;
import dev.respawn.policy.InstanceState.RunInfo;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.random.RandomGenerator;

/** The working set of one decision: the state being changed and what the controller must do. */
final class DecisionDraft {
  final RestartPolicy policy;
  final InstanceState state;
  Observation obs;
  final Instant now;
  final RandomGenerator random;
  private final int tripsBefore;
  /** The pod of the current run as observed (null when there is none). */
  private PodView observedCurrent;
  /** End the live current run: its pod is deleted. */
  boolean endRun;
  boolean startsExisting;
  boolean deferStatus;
  /** The shared dependency whose release (its circuit closed again) lets the next run start, or null. */
  String releasedBy;
  PodStart start;
  ReasonCode reasonCode;
  Liveness liveness;
  AuditRecord audit;
  /** The resume verdict's code (api.md §7) when this decision evaluated one: reason_code of its resume_decision. */
  ReasonCode resumeCode;
  final List<Notice> notices = new ArrayList<>();
  private Instant wakeAt;

  DecisionDraft(RestartPolicy policy, InstanceState state, Observation obs, Instant now, RandomGenerator random) {
    this.policy = policy;
    this.state = state;
    this.obs = obs;
    this.now = now;
    this.random = random;
    this.tripsBefore = state.circuit.trips();
    this.observedCurrent = obs.pod().filter(p -> p.name().equals(state.currentPod)).orElse(null);
  }

  /** The current run's pod, when it was seen. */
  Optional<PodView> currentPod() {
    return Optional.ofNullable(observedCurrent);
  }

  /** The next run's pod existed already: it is the current run's from now on. */
  void switchToNextRun(Sighting seen) {
    PodView previous = observedCurrent;
    obs = obs.atNextRun(seen);
    observedCurrent = obs.pod().orElse(null);
    if (previous != null) {
      replaced = previous;
    }
  }

  /** The current pod before {@link #switchToNextRun()}: an earlier run's now. */
  private PodView replaced;

  String instance() {
    return obs.instance();
  }

  void wakeAt(Instant t) {
    if (t != null && t.isAfter(now) && (wakeAt == null || t.isBefore(wakeAt))) {
      wakeAt = t;
    }
  }

  void notice(Notice n) {
    notices.add(n);
  }

  /** Records a decision with a reason code in status.lastDecision and in the audit line. */
  void decided(DecisionAction action, ReasonCode code, int maxAttempts, Duration delay, InterruptionClass cls, Boolean eligible,
      long cooldownRemaining, String actor) {
    reasonCode = code;
    // the final attempt of a failure sequence: only a failure's own restart can be it
    boolean failureRestart = code == ReasonCode.RESTART_SCHEDULED || code == ReasonCode.RESUME_BLOCKED_COOLDOWN;
    state.lastDecision = new DecisionInfo(action, code, state.attempt, maxAttempts,
        action == DecisionAction.Restart && failureRestart && state.attempt > 0 && state.attempt >= maxAttempts,
        delay.toMillis() / 1000.0, now, null);
    // a resume decision's line says why it resumes or not, as the seed's resume_decision event: the §7 code
    // (restart_scheduled, circuit_open, ... stay in status.lastDecision, the Event and status.history)
    // (only for a restart: an escalation or a wait is audited with its own code, the resume verdict aside)
    ReasonCode audited = eligible != null && resumeCode != null && action == DecisionAction.Restart ? resumeCode : code;
    audit = new AuditRecord(eligible != null ? "resume_decision" : "restart_decision", obs.namespace(),
        obs.instance(), state.run, cls, eligible, audited, cooldownRemaining, state.attempt, maxAttempts, now, actor);
  }

  /**
   * The retries the current failure sequence allows, for a decision that is not a failure's own (a
   * requested or ignored restart, a refused create): what the sequence's last failure decision said, or
   * the policy's maxRetries when no sequence is open.
   */
  int sequenceMaxAttempts() {
    DecisionInfo last = state.lastDecision;
    return state.attempt > 0 && last != null && last.maxAttempts() > 0 ? last.maxAttempts() : policy.maxRetries();
  }

  /** Adds the why in words to the decision just made (status.lastDecision.message). */
  void explain(String message) {
    DecisionInfo d = state.lastDecision;
    state.lastDecision = new DecisionInfo(d.action(), d.reasonCode(), d.attempt(), d.maxAttempts(), d.finalAttempt(),
        d.delaySeconds(), d.at(), Bounds.oneLine(message, Bounds.MESSAGE_BYTES));
  }

  /** Records the ending of the current run in status.history (keyed by pod UID: counted once). */
  void recordRunEnd(String podUid, RunOutcome outcome, InterruptionClass cls, Integer exitCode, ReasonCode code) {
    state.addHistory(new RunInfo(state.run, state.currentPod, podUid, runStartedAt(), now, outcome, cls,
        exitCode, code));
  }

  /**
   * When the current run started: when this operator saw it running, else (it ended before it was seen
   * running) its pod's own start, else when its restart made it; never after its end.
   */
  private Instant runStartedAt() {
    if (state.runStartedAt != null) {
      return state.runStartedAt;
    }
    // the kubelet's start is the node's clock: never before the operator made the pod
    Instant podStart = observedCurrent == null || observedCurrent.startedAt() == null ? null
        : observedCurrent.startedBy(now);
    RestartInfo restart = replacedRestart != null ? replacedRestart : state.lastRestart;
    Instant made = restart != null && state.currentPod != null && state.currentPod.equals(restart.pod())
        ? restart.startedAt() : null;
    Instant started = podStart != null ? podStart : made;
    // pod times have whole seconds, read as the latest instant they can mean: a run ended within that second
    return started == null || !started.isAfter(now) ? started : now;
  }

  /** Terminal phases Escalated and Failed: the condition message and Event carry context and a checklist. */
  void stop(Phase phase, TerminalReason terminal, ReasonCode code) {
    state.phase = phase;
    state.terminalReason = terminal;
    state.nextRestartAt = null;
    state.waitingFor = null; // it waits for nothing now, a shared dependency included
    reasonCode = code;
    notice(Notice.warning(EventReason.Escalated, escalationMessage(code)));
  }

  String escalationMessage(ReasonCode code) {
    return EscalationNote.of(state, obs.namespace(), obs.instance(), code);
  }

  /** Schedules the next run at {@code at} (now or later), phase Backoff. */
  void scheduleRestart(Instant at, RestartInfo restart) {
    if (replacedRestart == null) {
      replacedRestart = state.lastRestart;
    }
    state.phase = Phase.Backoff;
    state.nextRestartAt = at;
    state.lastRestart = restart;
  }

  /** The restart that made the current run, when this decision already scheduled the next one. */
  private RestartInfo replacedRestart;

  Decision build() {
    if (liveness == null || (state.phase != Phase.Running && state.phase != Phase.Starting)) {
      // a run this decision ended is judged no more: Ready says what the phase it left is waiting for
      liveness = idleLiveness();
    }
    // what the Ready condition's lastTransitionTime will say once status is written (the shell reads it back)
    state.readySince = !liveness.ready() ? null : state.readySince != null ? state.readySince : now;
    Decision d = new Decision(state, deletions(), Optional.ofNullable(start), !obs.leaseExists(), deferStatus,
        startsExisting, reasonCode, Optional.ofNullable(wakeAt), notices, state.circuit.trips() - tripsBefore,
        Optional.ofNullable(audit), liveness);
    if (audit != null) {
      return d;
    }
    // every decision that tells something (a run started, a sequence ended, a request refused, a stale
    // heartbeat) is an audit line too (api.md §8), named after its Event's reason
    return d.event().map(e -> new Decision(d.state(), d.deletions(), d.start(), d.createLease(), d.deferStatus(),
        d.startsExisting(), d.reasonCode(), d.wakeAt(), d.notices(), d.circuitTrips(), Optional.of(auditOf(e)),
        d.liveness())).orElse(d);
  }

  private AuditRecord auditOf(Notice event) {
    DecisionInfo last = state.lastDecision;
    RestartInfo restart = state.lastRestart;
    InterruptionClass cls = restart == null ? null : restart.interruptionClass() != null ? restart.interruptionClass()
        : restart.kind() == RestartKind.Failure && state.lastFailure != null ? state.lastFailure.interruptionClass()
        : null;
    String actor = event.reason() == EventReason.RestartRequested ? "operator" : restart == null ? "system"
        : switch (restart.kind()) {
          case Manual, Resume, Unsuspend -> "operator";
          case RestartRequest -> "agent";
          default -> "system";
        };
    // a run started from its checkpoint is told as a ResumeDecision, but the resume was decided (and audited with
    // its verdict) at the failure: this line is the start's
    EventReason named = event.reason() == EventReason.ResumeDecision && start != null ? EventReason.RestartStarted
        : event.reason();
    // eligible: whether the run this line is about resumes from a checkpoint (its resume was found eligible)
    boolean resumes = restart != null && restart.resumeCheckpoint() != null;
    return new AuditRecord(named.auditEvent(), obs.namespace(), obs.instance(), state.run, cls, resumes,
        reasonCode != null ? reasonCode : last == null ? null : last.reasonCode(), 0, state.attempt,
        sequenceMaxAttempts(), now, actor);
  }

  /**
   * The pods to delete: the current run's when the decision ends it or it ended while its pod lives on
   * (sidecars) and a next run is to follow, and once a run has started (is running, or ran and ended), the
   * finished pods of earlier runs (kept until then for logs).
   */
  private List<PodDeletion> deletions() {
    List<PodDeletion> out = new ArrayList<>();
    PodView current = observedCurrent;
    if (current != null && current.isLive() && current.stage() != PodView.Stage.TERMINATING
        && (endRun || (obs.ending().isPresent() && !keptForLogs()))) {
      out.add(new PodDeletion(current.name(), current.uid(), endRun ? PodDeletion.Why.END_RUN
          : PodDeletion.Why.ENDED_BUT_LIVE));
    }
    // a finished pod is kept for logs until the next run has started: is running, or ran and ended
    boolean currentStarted = state.phase == Phase.Running || obs.ending().isPresent()
        || (current != null && current.stage() == PodView.Stage.FINISHED);
    if (currentStarted) {
      for (PodFacts p : obs.earlierRuns()) {
        out.add(new PodDeletion(p.name(), p.uid(), PodDeletion.Why.FINISHED_EARLIER_RUN));
      }
    }
    if (state.phase == Phase.Running) {
      if (replaced != null && replaced.stage() == PodView.Stage.FINISHED) {
        out.add(new PodDeletion(replaced.name(), replaced.uid(), PodDeletion.Why.FINISHED_EARLIER_RUN));
      }
    }
    return out;
  }

  /**
   * A run that ended in Succeeded, Failed or Escalated is followed by no next run: its pod, sidecars still
   * running, is kept for kubectl logs (the Escalated message points there) like any finished pod; a resume
   * leaves the phase, and the pod is deleted so that the next run can start.
   */
  private boolean keptForLogs() {
    return state.phase == Phase.Succeeded || state.phase == Phase.Failed || state.phase == Phase.Escalated;
  }

  private Liveness idleLiveness() {
    return switch (state.phase) {
      case Escalated, Failed -> new Liveness(false, LivenessGate.RESTART_LIMIT, escalationMessage(
          state.lastDecision != null ? state.lastDecision.reasonCode() : reasonCode));
      case Succeeded -> new Liveness(false, LivenessGate.POD_NOT_RUNNING, "the agent exited cleanly");
      case Suspended -> new Liveness(false, LivenessGate.POD_NOT_RUNNING, "suspended (spec.suspend)");
      case Backoff, CircuitOpen -> LivenessGate.betweenRuns(state);
      case Starting -> new Liveness(false, LivenessGate.POD_NOT_RUNNING, "pod " + state.currentPod
          + " is not running yet");
      default -> new Liveness(false, LivenessGate.POD_NOT_RUNNING, "no pod running");
    };
  }
}

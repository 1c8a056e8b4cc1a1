package dev.respawn.policy;

import dev.respawn.api.v1alpha1.OperatorRequest;
import java.util.EnumMap;
import java.util.Map;

import dev.respawn.api.v1alpha1.HealthVerdict;
import dev.respawn.api.v1alpha1.InterruptionClass;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.api.v1alpha1.TerminalReason;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The durable state of one AgentInstance as the decision core sees it: the values it reads from
 * and writes to status. {@link RestartEvaluator#decide} never changes the state it is given; it
 * works on a {@link #copy()} and returns that.
 */
public final class InstanceState {
  public Phase phase = Phase.Pending;
  public int run;
  public String currentPod;
  public Instant runStartedAt;
  public int attempt;
  public Instant firstFailureAt;
  public int restarts;
  public Instant nextRestartAt;
  public FailureInfo lastFailure;
  public DecisionInfo lastDecision;
  public CircuitSnapshot circuit = CircuitSnapshot.CLOSED;
  public HeartbeatInfo heartbeat;
  public ResumeInfo resume = ResumeInfo.NONE;
  public RestartInfo lastRestart;
  public TerminalReason terminalReason;
  public List<Instant> recentRestarts = new ArrayList<>();
  public List<RunInfo> history = new ArrayList<>();
  /** The id of the last request of each kind acted on (status.handledRequests). */
  public Map<OperatorRequest, String> handledRequests = new EnumMap<>(OperatorRequest.class);
  /** Ids handled before the last one, oldest first, at most {@link Bounds#EARLIER_REQUESTS} per kind. */
  public Map<OperatorRequest, List<String>> earlierRequests = new EnumMap<>(OperatorRequest.class);
  /** The last request of a kind, when it was refused (status.refusedRequests); dropped when one is acted on. */
  public Map<OperatorRequest, RefusedRequest> refusedRequests = new EnumMap<>(OperatorRequest.class);
  /** The shared dependency this instance waits for (phase CircuitOpen) or probes, or null. */
  public String waitingFor;
  /**
   * Since when the instance is Ready, else null: in status, its Ready condition's lastTransitionTime while True
   * (the shell writes the condition and reads this back). "Healthy for resetAfter" counts from it (api.md §3
   * step 5). It changes only with Ready, which is written anyway, so it is not part of {@link #equals}.
   */
  public Instant readySince;

  /** A copy whose lists can be changed without touching this one (the records are immutable). */
  public InstanceState copy() {
    InstanceState c = new InstanceState();
    c.phase = phase;
    c.run = run;
    c.currentPod = currentPod;
    c.runStartedAt = runStartedAt;
    c.attempt = attempt;
    c.firstFailureAt = firstFailureAt;
    c.restarts = restarts;
    c.nextRestartAt = nextRestartAt;
    c.lastFailure = lastFailure;
    c.lastDecision = lastDecision;
    c.circuit = circuit;
    c.heartbeat = heartbeat;
    c.resume = resume;
    c.lastRestart = lastRestart;
    c.terminalReason = terminalReason;
    c.recentRestarts = new ArrayList<>(recentRestarts);
    c.history = new ArrayList<>(history);
    c.handledRequests = new EnumMap<>(OperatorRequest.class);
    c.handledRequests.putAll(handledRequests);
    c.earlierRequests = new EnumMap<>(OperatorRequest.class);
    earlierRequests.forEach((kind, ids) -> c.earlierRequests.put(kind, new ArrayList<>(ids)));
    c.refusedRequests = new EnumMap<>(OperatorRequest.class);
    c.refusedRequests.putAll(refusedRequests);
    c.waitingFor = waitingFor;
    c.readySince = readySince;
    return c;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof InstanceState s && phase == s.phase && run == s.run && attempt == s.attempt
        && restarts == s.restarts && Objects.equals(currentPod, s.currentPod)
        && Objects.equals(runStartedAt, s.runStartedAt) && Objects.equals(firstFailureAt, s.firstFailureAt)
        && Objects.equals(nextRestartAt, s.nextRestartAt) && Objects.equals(lastFailure, s.lastFailure)
        && Objects.equals(lastDecision, s.lastDecision) && Objects.equals(circuit, s.circuit)
        && Objects.equals(heartbeat, s.heartbeat) && Objects.equals(resume, s.resume)
        && Objects.equals(lastRestart, s.lastRestart) && terminalReason == s.terminalReason
        && recentRestarts.equals(s.recentRestarts) && history.equals(s.history)
        && handledRequests.equals(s.handledRequests) && earlierRequests.equals(s.earlierRequests)
        && refusedRequests.equals(s.refusedRequests) && Objects.equals(waitingFor, s.waitingFor);
  }

  /** Whether nothing was decided for the instance yet: no run, no pod, no decision in status. */
  public boolean beforeFirstDecision() {
    return run == 0 && currentPod == null && lastDecision == null;
  }

  /** Whether a request of this kind with this id was acted on (the last one, or one of the earlier ones). */
  public boolean handled(OperatorRequest kind, String id) {
    return id.equals(handledRequests.get(kind)) || earlierRequests.getOrDefault(kind, List.of()).contains(id);
  }

  /** Records a request as acted on; the one before it joins the earlier ones (the oldest go first). */
  public void handle(OperatorRequest kind, String id) {
    refusedRequests.remove(kind);
    String before = handledRequests.put(kind, id);
    if (before != null && !before.equals(id)) {
      List<String> earlier = new ArrayList<>(earlierRequests.getOrDefault(kind, List.of()));
      earlier.remove(before);
      earlier.add(before);
      while (earlier.size() > Bounds.EARLIER_REQUESTS) {
        earlier.remove(0);
      }
      earlierRequests.put(kind, earlier);
    }
  }
  /** Records a request as handled by refusing it: why is kept until a later request of its kind is acted on. */
  public void refuse(OperatorRequest kind, String id, String why) {
    handle(kind, id);
    refusedRequests.put(kind, new RefusedRequest(id, Bounds.truncateUtf8(why, Bounds.MESSAGE_BYTES)));
  }

  /** status.refusedRequests: a refused request's id and why. */
  public record RefusedRequest(String id, String message) {}


  @Override
  public int hashCode() {
    return Objects.hash(phase, run, currentPod, attempt, restarts, nextRestartAt, circuit, lastDecision);
  }

  @Override
  public String toString() {
    return "InstanceState{phase=" + phase + ", run=" + run + ", pod=" + currentPod + ", attempt=" + attempt
        + ", restarts=" + restarts + ", nextRestartAt=" + nextRestartAt + ", circuit=" + circuit.state()
        + ", terminal=" + terminalReason + ", decision=" + lastDecision + "}";
  }

  /** True when the run ending of this pod UID was already recorded (each failure counts once). */
  public boolean hasRecorded(String podUid) {
    return podUid != null && history.stream().anyMatch(r -> podUid.equals(r.podUid()));
  }

  /** Appends a finished run, keeping the last {@link Bounds#HISTORY_ENTRIES}. */
  public void addHistory(RunInfo r) {
    history.add(r);
    while (history.size() > Bounds.HISTORY_ENTRIES) {
      history.remove(0);
    }
  }

  /**
   * status.lastFailure; {@code podDeleted}: the operator ended the run by deleting its live pod (a stalled or
   * crashed heartbeat, the startup grace over, an expired HalfOpen trial), so that pod's logs went with it.
   */
  public record FailureInfo(String pod, String podUid, InterruptionClass interruptionClass, String failureReason,
      String reason, Integer exitCode, String message, String rule, boolean retryable, Instant at,
      String dependency, boolean probe, boolean podDeleted) {

    /** A failure blamed on no shared dependency, of a run whose pod ended by itself. */
    public FailureInfo(String pod, String podUid, InterruptionClass interruptionClass, String failureReason,
        String reason, Integer exitCode, String message, String rule, boolean retryable, Instant at,
        String dependency) {
      this(pod, podUid, interruptionClass, failureReason, reason, exitCode, message, rule, retryable, at, dependency,
          false, false);
    }

    /** The same failure, blamed on a shared dependency; {@code probe}: it ended a probe run of it. */
    public FailureInfo blamedOn(String name, boolean probe) {
      return new FailureInfo(pod, podUid, interruptionClass, failureReason, reason, exitCode, message, rule, retryable,
          at, name, probe, podDeleted);
    }
  }

  /** status.lastDecision; {@code message} says why in words where the reason code alone does not (else null). */
  public record DecisionInfo(DecisionAction action, ReasonCode reasonCode, int attempt, int maxAttempts, boolean finalAttempt,
      double delaySeconds, Instant at, String message) {}

  /**
   * status.heartbeat: the verdict, since when it holds, and the agent's detail. It changes with the
   * verdict or the detail, never per renewal (when renewals were seen is kept in the operator's memory).
   */
  public record HeartbeatInfo(HealthVerdict verdict, Instant since, String detail) {}

  /** status.resume. */
  public record ResumeInfo(String checkpoint, String checkpointStatus, Boolean idempotent, Boolean eligible,
      ReasonCode reasonCode, long cooldownRemainingSeconds, int attempts) {
    public static final ResumeInfo NONE = new ResumeInfo(null, null, null, null, null, 0, 0);

    /**
     * A resumed run started: one more attempt, no cooldown left to wait for, and a verdict that was blocked only by
     * that cooldown is now {@code resume_allowed} (api.md §2 shows a resumed run so; the decision that waited keeps
     * {@code resume_blocked_cooldown} in lastDecision and history).
     */
    public ResumeInfo started() {
      return started(true);
    }

    /**
     * As {@link #started()}; {@code counted} false for the checkpoint a resume request hands over: it starts a new
     * lifecycle, no failure sequence is open, so it uses none of the next sequence's resume attempts (api.md §1, §6).
     */
    public ResumeInfo started(boolean counted) {
      ReasonCode now = reasonCode == ReasonCode.RESUME_BLOCKED_COOLDOWN ? ReasonCode.RESUME_ALLOWED : reasonCode;
      return new ResumeInfo(checkpoint, checkpointStatus, idempotent, eligible, now, 0, counted ? attempts + 1 : attempts);
    }

    public ResumeInfo withAttempts(int a) {
      return new ResumeInfo(checkpoint, checkpointStatus, idempotent, eligible, reasonCode,
          cooldownRemainingSeconds, a);
    }
  }

  /**
   * status.lastRestart; pod and startedAt stay null until the next run's pod is created.
   */
  public record RestartInfo(RestartKind kind, String reason, String previousPod, String pod, Instant requestedAt,
      Instant startedAt, String requestId, String resumeCheckpoint, InterruptionClass interruptionClass) {

    public RestartInfo started(String newPod, Instant at) {
      return new RestartInfo(kind, reason, previousPod, newPod, requestedAt, at, requestId, resumeCheckpoint,
          interruptionClass);
    }
  }

  /** One entry of status.history. */
  public record RunInfo(int run, String pod, String podUid, Instant startedAt, Instant endedAt, RunOutcome outcome,
      InterruptionClass interruptionClass, Integer exitCode, ReasonCode reasonCode) {}
}

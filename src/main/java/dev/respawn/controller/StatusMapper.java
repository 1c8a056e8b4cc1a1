package dev.respawn.controller;

import dev.respawn.api.v1alpha1.AgentInstanceStatus;
import dev.respawn.api.v1alpha1.CircuitBreakerStatus;
import dev.respawn.api.v1alpha1.DecisionStatus;
import dev.respawn.api.v1alpha1.FailureStatus;
import dev.respawn.api.v1alpha1.StatusCondition;
import dev.respawn.api.v1alpha1.OperatorRequest;
import dev.respawn.api.v1alpha1.RefusedRequestStatus;
import dev.respawn.api.v1alpha1.HeartbeatStatus;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.api.v1alpha1.RestartRecord;
import dev.respawn.api.v1alpha1.ResumeStatus;
import dev.respawn.api.v1alpha1.RunRecord;
import dev.respawn.api.v1alpha1.Timestamps;
import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.policy.Bounds;
import dev.respawn.policy.CircuitSnapshot;
import dev.respawn.policy.InstanceState;
import dev.respawn.policy.DecisionAction;
import dev.respawn.policy.ReasonCode;
import dev.respawn.policy.RestartKind;
import dev.respawn.policy.RunOutcome;
import dev.respawn.policy.InstanceState.DecisionInfo;
import dev.respawn.policy.InstanceState.FailureInfo;
import dev.respawn.policy.InstanceState.HeartbeatInfo;
import dev.respawn.policy.InstanceState.RefusedRequest;
import dev.respawn.policy.InstanceState.RestartInfo;
import dev.respawn.policy.InstanceState.ResumeInfo;
import dev.respawn.policy.InstanceState.RunInfo;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Objects;

/** Maps the decision core's {@link InstanceState} to AgentInstance.status and back, losslessly. */
public final class StatusMapper {
  private StatusMapper() {}

  /** The core's view of a status (a missing status is a new instance). */
  public static InstanceState toState(AgentInstanceStatus st) {
    InstanceState s = new InstanceState();
    if (st == null) {
      return s;
    }
    s.phase = st.phase == null ? Phase.Pending : st.phase;
    s.run = st.run == null ? 0 : st.run; // pods are matched to it by their run label: read as written
    s.currentPod = st.currentPod;
    s.runStartedAt = time(st.runStartedAt);
    s.attempt = orZero(st.attempt);
    s.firstFailureAt = time(st.firstFailureAt);
    s.restarts = orZero(st.restarts);
    s.nextRestartAt = time(st.nextRestartAt);
    s.waitingFor = st.waitingFor;
    StatusCondition ready = Conditions.find(st.conditions, "Ready");
    s.readySince = ready != null && "True".equals(ready.status) ? time(ready.lastTransitionTime) : null;
    if (st.lastFailure != null) {
      FailureStatus f = st.lastFailure;
      s.lastFailure = new FailureInfo(f.pod, f.podUid, f.failureClass, f.failureReason, f.reason, f.exitCode, f.message,
          f.rule, Boolean.TRUE.equals(f.retryable), time(f.at), f.dependency, Boolean.TRUE.equals(f.probe),
          Boolean.TRUE.equals(f.podDeleted));
    }
    if (st.lastDecision != null) {
      DecisionStatus d = st.lastDecision;
      s.lastDecision = new DecisionInfo(named(DecisionAction.class, d.action), code(d.reasonCode), orZero(d.attempt), orZero(d.maxAttempts),
          Boolean.TRUE.equals(d.finalAttempt), d.delaySeconds == null ? 0 : d.delaySeconds, time(d.at),
          Bounds.truncateUtf8(d.message, Bounds.MESSAGE_BYTES));
    }
    if (st.circuitBreaker != null) {
      CircuitBreakerStatus c = st.circuitBreaker;
      s.circuit = new CircuitSnapshot(c.state == null ? CircuitState.Closed : c.state, times(c.failureTimes),
          orZero(c.trips), time(c.openedAt), time(c.halfOpenAt), time(c.lastSuccessAt), time(c.lastFailureAt));
    }
    if (st.heartbeat != null) {
      HeartbeatStatus h = st.heartbeat;
      s.heartbeat = new HeartbeatInfo(h.verdict, time(h.since), h.detail);
    }
    if (st.resume != null) {
      ResumeStatus r = st.resume;
      s.resume = new ResumeInfo(r.checkpoint, r.checkpointStatus, r.idempotent, r.eligible, code(r.reasonCode),
          r.cooldownRemainingSeconds == null ? 0 : r.cooldownRemainingSeconds, orZero(r.attempts));
    }
    if (st.lastRestart != null) {
      RestartRecord r = st.lastRestart;
      s.lastRestart = new RestartInfo(named(RestartKind.class, r.kind), r.reason, r.previousPod, r.pod, time(r.requestedAt), time(r.startedAt),
          r.requestId, r.resumeCheckpoint, r.interruptionClass);
    }
    s.terminalReason = st.terminalReason;
    s.recentRestarts = new ArrayList<>(times(st.recentRestarts));
    for (RunRecord r : st.history == null ? List.<RunRecord>of() : st.history) {
      if (r == null) {
        continue; // a null item (possible only where no schema is enforced) says nothing
      }
      s.history.add(new RunInfo(r.run == null ? 0 : r.run, r.pod, r.podUid, time(r.startedAt), time(r.endedAt), named(RunOutcome.class, r.outcome),
          r.failureClass, r.exitCode, code(r.reasonCode)));
    }
    if (st.handledRequests != null) {
      for (OperatorRequest kind : OperatorRequest.values()) {
        Optional.ofNullable(st.handledRequests.get(kind.statusKey())).ifPresent(id -> s.handledRequests.put(kind, id));
      }
    }
    if (st.refusedRequests != null) {
      for (OperatorRequest kind : OperatorRequest.values()) {
        RefusedRequestStatus r = st.refusedRequests.get(kind.statusKey());
        if (r != null && r.id != null) {
          s.refusedRequests.put(kind, new RefusedRequest(r.id, r.message));
        }
      }
    }
    if (st.earlierRequests != null) {
      for (OperatorRequest kind : OperatorRequest.values()) {
        List<String> ids = st.earlierRequests.get(kind.statusKey());
        ids = ids == null ? List.of() : ids.stream().filter(Objects::nonNull).toList();
        if (!ids.isEmpty()) {
          s.earlierRequests.put(kind, new ArrayList<>(ids.subList(Math.max(0, ids.size() - Bounds.EARLIER_REQUESTS),
              ids.size())));
        }
      }
    }
    return s;
  }

  /** Writes the state into a new status (conditions and observedGeneration are set by the caller). */
  public static AgentInstanceStatus toStatus(InstanceState s) {
    AgentInstanceStatus st = new AgentInstanceStatus();
    st.phase = s.phase;
    st.run = s.run;
    st.currentPod = s.currentPod;
    st.runStartedAt = text(s.runStartedAt);
    st.attempt = s.attempt;
    st.firstFailureAt = text(s.firstFailureAt);
    st.restarts = s.restarts;
    st.nextRestartAt = text(s.nextRestartAt);
    st.waitingFor = s.waitingFor;
    if (s.lastFailure != null) {
      FailureInfo f = s.lastFailure;
      FailureStatus fs = new FailureStatus();
      fs.pod = f.pod();
      fs.podUid = f.podUid();
      fs.failureClass = f.interruptionClass();
      fs.failureReason = f.failureReason();
      fs.reason = f.reason();
      fs.exitCode = f.exitCode();
      fs.message = f.message();
      fs.rule = f.rule();
      fs.retryable = f.retryable();
      fs.at = text(f.at());
      fs.dependency = f.dependency();
      fs.probe = f.probe() ? Boolean.TRUE : null; // shown only when it was one
      fs.podDeleted = f.podDeleted() ? Boolean.TRUE : null; // shown only when the operator deleted it
      st.lastFailure = fs;
    }
    if (s.lastDecision != null) {
      DecisionInfo d = s.lastDecision;
      DecisionStatus ds = new DecisionStatus();
      ds.action = d.action() == null ? null : d.action().name();
      ds.reasonCode = text(d.reasonCode());
      ds.attempt = d.attempt();
      ds.maxAttempts = d.maxAttempts();
      ds.finalAttempt = d.finalAttempt();
      ds.delaySeconds = d.delaySeconds();
      ds.at = text(d.at());
      ds.message = d.message();
      st.lastDecision = ds;
    }
    CircuitSnapshot c = s.circuit;
    CircuitBreakerStatus cs = new CircuitBreakerStatus();
    cs.state = c.state();
    cs.failureCount = c.failureTimes().size();
    cs.trips = c.trips();
    cs.openedAt = text(c.openedAt());
    cs.halfOpenAt = text(c.halfOpenAt());
    cs.lastSuccessAt = text(c.lastSuccessAt());
    cs.lastFailureAt = text(c.lastFailureAt());
    cs.failureTimes = texts(c.failureTimes());
    st.circuitBreaker = cs;
    if (s.heartbeat != null) {
      HeartbeatStatus h = new HeartbeatStatus();
      h.verdict = s.heartbeat.verdict();
      h.since = text(s.heartbeat.since());
      h.detail = s.heartbeat.detail();
      st.heartbeat = h;
    }
    if (!s.resume.equals(ResumeInfo.NONE)) {
      ResumeInfo r = s.resume;
      ResumeStatus rs = new ResumeStatus();
      rs.checkpoint = r.checkpoint();
      rs.checkpointStatus = r.checkpointStatus();
      rs.idempotent = r.idempotent();
      rs.eligible = r.eligible();
      rs.reasonCode = text(r.reasonCode());
      rs.cooldownRemainingSeconds = r.cooldownRemainingSeconds();
      rs.attempts = r.attempts();
      st.resume = rs;
    }
    if (s.lastRestart != null) {
      RestartInfo r = s.lastRestart;
      RestartRecord rr = new RestartRecord();
      rr.kind = r.kind() == null ? null : r.kind().name();
      rr.reason = r.reason();
      rr.previousPod = r.previousPod();
      rr.pod = r.pod();
      rr.requestedAt = text(r.requestedAt());
      rr.startedAt = text(r.startedAt());
      rr.requestId = r.requestId();
      rr.resumeCheckpoint = r.resumeCheckpoint();
      rr.interruptionClass = r.interruptionClass();
      st.lastRestart = rr;
    }
    st.terminalReason = s.terminalReason;
    st.recentRestarts = texts(s.recentRestarts);
    st.history = new ArrayList<>();
    for (RunInfo r : s.history) {
      RunRecord rr = new RunRecord();
      rr.run = r.run();
      rr.pod = r.pod();
      rr.podUid = r.podUid();
      rr.startedAt = text(r.startedAt());
      rr.endedAt = text(r.endedAt());
      rr.outcome = r.outcome() == null ? null : r.outcome().name();
      rr.failureClass = r.interruptionClass();
      rr.exitCode = r.exitCode();
      rr.reasonCode = text(r.reasonCode());
      st.history.add(rr);
    }
    if (!s.handledRequests.isEmpty()) {
      st.handledRequests = new java.util.TreeMap<>();
      s.handledRequests.forEach((kind, id) -> st.handledRequests.put(kind.statusKey(), id));
    }
    if (!s.refusedRequests.isEmpty()) {
      st.refusedRequests = new java.util.TreeMap<>();
      s.refusedRequests.forEach((kind, r) -> {
        RefusedRequestStatus rs = new RefusedRequestStatus();
        rs.id = r.id();
        rs.message = r.message();
        st.refusedRequests.put(kind.statusKey(), rs);
      });
    }
    if (!s.earlierRequests.isEmpty()) {
      st.earlierRequests = new java.util.TreeMap<>();
      s.earlierRequests.forEach((kind, ids) -> st.earlierRequests.put(kind.statusKey(), List.copyOf(ids)));
    }
    return st;
  }

  static String text(Instant t) {
    return Timestamps.format(t);
  }

  /** A status timestamp; null when absent or unreadable (a hand-edited status never fails a reconcile). */
  static Instant time(String t) {
    return Timestamps.parse(t);
  }

  private static List<String> texts(List<Instant> times) {
    return times.stream().map(Instant::toString).toList();
  }

  private static List<Instant> times(List<String> texts) {
    return texts == null ? List.of() : texts.stream().map(StatusMapper::time).filter(Objects::nonNull).toList();
  }

  /**
   * A count kept in status (attempt, restarts, trips, ...): missing is 0; one a hand edit made negative, or too
   * large to count on from (the schema allows any int32), is taken as 0 or {@link Bounds#COUNT_LIMIT}, so that
   * the next decision neither throws (a backoff of attempt -4) nor wraps around. Not the run number, which names
   * pods and is matched against their labels.
   */
  private static int orZero(Integer i) {
    return i == null || i < 0 ? 0 : Math.min(i, Bounds.COUNT_LIMIT);
  }

  private static ReasonCode code(String text) {
    return ReasonCode.of(text).orElse(null);
  }

  private static String text(ReasonCode code) {
    return code == null ? null : code.code();
  }

  /** The constant of that name; null for null or a name this version does not know. */
  private static <E extends Enum<E>> E named(Class<E> type, String name) {
    for (E e : type.getEnumConstants()) {
      if (e.name().equals(name)) {
        return e;
      }
    }
    return null;
  }
}

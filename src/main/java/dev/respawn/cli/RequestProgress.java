package dev.respawn.cli;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentInstanceStatus;
import dev.respawn.api.v1alpha1.OperatorRequest;
import java.util.Map;
import dev.respawn.api.v1alpha1.RestartRecord;
import dev.respawn.api.v1alpha1.RunRecord;
import dev.respawn.policy.ReasonCode;

/**
 * Where one restart or resume request stands, judged from the instance's status alone: the operator
 * records a handled id in status.handledRequests, and the restart it caused in status.lastRestart.
 */
record RequestProgress(State state, String message, AgentInstance instance, RunRecord followed) {
  RequestProgress(State state, String message, AgentInstance instance) {
    this(state, message, instance, null);
  }

  enum State {
    /** Not handled yet, or handled and the new pod not created yet. */
    PENDING,
    /** The new run started: lastRestart.requestId is the id and lastRestart.startedAt is set. */
    STARTED,
    /** Handled without a restart (terminal phase, suspended, or superseded). */
    REFUSED,
    /** Accepted, then the instance ended up terminal before a new run started, or was deleted. */
    FAILED,
    /** The wait ran out. */
    TIMED_OUT,
    /** The request was made, but the API server would not let the wait go on (e.g. no right to watch). */
    WAIT_FAILED;

    boolean done() {
      return this != PENDING;
    }
  }

  /** @param resume true for a respawn.dev/resume request, false for respawn.dev/restart */
  static RequestProgress of(AgentInstance instance, String id, boolean resume) {
    return of(instance, id, resume, Integer.MAX_VALUE);
  }

  /**
   * @param runBefore status.run when the request was made: a run after it that status shows in its history (the
   *     operator wrote its start together with its end, or the next failure's restart replaced lastRestart)
   *     is the restart the request caused, though lastRestart no longer names the request
   */
  static RequestProgress of(AgentInstance instance, String id, boolean resume, int runBefore) {
    if (instance == null) {
      return new RequestProgress(State.FAILED, "the agentinstance was deleted", null);
    }
    String name = instance.getMetadata().getName();
    AgentInstanceStatus st = instance.getStatus() == null ? new AgentInstanceStatus() : instance.getStatus();
    RestartRecord last = st.lastRestart;
    boolean ours = last != null && id.equals(last.requestId);
    if (ours && last.startedAt != null && !last.startedAt.isEmpty()) {
      return new RequestProgress(State.STARTED, last.previousPod == null ? "pod " + last.pod + " started"
          : "pod " + last.pod + " replaces " + last.previousPod, instance);
    }
    Map<String, String> handled = st.handledRequests == null ? Map.of() : st.handledRequests;
    String kind = (resume ? OperatorRequest.RESUME : OperatorRequest.RESTART).statusKey();
    String handledId = handled.get(kind);
    if (id.equals(handledId) && !ours) {
      if (supersededByResume(st, resume)) {
        return new RequestProgress(State.REFUSED, "restart request " + id + " was superseded by resume request "
            + last.requestId, instance);
      }
      RunRecord followed = runAfter(st, runBefore);
      if (followed != null) {
        return new RequestProgress(State.STARTED, "pod " + followed.pod + " started" + (followed.run > 1
            ? " and replaced " + name + "-" + (followed.run - 1) : "") + "; it has ended since (phase " + st.phase
            + ")", instance, followed);
      }
      String why = st.phase == null ? "no restart followed"
          : st.phase.isTerminal() ? "phase " + st.phase + " is terminal"
          + (resume ? "" : "; use kubectl respawn resume " + name + " --force")
          : "no restart followed (phase " + st.phase + ")";
      return new RequestProgress(State.REFUSED, kind + " request " + id + " refused: " + why, instance);
    }
    if (ours && st.phase != null && st.phase.isTerminal()) {
      String code = st.lastDecision == null ? null : st.lastDecision.reasonCode;
      return new RequestProgress(State.FAILED, kind + " request " + id + " was accepted, but the instance is "
          + st.phase + (code == null ? "" : " (" + code + ")") + " before a new run started", instance);
    }
    java.util.List<String> earlier = st.earlierRequests == null ? java.util.List.of()
        : st.earlierRequests.getOrDefault(kind, java.util.List.of());
    if (!ours && handledId != null && earlier.contains(id)) {
      // acted on, then another request of the kind came (before this one's restart showed in status): that one's
      // outcome is this one's
      RequestProgress later = of(instance, handledId, resume, runBefore);
      return new RequestProgress(later.state(), kind + " request " + id + " was handled, then request " + handledId
          + " came: " + later.message(), instance, later.followed());
    }
    String where = ours ? "accepted; waiting for the new pod (phase " + st.phase + ")"
        : InstanceRefusal.of(st).map(r -> "not acted on: the operator acts on no request while the instance is "
            + "refused (" + r.reason() + ": " + r.message() + ")")
            .orElse("not handled by the operator yet (is it running?)");
    return new RequestProgress(State.PENDING, kind + " request " + id + " " + where, instance);
  }

  /**
   * A restart request handled in the decision that acted on a resume request: the resume superseded it (status shows
   * the resume's restart).
   */
  private static boolean supersededByResume(AgentInstanceStatus st, boolean resume) {
    RestartRecord last = st.lastRestart;
    String handledResume = st.handledRequests == null ? null : st.handledRequests.get(OperatorRequest.RESUME.statusKey());
    return !resume && last != null && dev.respawn.policy.RestartKind.Resume.name().equals(last.kind)
        && last.requestId != null && last.requestId.equals(handledResume);
  }

  /**
   * Whether status shows that the operator handled request {@code id} of its kind already (acted on it, or refused it):
   * sent again, it would be ignored, and it would write over a later request still waiting.
   */
  static boolean known(AgentInstance instance, String id, boolean resume) {
    AgentInstanceStatus st = instance.getStatus() == null ? new AgentInstanceStatus() : instance.getStatus();
    String kind = (resume ? OperatorRequest.RESUME : OperatorRequest.RESTART).statusKey();
    var refused = st.refusedRequests == null ? null : st.refusedRequests.get(kind);
    return refused != null && id.equals(refused.id)
        || st.handledRequests != null && id.equals(st.handledRequests.get(kind))
        || st.earlierRequests != null && st.earlierRequests.getOrDefault(kind, java.util.List.of()).contains(id);
  }

  /**
   * Where a request stands that was sent before (its id given again, {@code --request-id}), when the operator handled
   * it already: refused (status.refusedRequests), acted on (its restart started, or the instance ended up terminal
   * before it did), superseded, or handled with its restart no longer in status. Empty when it was not handled yet, or
   * was accepted and its new pod is still to come: it is waited for as any request.
   */
  static java.util.Optional<RequestProgress> handledBefore(AgentInstance instance, String id, boolean resume) {
    AgentInstanceStatus st = instance.getStatus() == null ? new AgentInstanceStatus() : instance.getStatus();
    String kind = (resume ? OperatorRequest.RESUME : OperatorRequest.RESTART).statusKey();
    var refused = st.refusedRequests == null ? null : st.refusedRequests.get(kind);
    if (refused != null && id.equals(refused.id)) {
      return java.util.Optional.of(new RequestProgress(State.REFUSED, kind + " request " + id + " was refused: "
          + refused.message, instance));
    }
    if (!known(instance, id, resume)) {
      return java.util.Optional.empty();
    }
    RestartRecord last = st.lastRestart;
    boolean handledLast = st.handledRequests != null && id.equals(st.handledRequests.get(kind));
    if (last != null && id.equals(last.requestId) || handledLast) {
      // judged as a wait would judge it: started, failed, superseded by a resume, or still to come; but a refusal it
      // judges by phase alone is not one here (refused requests are in refusedRequests): a later failure's may be
      RequestProgress p = of(instance, id, resume);
      if (p.state() == State.PENDING) {
        return java.util.Optional.empty();
      }
      if (p.state() != State.REFUSED || handledLast && supersededByResume(st, resume)) {
        return java.util.Optional.of(new RequestProgress(p.state(), kind + " request " + id + " was handled already: "
            + p.message(), instance, p.followed()));
      }
    }
    // handled, not refused as far as status shows, and a later restart replaced status.lastRestart
    return java.util.Optional.of(new RequestProgress(State.STARTED, kind + " request " + id + " was handled already; "
        + "status no longer shows its restart (a later one replaced status.lastRestart)", instance));
  }

  /**
   * The history's record of the first run after {@code runBefore} that the request did not end itself (a run
   * whose start status did not show yet when the request came is ended by it: outcome manual_restart), if status
   * shows one.
   */
  private static RunRecord runAfter(AgentInstanceStatus st, int runBefore) {
    if (st.run == null || st.run <= runBefore || st.history == null) {
      return null;
    }
    return st.history.stream().filter(r -> r.run != null && r.run > runBefore && r.startedAt != null
            && !ReasonCode.MANUAL_RESTART.code().equals(r.reasonCode))
        .min(java.util.Comparator.comparingInt(r -> r.run)).orElse(null);
  }
}

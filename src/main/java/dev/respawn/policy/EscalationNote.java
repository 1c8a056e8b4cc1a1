package dev.respawn.policy;

import dev.respawn.policy.InstanceState.DecisionInfo;
import dev.respawn.policy.InstanceState.FailureInfo;

/**
 * What the Escalated condition and Event say when the policy gives up (api.md §3, Escalated or Failed): the last
 * failure's context and a short remediation checklist, within an Event note's bytes.
 */
final class EscalationNote {
  /** The most an escalation message may take: an Event's note (kube-apiserver refuses more than 1024 bytes). */
  static final int BYTES = Bounds.NOTE_BYTES;

  private EscalationNote() {}

  /** The message of an instance whose {@code state} the decision coded {@code code} just stopped. */
  static String of(InstanceState state, String namespace, String instance, ReasonCode code) {
    StringBuilder sb = new StringBuilder();
    sb.append(state.phase).append(" (").append(code).append(")");
    DecisionInfo decided = state.lastDecision;
    if (code == ReasonCode.INVALID_TEMPLATE && decided != null && decided.message() != null) {
      sb.append(": the API server rejected the pod template: ").append(Bounds.oneLine(decided.message()))
          .append(". Fix spec.template");
    }
    FailureInfo f = state.lastFailure;
    if (f != null) {
      sb.append(". Last failure: pod ").append(f.pod()).append(", class ").append(f.interruptionClass());
      if (f.exitCode() != null) {
        sb.append(", exit code ").append(f.exitCode());
      }
      if (f.reason() != null) {
        sb.append(", reason ").append(Bounds.oneLine(f.reason()));
      }
      if (f.message() != null && !f.message().isEmpty()) {
        // what the agent wrote, on one line: it cannot pass for a line or a checklist of the operator's
        sb.append(", message \"").append(Bounds.oneLine(f.message())).append('"');
      }
    }
    // what to inspect is the run that just ended: the last failure may be older (runs since restarted without
    // failing, by exit code 42 or by hand, until the restart window was full; a lifecycle before a resume)
    String pod = state.currentPod != null ? state.currentPod : f != null ? f.pod() : null;
    if (f != null && pod != null && !pod.equals(f.pod())) {
      sb.append(". Last run: pod ").append(pod).append(", ended without a failure");
    }
    // no pod ran (a template the API server refused at the first run): nothing to read logs of
    // a pod the operator deleted to end its run (a stall, the startup grace over; a restart or resume request,
    // suspend) took its logs with it: its Events stay for a while (an hour by default)
    String inspect = pod == null ? "" : deletedByTheOperator(state, pod)
        ? "pod " + pod + " was deleted to end the run, its logs with it (a cluster log store may keep them); "
            + "kubectl get events -n " + namespace + " --field-selector involvedObject.name=" + pod + "; "
        : "kubectl logs " + pod + " -n " + namespace + "; ";
    String checklist = ". Inspect: " + inspect
        + "kubectl describe agentinstance " + instance + " -n " + namespace
        + ". Continue: kubectl annotate agentinstance " + instance
        + " respawn.dev/resume=<id> --overwrite, or kubectl respawn resume " + instance + " --force";
    // an Event's note holds 1024 bytes: the failure's context gives way, the checklist is always whole
    int room = Math.max(0, BYTES - checklist.getBytes(java.nio.charset.StandardCharsets.UTF_8).length);
    return Bounds.oneLine(sb.toString(), room) + checklist;
  }

  /**
   * Whether the run of {@code pod} ended with its pod deleted, as status records it: a failure the operator judged
   * while the pod lived (lastFailure.podDeleted), or a live run a request or suspend ended (history: Restarted or
   * Stopped with no exit code; a run that had exited as suspend was set keeps its exit code, and its pod).
   */
  private static boolean deletedByTheOperator(InstanceState state, String pod) {
    FailureInfo f = state.lastFailure;
    return f != null && f.podDeleted() && pod.equals(f.pod()) || state.history.stream().anyMatch(r -> pod.equals(r.pod())
        && (r.outcome() == RunOutcome.Restarted || r.outcome() == RunOutcome.Stopped) && r.exitCode() == null);
  }
}

package dev.respawn.policy;

import dev.respawn.api.v1alpha1.InterruptionClass;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * What to do now, and the new status values. The controller applies it: delete the current pod
 * and/or create the next one, write {@link #state()} to status once, emit the notices as Events and
 * log lines, write the audit line, and reconcile again at {@link #wakeAt()}.
 *
 * @param state the new status values
 * @param deletePod delete the current (live) pod
 * @param start create this pod now (only ever when no pod of the instance is live)
 * @param reasonCode the reason code of this decision (also in state.lastDecision when one was made)
 * @param wakeAt the earliest future deadline at which the decision may change
 * @param notices Kubernetes Events to emit (and log)
 * @param audit the audit record of a restart decision, when one was made
 * @param liveness the Ready condition (api.md §5)
 */
public record Decision(InstanceState state, boolean deletePod, Optional<PodStart> start, String reasonCode,
    Optional<Instant> wakeAt, List<Notice> notices, Optional<AuditRecord> audit, Liveness liveness) {

  public Decision {
    notices = List.copyOf(notices);
  }

  /** A pod to create: its run number and name, and the RESPAWN_* values it gets. */
  public record PodStart(int run, String podName, int attempt, Optional<String> resumeCheckpoint,
      Optional<InterruptionClass> interruptionClass) {}

  /** An Event: type Normal or Warning, a reason of api.md §8, a message. */
  public record Notice(String type, String reason, String message) {
    public static Notice normal(String reason, String message) {
      return new Notice("Normal", reason, message);
    }

    public static Notice warning(String reason, String message) {
      return new Notice("Warning", reason, message);
    }
  }

  /** The audit line of api.md §8 (the seed's resume_decision event, extended to every decision). */
  public record AuditRecord(String event, String namespace, String instance, int run,
      InterruptionClass interruptionClass, Boolean eligible, String reasonCode, long cooldownSecondsRemaining,
      int attempt, int maxAttempts, Instant at, String actor) {}

  /** The liveness gate's verdict: Ready True/False with its reason and message. */
  public record Liveness(boolean ready, String reason, String message) {}
}

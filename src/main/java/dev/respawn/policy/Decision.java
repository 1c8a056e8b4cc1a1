package dev.respawn.policy;

import dev.respawn.api.v1alpha1.InterruptionClass;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * What to do now, and the new status values. The controller executes exactly this and nothing else:
 * the {@link #deletions()} (with the pod's UID as a precondition), the {@link #start()}, the Lease when
 * {@link #createLease()}, then one status write of {@link #state()} (unless {@link #deferStatus()}),
 * and only after those succeeded the notices as one Event, the audit line and the metrics; it
 * reconciles again at {@link #wakeAt()}.
 *
 * @param state the new status values
 * @param deletions pods to delete, each with its UID
 * @param start create this pod now (only ever when no pod of the instance is live)
 * @param createLease the instance's heartbeat Lease does not exist: create it
 * @param deferStatus the only change is the start of the next run: its status is written with the next
 *     change a user can act on (the run running, a pod that cannot start, its end); the pod itself
 *     carries the start until then (see {@link RunObserver})
 * @param startsExisting the started run's pod exists already (made before; no create, no notice)
 * @param reasonCode the reason code of this decision (also in state.lastDecision when one was made), or null
 * @param wakeAt the earliest future deadline at which the decision may change
 * @param notices what happened, for the Event, the log lines and the metrics
 * @param circuitTrips how often the instance's circuit breaker opened in this decision
 * @param audit the audit record of a restart decision, when one was made
 * @param liveness the Ready condition (api.md §5)
 */
public record Decision(InstanceState state, List<PodDeletion> deletions, Optional<PodStart> start,
    boolean createLease, boolean deferStatus, boolean startsExisting, ReasonCode reasonCode, Optional<Instant> wakeAt,
    List<Notice> notices, int circuitTrips, Optional<AuditRecord> audit, Liveness liveness) {

  public Decision {
    deletions = List.copyOf(deletions);
    notices = List.copyOf(notices);
  }

  /**
   * The one Event of this decision (api.md §8): the reason and type of its weightiest notice, the note
   * carrying the others after it. Empty when nothing happened worth telling.
   */
  public Optional<Notice> event() {
    Notice top = null;
    for (Notice n : notices) {
      if (top == null || n.outweighs(top)) {
        top = n;
      }
    }
    if (top == null || notices.size() == 1) {
      return Optional.ofNullable(top);
    }
    StringBuilder note = new StringBuilder(top.message());
    for (Notice n : notices) {
      if (n != top) {
        note.append(" | ").append(n.reason()).append(": ").append(n.message());
      }
    }
    return Optional.of(new Notice(top.type(), top.reason(), note.toString()));
  }

  /** The same decision with one more notice (told in its one Event, api.md §8). */
  public Decision withNotice(Notice notice) {
    List<Notice> more = new java.util.ArrayList<>(notices);
    more.add(notice);
    return new Decision(state, deletions, start, createLease, deferStatus, startsExisting, reasonCode, wakeAt, more,
        circuitTrips, audit, liveness);
  }

  /** This decision, but the heartbeat Lease is not created (the instance is refused: nothing is made for it). */
  public Decision withoutLease() {
    return new Decision(state, deletions, start, false, deferStatus, startsExisting, reasonCode, wakeAt, notices,
        circuitTrips, audit, liveness);
  }

  /** True when the decision ends the live current run by deleting its pod. */
  public boolean deletePod() {
    return deletions.stream().anyMatch(x -> x.why() == PodDeletion.Why.END_RUN);
  }

  /** True when it deletes the current run's pod: to end the run, or one whose run ended while it lives on (sidecars). */
  public boolean deletesCurrentPod() {
    return deletions.stream().anyMatch(x -> x.why() != PodDeletion.Why.FINISHED_EARLIER_RUN);
  }

  /**
   * A pod to create: its run number and name, the RESPAWN_* values it gets, the shared dependency that released
   * it, and when the run started by the operator's clock ({@code at}: the pod carries it, see PodFactory).
   */
  public record PodStart(int run, String podName, int attempt, Optional<String> resumeCheckpoint,
      Optional<InterruptionClass> interruptionClass, Optional<String> releasedBy, Instant at) {}

  /** An Event: type Normal or Warning, a reason of api.md §8, a message (on one line: {@link Bounds#oneLine}). */
  public record Notice(EventType type, EventReason reason, String message) {
    public Notice {
      message = Bounds.oneLine(message, Bounds.NOTE_BYTES); // an agent's words, escaped, may outgrow a note
    }

    public static Notice normal(EventReason reason, String message) {
      return new Notice(EventType.Normal, reason, message);
    }

    public static Notice warning(EventReason reason, String message) {
      return new Notice(EventType.Warning, reason, message);
    }

    /** True when this notice outweighs {@code other} (warnings first, then the reason's rank). */
    public boolean outweighs(Notice other) {
      if (type != other.type) {
        return type == EventType.Warning;
      }
      return reason.rank() < other.reason.rank();
    }
  }

  /**
   * The audit line of api.md §8 (the seed's resume_decision event, extended to every decision). eligible is
   * always true or false: a line without a resume verdict (resume Off, a line not about a failure) is not eligible.
   */
  public record AuditRecord(String event, String namespace, String instance, int run,
      InterruptionClass interruptionClass, Boolean eligible, ReasonCode reasonCode, long cooldownSecondsRemaining,
      int attempt, int maxAttempts, Instant at, String actor) {
    public AuditRecord {
      eligible = Boolean.TRUE.equals(eligible);
    }
  }

  /** The liveness gate's verdict: Ready True/False with its reason and message. */
  public record Liveness(boolean ready, String reason, String message) {}
}

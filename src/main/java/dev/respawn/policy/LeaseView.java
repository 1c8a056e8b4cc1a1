package dev.respawn.policy;

import dev.respawn.api.v1alpha1.HealthVerdict;
import java.time.Instant;

/**
 * The heartbeat Lease, as renewed by the current pod (renewals of other holders are dropped by the
 * controller). renewTime is the agent's clock; changeSeenAt is when the operator saw renewTime
 * change (null: not tracked, the core then uses the time of the decision when renewTime differs from
 * the one in status). {@code firstSight}: changeSeenAt is when this operator process first looked at a
 * renewal made before (a restarted operator's grant of a full timeout, api.md §12), not a change it saw.
 * A Lease never renewed (renewTime null) with {@code firstSight} and changeSeenAt: a run older than this
 * process, first looked at then; it is granted a full timeout from that look as well (see {@link #lookedAt}).
 */
public record LeaseView(Instant renewTime, Instant changeSeenAt, HealthVerdict verdict, String detail,
    String checkpoint, String checkpointStatus, Boolean stepIdempotent, Boolean artifactsReady, boolean firstSight) {

  /** A Lease whose renewTime this operator saw change at {@code changeSeenAt}. */
  public LeaseView(Instant renewTime, Instant changeSeenAt, HealthVerdict verdict, String detail, String checkpoint,
      String checkpointStatus, Boolean stepIdempotent, Boolean artifactsReady) {
    this(renewTime, changeSeenAt, verdict, detail, checkpoint, checkpointStatus, stepIdempotent, artifactsReady,
        false);
  }

  /**
   * A Lease ({@code lease}, or none: it is missing) of a run that never renewed, which this operator process
   * first looked at {@code at}, the run being older than the process.
   */
  public static LeaseView lookedAt(LeaseView lease, Instant at) {
    return lease == null ? new LeaseView(null, at, null, null, null, null, null, null, true)
        : new LeaseView(null, at, lease.verdict, lease.detail, lease.checkpoint, lease.checkpointStatus,
            lease.stepIdempotent, lease.artifactsReady, true);
  }

  /** When a run that never renewed was first looked at by this process (see {@link #lookedAt}), or null. */
  public Instant neverRenewedLookedAt() {
    return renewTime == null && firstSight ? changeSeenAt : null;
  }

  /** The same Lease, its renewTime seen change at {@code at}. */
  public LeaseView seenAt(Instant at) {
    return new LeaseView(renewTime, at, verdict, detail, checkpoint, checkpointStatus, stepIdempotent, artifactsReady,
        firstSight);
  }
}

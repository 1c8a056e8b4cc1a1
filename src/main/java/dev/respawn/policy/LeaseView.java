package dev.respawn.policy;

import dev.respawn.api.v1alpha1.HealthVerdict;
import java.time.Instant;

/**
 * The heartbeat Lease, as renewed by the current pod (renewals of other holders are dropped by the
 * controller). renewTime is the agent's clock; changeSeenAt is when the operator saw renewTime
 * change (null: not tracked, the core then uses the time of the decision when renewTime differs from
 * the one in status). {@code firstSight}: changeSeenAt is when this operator process first looked at a
 * renewal made before (a restarted operator's grant of a full timeout, api.md §12), not a change it saw.
 */
public record LeaseView(Instant renewTime, Instant changeSeenAt, HealthVerdict verdict, String detail,
    String checkpoint, String checkpointStatus, Boolean stepIdempotent, Boolean artifactsReady, boolean firstSight) {

  /** A Lease whose renewTime this operator saw change at {@code changeSeenAt}. */
  public LeaseView(Instant renewTime, Instant changeSeenAt, HealthVerdict verdict, String detail, String checkpoint,
      String checkpointStatus, Boolean stepIdempotent, Boolean artifactsReady) {
    this(renewTime, changeSeenAt, verdict, detail, checkpoint, checkpointStatus, stepIdempotent, artifactsReady,
        false);
  }

  /** The same Lease, its renewTime seen change at {@code at}. */
  public LeaseView seenAt(Instant at) {
    return new LeaseView(renewTime, at, verdict, detail, checkpoint, checkpointStatus, stepIdempotent, artifactsReady,
        firstSight);
  }
}

package dev.respawn.policy;

import dev.respawn.api.v1alpha1.HealthVerdict;
import java.time.Instant;

/**
 * The heartbeat Lease, as renewed by the current pod (renewals of other holders are dropped by the
 * controller). renewTime is the agent's clock; changeSeenAt is when the operator saw renewTime
 * change (null: not tracked, the core then uses the time of the decision when renewTime differs from
 * the one in status).
 */
public record LeaseView(Instant renewTime, Instant changeSeenAt, HealthVerdict verdict, String detail,
    String checkpoint, String checkpointStatus, Boolean stepIdempotent, Boolean artifactsReady) {}

package dev.respawn.controller;

import dev.respawn.heartbeat.HeartbeatLeases;
import dev.respawn.heartbeat.RenewalClock;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.javaoperatorsdk.operator.processing.event.source.filter.OnUpdateFilter;
import java.util.Objects;

/**
 * The heartbeat path of every Lease update: the renewal is noted in the {@link RenewalClock} (when this
 * operator saw renewTime change), and only a change a reconcile must see (holder, annotations) passes.
 * A renewal that changes only renewTime costs a map update, not a reconcile; a change of holder also
 * keeps how the previous holder left the Lease.
 */
public final class LeaseRenewalFilter implements OnUpdateFilter<Lease> {
  private final RenewalClock renewals;

  public LeaseRenewalFilter(RenewalClock renewals) {
    this.renewals = renewals;
  }

  @Override
  public boolean accept(Lease newer, Lease older) {
    if (older != null && older.getSpec() != null
        && !Objects.equals(HeartbeatLeases.holder(newer), HeartbeatLeases.holder(older))) {
      renewals.handedOver(older);
    }
    renewals.observe(newer);
    return HeartbeatLeases.meaningfulChange(newer, older);
  }
}

package dev.respawn.bench;

import java.util.Locale;

/**
 * A healthy fleet whose agents heartbeat as in production (a renewal every 10 s, timeout 60 s) is
 * watched for more than two heartbeat timeouts: what does the operator write meanwhile (api.md §12:
 * nothing)?
 */
final class AtRest {
  static final String NAME = "at rest";

  private AtRest() {}

  static void measure(OutageWorld world, Plan plan, Results results) {
    MassFailure.awaitQuiet(world.api, java.time.Duration.ofSeconds(1), java.time.Duration.ofMinutes(1));
    long healthy = world.count(world::healthy);
    long writes0 = world.operatorWrites();
    long status0 = statusWrites(world);
    long reconciles0 = world.sink.reconciles();
    long renewals0 = world.kubelet.renewals();
    long t0 = System.nanoTime();
    Observer.window(plan.restWindow());
    double seconds = (System.nanoTime() - t0) / 1e9;
    long writes = world.operatorWrites() - writes0;
    long status = statusWrites(world) - status0;
    long reconciles = world.sink.reconciles() - reconciles0;
    long renewals = world.kubelet.renewals() - renewals0;
    double perThousand = status / seconds / (healthy / 1000.0);
    results.goal(NAME, String.format(Locale.ROOT, "status writes per second per 1,000 healthy instances (%,d "
        + "heartbeating)", healthy), String.format(Locale.ROOT, "%.3f", perThousand), "0", status == 0);
    results.goal(NAME, "all operator writes over " + Math.round(seconds) + " s (Events included)",
        Long.toString(writes), "0", writes == 0);
    results.note(NAME, String.format(Locale.ROOT, "%,d Running, Healthy instances whose agents renewed their Lease "
        + "every %d s (%,d renewals in %.0f s, %.0f/s; heartbeat timeout 60 s) caused %,d reconciles (expiry "
        + "checks: a renewal is absorbed before it reaches the reconciler, a wake-up at every timeout) and %,d "
        + "writes, %,d of them status writes; the kubelet's renewal errors so far: %,d", healthy,
        BeatingKubelet.RENEW_EVERY.toSeconds(), renewals, seconds, renewals / seconds, reconciles, writes, status,
        world.kubelet.errors()));
  }

  private static long statusWrites(OutageWorld world) {
    return world.api.requests().matching(r -> r.isWrite() && AgentFleet.OPERATOR.equals(r.userAgent())
        && r.resource().endsWith("/status")).size();
  }
}

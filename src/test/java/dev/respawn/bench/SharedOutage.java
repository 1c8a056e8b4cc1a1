package dev.respawn.bench;

import dev.respawn.api.v1alpha1.Phase;
import java.time.Duration;
import java.util.Locale;

/**
 * A fleet's shared upstream goes down (api.md §11): N instances of one policy (heartbeats every 10 s,
 * timeout 60 s, every other setting its default) on a world of their own; every agent fails with "HTTP
 * 503" while the upstream is down, then it comes back. Run twice on fresh servers: with the shared
 * dependency {@value OutageWorld#DEPENDENCY} (default openDuration 30 s, probes 1, releaseRate 5/s) and
 * without. Reported: restarts made during the outage, escalations, the time from the upstream's return
 * until all N run again, the peak restart rate afterwards, the operator's writes. Before the outage the
 * first world is watched at rest ({@link AtRest}).
 */
final class SharedOutage {
  static final String NAME = "shared dependency";
  static final int OPEN_SECONDS = 30;
  static final int PROBES = 1;
  static final int RELEASE_RATE = 5;
  static final int THRESHOLD = 3;

  private SharedOutage() {}

  /** What one side saw. {@code recoveredNanos} is -1 when not all instances ran again. */
  record Side(long restartsDuringOutage, long escalated, long recoveredNanos, long running, long peakPerSecond,
      long peakSliding, long peakCreatesSliding, long writes, long trips) {}

  static void run(Plan plan, Results results) {
    Side with;
    try (OutageWorld world = new OutageWorld(plan.outageFleet(), true).populate()) {
      AtRest.measure(world, plan, results);
      with = outage(world, plan);
    }
    Side without;
    try (OutageWorld world = new OutageWorld(plan.outageFleet(), false).populate()) {
      without = outage(world, plan);
    }
    String n = String.format(Locale.ROOT, "%,d", plan.outageFleet());
    String outage = plan.outage().toSeconds() + " s";
    long allowed = (THRESHOLD - 1) + PROBES * (plan.outage().toSeconds() / OPEN_SECONDS + 1);
    results.goal(NAME, n + " instances, " + outage + " outage: restarts during it (without: "
        + without.restartsDuringOutage() + ")", Long.toString(with.restartsDuringOutage()),
        "≤ " + allowed + " (probes per openDuration)", with.restartsDuringOutage() <= allowed);
    results.goal(NAME, "escalations (without: " + without.escalated() + ")", Long.toString(with.escalated()), "0",
        with.escalated() == 0);
    results.info(NAME, "upstream back → all " + n + " running (without: " + recovery(without, plan) + ")",
        recovery(with, plan));
    results.goal(NAME, "peak restarts in one second after the upstream is back (without: "
        + without.peakPerSecond() + ")", Long.toString(with.peakPerSecond()), "≤ " + RELEASE_RATE + " (releaseRate)",
        with.peakPerSecond() <= RELEASE_RATE);
    results.info(NAME, "… in any sliding 1 s window (without)", with.peakSliding() + " (" + without.peakSliding()
        + ")");
    results.info(NAME, "… pod creates the server received from the operator in any sliding 1 s window (without)",
        with.peakCreatesSliding() + " (" + without.peakCreatesSliding() + ")");
    results.info(NAME, "operator writes, outage and recovery, per instance (without)",
        Results.number(with.writes() / (double) plan.outageFleet()) + " ("
        + Results.number(without.writes() / (double) plan.outageFleet()) + ")");
    results.note(NAME, String.format(Locale.ROOT, "%s instances of one policy (Exponential 2 s .. 120 s, maxRetries 3, "
        + "resetAfter 60 s: the defaults; heartbeat timeout 60 s, renewed every 10 s) on a mock server of their own, "
        + "run twice: with dependencies: [{name: %s, match: {messageContains: [\"HTTP 503\"]}}] (failureThreshold "
        + "%d, openDuration %d s, probes %d, releaseRate %d/s: the defaults) and without. The upstream is down for %s: "
        + "every running agent fails at once (exit 1, \"%s\"), one started meanwhile fails %d s after it starts. "
        + "Restarts during the outage are pods created in it (seen by the harness's kubelet); restarts per second "
        + "count the pods seen in each whole second from the upstream's return, the sliding window any 1 s span "
        + "(reconcile latency shifts single starts by tens of ms); the allowance is the failures before the circuit "
        + "opened (threshold - 1) plus one probe per openDuration. Recovery: from the upstream's return until every "
        + "instance runs again (the probe must stay healthy for resetAfter before the release starts, then %d/s); "
        + "the shared circuit tripped %d time(s)", n, OutageWorld.DEPENDENCY, THRESHOLD,
        OPEN_SECONDS, PROBES, RELEASE_RATE, outage, BeatingKubelet.OUTAGE_MESSAGE,
        BeatingKubelet.FAIL_AFTER.toSeconds(), RELEASE_RATE, with.trips()));
  }

  private static String recovery(Side side, Plan plan) {
    return side.recoveredNanos() >= 0 ? Results.seconds(side.recoveredNanos())
        : String.format(Locale.ROOT, "never: %,d of %,d running, %,d escalated", side.running(), plan.outageFleet(),
            side.escalated());
  }

  static Side outage(OutageWorld world, Plan plan) {
    int n = world.instances.size();
    MassFailure.awaitQuiet(world.api, Duration.ofSeconds(1), Duration.ofMinutes(1));
    long writes0 = world.operatorWrites();
    long t0 = System.nanoTime();
    world.kubelet.outageBegins();
    System.out.printf("  outage begins (%s dependencies): %,d agents failed in %s%n",
        world.policy.dependencies == null ? "without" : "with", n, Results.seconds(System.nanoTime() - t0));
    Observer.window(plan.outage().minusNanos(System.nanoTime() - t0));
    long t1 = System.nanoTime();
    world.kubelet.outageEnds();
    long restarts = world.kubelet.appearedBetween(t0 + 1, t1);
    System.out.printf("  outage ends after %s: %,d restarts during it, %,d escalated, %,d waiting%n",
        Results.seconds(t1 - t0), restarts, world.count(OutageWorld::terminal),
        world.count(s -> s.phase == Phase.CircuitOpen));
    // with the dependency: openDuration, a probe healthy for resetAfter, then the release; without: the backoff
    // the release gate keeps starts at or below the rate: slower when the operator lags, never faster
    Duration bound = Duration.ofSeconds(OPEN_SECONDS + 60 + 2L * n / RELEASE_RATE + 120);
    long[] recovered = {-1};
    Observer.await(bound, Duration.ofMillis(200), () -> {
      long running = world.count(world::running);
      if (running == n) {
        recovered[0] = System.nanoTime() - t1;
        return true;
      }
      return running + world.count(OutageWorld::terminal) == n; // the others escalated: only an operator helps
    });
    MassFailure.awaitQuiet(world.api, Duration.ofSeconds(2), Duration.ofMinutes(2));
    long trips = world.trips();
    Side side = new Side(restarts, world.count(OutageWorld::terminal), recovered[0], world.count(world::running),
        world.kubelet.perSecond(t1).stream().mapToLong(Long::longValue).max().orElse(0),
        world.kubelet.peakPerSecond(t1), Samples.peakInAnySecond(
        world.api.requests().matching(r -> r.startNanos() >= t1 && r.userAgent().equals(AgentFleet.OPERATOR)
            && r.verb().equals("POST") && r.resource().equals("pods")).stream().map(r -> r.startNanos()).toList()),
        world.operatorWrites() - writes0, trips);
    System.out.printf("  %s%n  restarts per second after the outage: %s%n", side, world.kubelet.perSecond(t1));
    return side;
  }
}

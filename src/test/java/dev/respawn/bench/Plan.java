package dev.respawn.bench;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;

/**
 * How big each measurement is. {@code full} (the default of {@code make bench}) takes about 40 minutes
 * on 2 cores; {@code quick} ({@code make bench BENCH=quick}) runs everything at small sizes in about
 * 15 minutes (the at-rest window and the outages keep realistic durations). {@code -Drespawn.bench.scale=1000,5000}
 * overrides the scale steps.
 *
 * @param fleet instances that stay alive for reaction latency and mass failure (and as many bare-loop pods)
 * @param punctual instances of the backoff policy, each restarted once per punctuality round
 * @param economy instances restarted once each to count writes per restart
 * @param inProcessMillis how long the in-process heartbeat path is measured (after as long a warm-up)
 * @param outageFleet instances of the shared-dependency world (heartbeats every 10 s, timeout 60 s)
 * @param outage how long their shared upstream is down
 * @param restWindow how long that world is watched at rest (more than two heartbeat timeouts)
 * @param churnInstances instances created and deleted per churn round (10 rounds)
 */
record Plan(String mode, int fleet, int reactionWarmup, int reactionSamples, int massRounds, int punctual,
    int punctualRounds, int punctualKillsPerSecond, int economy, int noOpTouches, int heartbeatLeases,
    int renewalsPerSecond, Duration heartbeatWindow, long inProcessMillis, List<Integer> scaleSizes,
    Duration idleWindow, int outageFleet, Duration outage, Duration restWindow, int churnInstances) {

  static Plan of(String mode) {
    Plan plan = switch (mode) {
      case "quick" -> new Plan(mode, 200, 20, 60, 1, 40, 1, 20, 3, 40, 200, 50, Duration.ofSeconds(5), 1000,
          List.of(200, 500, 1000), Duration.ofSeconds(10), 200, Duration.ofSeconds(60), Duration.ofSeconds(125), 200);
      case "full" -> new Plan(mode, 1000, 100, 300, 2, 150, 2, 20, 12, 200, 1000, 100, Duration.ofSeconds(20),
          3000, List.of(1000, 5000, 10000), Duration.ofSeconds(30), 1000, Duration.ofMinutes(2), Duration.ofSeconds(125), 1000);
      default -> throw new IllegalArgumentException("respawn.bench.mode must be quick or full, not " + mode);
    };
    String scale = System.getProperty("respawn.bench.scale", "").trim();
    return scale.isEmpty() ? plan : plan.withScale(Arrays.stream(scale.split(",")).map(String::trim)
        .map(Integer::valueOf).toList());
  }

  Plan withScale(List<Integer> sizes) {
    return new Plan(mode, fleet, reactionWarmup, reactionSamples, massRounds, punctual, punctualRounds,
        punctualKillsPerSecond, economy, noOpTouches, heartbeatLeases, renewalsPerSecond, heartbeatWindow,
        inProcessMillis, List.copyOf(sizes), idleWindow, outageFleet, outage, restWindow, churnInstances);
  }
}

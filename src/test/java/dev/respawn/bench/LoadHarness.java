package dev.respawn.bench;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The load harness of {@code make bench} (after JMH): Respawn against fabric8's mock API server, next to
 * the physical limit (a bare informer loop) where there is one. Writes target/bench/results.md and
 * prints the same table.
 *
 * <pre>
 * -Drespawn.bench.mode=full|quick      sizes (see {@link Plan}); quick runs in a few minutes
 * -Drespawn.bench.only=reaction,scale  run only these: economy, heartbeats, reaction, mass, punctuality, outage
 *                                      (at rest, then a shared upstream's outage), churn, scale, footprint
 * -Drespawn.bench.scale=1000,5000      the scale steps
 * -Drespawn.bench.out=target/bench/results.md, -Drespawn.bench.jmh=target/jmh-result.json
 * </pre>
 *
 * <p>Not a test: nothing is asserted; a measurement that fails is reported as failed and the others run.
 */
public final class LoadHarness {
  static final List<String> ALL = List.of("economy", "heartbeats", "reaction", "mass", "punctuality", "outage",
      "churn", "scale", "footprint");

  private LoadHarness() {}

  public static void main(String[] args) {
    Plan plan = Plan.of(System.getProperty("respawn.bench.mode", "full"));
    String only = System.getProperty("respawn.bench.only", "").trim();
    Set<String> run = only.isEmpty() ? Set.copyOf(ALL) : Arrays.stream(only.split(",")).map(String::trim)
        .collect(Collectors.toSet());
    Path out = Path.of(System.getProperty("respawn.bench.out", "target/bench/results.md"));
    Path jmh = Path.of(System.getProperty("respawn.bench.jmh", "target/jmh-result.json"));
    Machine start = Machine.now();
    long t0 = System.nanoTime();
    Results results = new Results();
    System.out.printf("Respawn load harness, mode %s, %d cores, load average %s%n", plan.mode(), start.cores(),
        start.loadAverage());
    JmhResults.fold(jmh, results);

    if (run.contains("heartbeats")) {
      measure(results, HeartbeatThroughput.NAME, () -> HeartbeatThroughput.inProcess(plan, results));
    }
    if (run.stream().anyMatch(List.of("economy", "heartbeats", "reaction", "mass", "punctuality")::contains)) {
      System.out.printf("fleet: %,d instances with Respawn, %,d pods with the bare loop%n", plan.fleet(),
          plan.fleet());
      try (AgentFleet fleet = AgentFleet.start(plan)) {
        if (run.contains("economy")) {
          measure(results, ApiEconomy.NAME, () -> ApiEconomy.run(fleet, plan, results));
        }
        if (run.contains("heartbeats")) {
          fleet.forgetEvents();
          measure(results, HeartbeatThroughput.NAME, () -> HeartbeatThroughput.onMock(fleet, plan, results));
        }
        if (run.contains("reaction")) {
          fleet.forgetEvents();
          measure(results, ReactionLatency.NAME, () -> ReactionLatency.run(fleet, plan, results));
        }
        if (run.contains("punctuality")) {
          fleet.forgetEvents();
          measure(results, Punctuality.NAME, () -> Punctuality.run(fleet, plan, results));
        }
        if (run.contains("mass")) {
          fleet.forgetEvents();
          measure(results, MassFailure.NAME, () -> MassFailure.run(fleet, plan, results));
        }
      } catch (RuntimeException e) {
        results.failed("fleet", e);
        e.printStackTrace();
      }
    }
    if (run.contains("outage")) {
      measure(results, SharedOutage.NAME, () -> SharedOutage.run(plan, results));
    }
    if (run.contains("churn")) {
      measure(results, Churn.NAME, () -> Churn.run(plan, results));
    }
    if (run.contains("footprint")) {
      measure(results, CacheFootprint.NAME, () -> CacheFootprint.run(plan, results));
    }
    if (run.contains("scale")) {
      List<Integer> sizes = plan.scaleSizes();
      try (ScaleRun scale = new ScaleRun()) {
        for (int n : sizes) {
          System.out.printf("scale: %,d instances%n", n);
          measure(results, ScaleRun.NAME, () -> scale.step(n, plan, results, n == sizes.get(sizes.size() - 1)));
        }
      }
    }
    Machine end = Machine.now();
    String markdown = results.markdown(start, end, plan.mode(), (System.nanoTime() - t0) / 1_000_000_000L);
    results.write(out, markdown);
    System.out.println();
    System.out.println(markdown);
    System.out.println("Written to " + out.toAbsolutePath());
    System.exit(0); // informer and client threads of failed measurements must not keep the JVM alive
  }

  private static void measure(Results results, String name, Runnable measurement) {
    long t0 = System.nanoTime();
    System.out.println(name + " ...");
    try {
      measurement.run();
    } catch (RuntimeException | AssertionError e) {
      results.failed(name, e);
      e.printStackTrace();
    }
    System.out.printf("%s took %s%n", name, Results.seconds(System.nanoTime() - t0));
  }
}

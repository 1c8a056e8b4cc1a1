package dev.respawn.bench;

import dev.respawn.api.v1alpha1.AgentInstance;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * Writes the operator's client makes, counted at the server by its User-Agent: per restart (one
 * failure, Immediate policy, heartbeats renewed as the agent starts and every 10 s with a 60 s timeout: the restart path until the replacement runs and the finished pod is deleted,
 * then the close of the failure sequence once the new run was healthy for resetAfter; Events included),
 * and per reconcile that has
 * nothing to do (pods touched with an annotation: a pod update reconciles the instance).
 */
final class ApiEconomy {
  static final String NAME = "API economy";
  static final Duration QUIET = Duration.ofMillis(700);

  private ApiEconomy() {}

  static void run(AgentFleet fleet, Plan plan, Results results) {
    MassFailure.awaitQuiet(fleet, QUIET, Duration.ofMinutes(1));
    Map<String, Long> start = writes(fleet);
    Map<String, Long> restartPath = new TreeMap<>();
    Map<String, Long> sequenceEnd = new TreeMap<>();
    for (String instance : fleet.economy) {
      Pod live = fleet.livePod(AgentFleet.AGENTS, instance);
      String next = Observer.podName(instance, Observer.run(live) + 1);
      Map<String, Long> before = writes(fleet);
      fleet.failScripted(live);
      Observer.require(instance + " settled on " + next, AgentFleet.SETTLE, () -> fleet.settled(instance, next),
          () -> fleet.describe(AgentFleet.AGENTS, instance));
      MassFailure.awaitQuiet(fleet, QUIET, Duration.ofMinutes(1));
      Map<String, Long> settled = writes(fleet);
      Observer.require(instance + " recovered on " + next, AgentFleet.SETTLE, () -> fleet.recovered(instance, next),
          () -> fleet.describe(AgentFleet.AGENTS, instance));
      MassFailure.awaitQuiet(fleet, QUIET, Duration.ofMinutes(1));
      add(restartPath, before, settled);
      add(sequenceEnd, settled, writes(fleet));
    }
    int restarts = fleet.economy.size();
    Map<String, Long> whole = new TreeMap<>();
    add(whole, start, writes(fleet));
    double all = total(whole) / (double) restarts;
    double events = events(whole) / (double) restarts;
    double path = total(restartPath) / (double) restarts;
    double pathEvents = events(restartPath) / (double) restarts;
    results.goal(NAME, "writes per restart, whole cycle (Events included)", Results.number(all), "≤ 6", all <= 6.0);
    results.goal(NAME, "… without Events", Results.number(all - events), "≤ 4", all - events <= 4.0);
    results.goal(NAME, "… restart path only: failure → replacement running, old pod deleted (without Events)",
        Results.number(path) + " (" + Results.number(path - pathEvents) + ")", "≤ 4", path - pathEvents <= 4.0);
    results.note(NAME, restarts + " sequential restarts (Immediate, resetAfter " + ECONOMY_RESET + ", heartbeats every "
        + BeatingKubelet.RENEW_EVERY.toSeconds() + " s, timeout 60 s); restart path "
        + "per restart: " + breakdown(restartPath, restarts) + "; closing the failure sequence after resetAfter: "
        + breakdown(sequenceEnd, restarts) + ". One Event per decision (api.md §8): the failure's decision has four "
        + "notices (RestartFailed, ResumeDecision, RestartScheduled, RestartStarted) and writes one Event, the "
        + "most significant reason with the others in its note; closing the sequence writes RestartSucceeded. "
        + "Each restart here is a failure sequence of its own, so each pays the close; a sequence of k "
        + "restarts pays it once");

    Map<String, Long> noOpBefore = writes(fleet);
    long reconciles0 = fleet.sink.reconciles();
    long noOpWrites0 = fleet.operatorWrites();
    for (int n = 0; n < plan.noOpTouches(); n++) {
      String instance = fleet.economy.get(n % fleet.economy.size());
      String pod = fleet.livePod(AgentFleet.AGENTS, instance).getMetadata().getName();
      fleet.harness.pods().inNamespace(AgentFleet.AGENTS).withName(pod).patch(PatchContext.of(PatchType.JSON_MERGE),
          "{\"metadata\":{\"annotations\":{\"bench.respawn.dev/touch\":\"" + n + "\"}}}");
      Observer.window(Duration.ofMillis(10)); // the pace of the touches
    }
    MassFailure.awaitQuiet(fleet, Duration.ofSeconds(1), Duration.ofMinutes(1));
    long reconciles = fleet.sink.reconciles() - reconciles0;
    long noOpWrites = fleet.operatorWrites() - noOpWrites0;
    results.goal(NAME, "writes per no-op reconcile", reconciles == 0 ? "n/a (no reconcile)"
        : Results.number(noOpWrites / (double) reconciles), "0", reconciles > 0 && noOpWrites == 0);
    results.note(NAME, plan.noOpTouches() + " pod annotation changes caused " + reconciles + " reconciles and "
        + noOpWrites + " writes" + (noOpWrites == 0 ? "" : " (" + breakdown(delta(noOpBefore, writes(fleet)), 1)
        + ")"));
  }

  static final String ECONOMY_RESET = "2s";

  private static Map<String, Long> writes(AgentFleet fleet) {
    return fleet.api.requests().writesByResource(AgentFleet.OPERATOR);
  }

  /** Adds the writes made between the two counts to {@code into}. */
  private static void add(Map<String, Long> into, Map<String, Long> before, Map<String, Long> after) {
    after.forEach((key, n) -> {
      long delta = n - before.getOrDefault(key, 0L);
      if (delta > 0) {
        into.merge(key, delta, Long::sum);
      }
    });
  }

  private static Map<String, Long> delta(Map<String, Long> before, Map<String, Long> after) {
    Map<String, Long> d = new TreeMap<>();
    add(d, before, after);
    return d;
  }

  private static long total(Map<String, Long> writes) {
    return writes.values().stream().mapToLong(Long::longValue).sum();
  }

  private static long events(Map<String, Long> writes) {
    return writes.entrySet().stream().filter(e -> e.getKey().contains("events")).mapToLong(Map.Entry::getValue).sum();
  }

  /** "VERB resource n" per kind of write, divided by {@code per}. */
  static String breakdown(Map<String, Long> writes, int per) {
    return writes.entrySet().stream().map(e -> e.getKey() + " " + (per == 1 ? Long.toString(e.getValue())
        : String.format(Locale.ROOT, "%.2f", e.getValue() / (double) per))).collect(Collectors.joining(", "));
  }

  static String instanceOf(Pod p) {
    return p.getMetadata().getLabels().get(AgentInstance.INSTANCE_LABEL);
  }
}

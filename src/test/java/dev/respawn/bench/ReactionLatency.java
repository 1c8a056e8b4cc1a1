package dev.respawn.bench;

import io.fabric8.kubernetes.api.model.Pod;
import java.time.Duration;

/**
 * Pod terminated -> replacement pod created (Immediate policy), for Respawn and for the bare loop, one
 * restart at a time, alternating between the two on the same server and store: the time from the
 * status write that ends the pod to the moment the harness's informer sees the replacement. Each restart
 * settles (replacement running, old pod gone, status written) before the next one.
 */
final class ReactionLatency {
  static final String NAME = "reaction latency";
  static final Duration APPEARS = Duration.ofSeconds(30);
  /** How long a settle is awaited in the harness's caches before the server is asked. */
  static final Duration CACHE_TRUSTED = Duration.ofSeconds(10);
  static final Duration SERVER_POLL = Duration.ofMillis(250);

  private ReactionLatency() {}

  static void run(AgentFleet fleet, Plan plan, Results results) {
    Samples respawn = new Samples();
    Samples bare = new Samples();
    int total = plan.reactionWarmup() + plan.reactionSamples();
    for (int i = 0; i < total; i++) {
      boolean operatorFirst = i % 2 == 0;
      long a = restart(fleet, operatorFirst ? AgentFleet.AGENTS : AgentFleet.BARE, pick(fleet, operatorFirst, i));
      long b = restart(fleet, operatorFirst ? AgentFleet.BARE : AgentFleet.AGENTS, pick(fleet, !operatorFirst, i));
      if (i >= plan.reactionWarmup()) {
        respawn.add(operatorFirst ? a : b);
        bare.add(operatorFirst ? b : a);
      }
    }
    String n = String.format("%,d", plan.fleet());
    results.row(NAME, "p50, " + n + " live instances", Results.ms(respawn.p50()), Results.ms(bare.p50()),
        Results.ratio(respawn.p50(), bare.p50()), "≤ 1.5× bare", respawn.p50() <= 1.5 * bare.p50()
            ? Results.MET : Results.MISSED);
    results.row(NAME, "p99, " + n + " live instances", Results.ms(respawn.p99()), Results.ms(bare.p99()),
        Results.ratio(respawn.p99(), bare.p99()), "≤ 2× bare", respawn.p99() <= 2 * bare.p99()
            ? Results.MET : Results.MISSED);
    results.info(NAME, "max (Respawn / bare)", Results.ms(respawn.max()) + " / " + Results.ms(bare.max()));
    results.note(NAME, respawn.size() + " restarts each, alternating, after " + plan.reactionWarmup()
        + " warm-up restarts each; from the status write that fails the pod to the replacement's ADD at the "
        + "harness's informer; afterwards " + fleet.storeDescription() + "; settles only the server showed "
        + "(an informer missed an event, see AgentFleet): " + fleet.settledOnlyOnServer.get());
  }

  private static String pick(AgentFleet fleet, boolean operator, int i) {
    return operator ? fleet.immediate.get(i % fleet.immediate.size()) : fleet.bare.get(i % fleet.bare.size());
  }

  /** Fails the instance's running pod and returns the nanoseconds until its replacement was seen; waits until settled. */
  static long restart(AgentFleet fleet, String namespace, String instance) {
    Pod live = fleet.livePod(namespace, instance);
    String next = Observer.podName(instance, Observer.run(live) + 1);
    long t0 = fleet.fail(live);
    long latency = fleet.observer.awaitPod(namespace, next, APPEARS).nanos() - t0;
    awaitSettled(fleet, namespace, instance, next);
    return latency;
  }

  /**
   * Waits until the instance settled, as the harness's informers show it; when they do not show it for
   * {@link #CACHE_TRUSTED}, the server is asked (every {@link #SERVER_POLL}), and a settle only the server
   * shows is counted (see {@link AgentFleet#settledOnlyOnServer}).
   */
  static void awaitSettled(AgentFleet fleet, String namespace, String instance, String pod) {
    java.util.function.BooleanSupplier cached = () -> namespace.equals(AgentFleet.AGENTS) ? fleet.settled(instance, pod)
        : fleet.bareSettled(instance, pod);
    if (Observer.await(CACHE_TRUSTED, cached)) {
      return;
    }
    boolean settled = Observer.await(AgentFleet.SETTLE.minus(CACHE_TRUSTED), SERVER_POLL,
        () -> cached.getAsBoolean() || fleet.settledOnServer(namespace, instance, pod));
    if (!settled) {
      throw new IllegalStateException("timed out after " + AgentFleet.SETTLE + " waiting for " + namespace + "/"
          + instance + " settled on " + pod + "; seen: " + fleet.describe(namespace, instance));
    }
    if (!cached.getAsBoolean()) {
      fleet.settledOnlyOnServer.incrementAndGet();
    }
  }

}

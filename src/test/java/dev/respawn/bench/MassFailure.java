package dev.respawn.bench;

import io.fabric8.kubernetes.api.model.Pod;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Every pod of the fleet fails at once (the harness writes the failures from 8 threads as fast as the
 * server takes them): the time from the first failure write until the harness has seen every
 * replacement, for Respawn and for the bare loop in turn, on the same server.
 */
final class MassFailure {
  static final String NAME = "mass failure";
  static final int WRITERS = 8;
  static final Duration ALL_APPEAR = Duration.ofMinutes(5);

  private MassFailure() {}

  /**
   * One round of one side: until all replacements were seen; the failure writes alone; the side's writes
   * until every replacement existed, until every replacement ran and its finished pod was gone, and until
   * the side stopped writing.
   */
  record Round(long allSeenNanos, long failWritesNanos, long writesUntilAllExist, long writes,
      long writesUntilQuiet) {}

  static void run(AgentFleet fleet, Plan plan, Results results) {
    String store = fleet.storeDescription();
    List<Round> respawn = new ArrayList<>();
    List<Round> bare = new ArrayList<>();
    for (int r = 0; r < plan.massRounds(); r++) {
      if (r % 2 == 0) {
        respawn.add(round(fleet, AgentFleet.AGENTS, fleet.immediate));
        bare.add(round(fleet, AgentFleet.BARE, fleet.bare));
      } else {
        bare.add(round(fleet, AgentFleet.BARE, fleet.bare));
        respawn.add(round(fleet, AgentFleet.AGENTS, fleet.immediate));
      }
    }
    long op = Samples.median(respawn.stream().mapToLong(Round::allSeenNanos).toArray());
    long lim = Samples.median(bare.stream().mapToLong(Round::allSeenNanos).toArray());
    results.row(NAME, String.format("%,d pods fail at once: all replacements exist", plan.fleet()), Results.seconds(op),
        Results.seconds(lim), Results.ratio(op, lim), "ratio to bare loop", "");
    long opKill = Samples.median(respawn.stream().mapToLong(Round::failWritesNanos).toArray());
    long limKill = Samples.median(bare.stream().mapToLong(Round::failWritesNanos).toArray());
    results.info(NAME, "of which the harness's failure writes took", Results.seconds(opKill) + " / "
        + Results.seconds(limKill));
    long opAfter = Samples.median(respawn.stream().mapToLong(r -> r.allSeenNanos() - r.failWritesNanos()).toArray());
    long limAfter = Samples.median(bare.stream().mapToLong(r -> r.allSeenNanos() - r.failWritesNanos()).toArray());
    results.row(NAME, "all replacements exist, after the last failure write", Results.seconds(opAfter),
        Results.seconds(limAfter), Results.ratio(opAfter, limAfter), "", "");
    double opExist = respawn.stream().mapToLong(Round::writesUntilAllExist).average().orElse(0) / plan.fleet();
    double limExist = bare.stream().mapToLong(Round::writesUntilAllExist).average().orElse(0) / plan.fleet();
    results.row(NAME, "writes per replacement until every replacement exists", Results.number(opExist),
        Results.number(limExist), Results.ratio(opExist, limExist), "", "");
    double opWrites = respawn.stream().mapToLong(Round::writes).average().orElse(0) / plan.fleet();
    double limWrites = bare.stream().mapToLong(Round::writes).average().orElse(0) / plan.fleet();
    results.row(NAME, "writes per replacement until every replacement ran (the storm)", Results.number(opWrites),
        Results.number(limWrites), Results.ratio(opWrites, limWrites), "", "");
    double opAll = respawn.stream().mapToLong(Round::writesUntilQuiet).average().orElse(0) / plan.fleet();
    results.info(NAME, "… all told, Events written after the storm included", Results.number(opAll) + " (Events "
        + "dropped: " + fleet.sink.eventsDropped() + ")");
    results.info(NAME, "settles only the server showed", fleet.settledOnlyOnServer.get() + " (since the fleet "
        + "started; a harness informer missed an event at a watch's resumption, see AgentFleet)");
    results.note(NAME, "median of " + plan.massRounds() + " round(s) per side, rounds alternate which side goes "
        + "first; the failure writes come from 8 threads of the harness and queue with Respawn's (50 reconciler "
        + "threads) or the bare loop's (8) on the mock's one lock, which is not fair: the more a controller writes, "
        + "the longer the failures themselves take to land; Respawn's own writes (status, pod, Events, cleanup of finished pods) share the server with "
        + "the failure writes, the simulated kubelet's and the bare loop's: the mock serialises every request, "
        + "so this measures the server's write rate as much as either controller; the bare loop deletes "
        + "the finished pod right after creating the replacement, Respawn once the replacement runs; Respawn "
        + "writes its Events on a thread of its own (they wait behind the restarts' writes: some are written "
        + "after the storm); before the "
        + "first round " + store);
  }

  static Round round(AgentFleet fleet, String namespace, List<String> instances) {
    List<Pod> live = instances.stream().map(i -> fleet.livePod(namespace, i)).toList();
    String agent = namespace.equals(AgentFleet.AGENTS) ? AgentFleet.OPERATOR : AgentFleet.BARE_LOOP;
    long writesBefore = fleet.api.requests().writeCount(agent);
    ExecutorService pool = Executors.newFixedThreadPool(WRITERS);
    long t0 = System.nanoTime();
    long killed;
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (Pod p : live) {
        futures.add(pool.submit(() -> fleet.fail(p)));
      }
      for (Future<?> f : futures) {
        f.get();
      }
      killed = System.nanoTime() - t0;
    } catch (Exception e) {
      throw new IllegalStateException("failing " + live.size() + " pods: " + e, e);
    } finally {
      pool.shutdownNow();
    }
    long last = t0;
    for (Pod p : live) {
      String next = Observer.podName(p.getMetadata().getLabels().get(dev.respawn.api.v1alpha1.AgentInstance
          .INSTANCE_LABEL), Observer.run(p) + 1);
      last = Math.max(last, fleet.observer.awaitPod(namespace, next, ALL_APPEAR).nanos());
    }
    long allSeen = last - t0;
    long writesUntilAllExist = fleet.api.requests().writeCount(agent) - writesBefore;
    for (Pod p : live) {
      String instance = p.getMetadata().getLabels().get(dev.respawn.api.v1alpha1.AgentInstance.INSTANCE_LABEL);
      ReactionLatency.awaitSettled(fleet, namespace, instance, Observer.podName(instance, Observer.run(p) + 1));
    }
    long writes = fleet.api.requests().writeCount(agent) - writesBefore;
    System.out.printf("  mass failure %s: all %d replacements after %s (failure writes %s), settled after %s%n",
        namespace, live.size(), Results.seconds(allSeen), Results.seconds(killed),
        Results.seconds(System.nanoTime() - t0));
    awaitQuiet(fleet, Duration.ofSeconds(1), Duration.ofMinutes(2));
    return new Round(allSeen, killed, writesUntilAllExist, writes, fleet.api.requests().writeCount(agent) - writesBefore);
  }

  /** Waits until nobody wrote to the server for {@code quiet} (bounded by {@code atMost}). */
  static void awaitQuiet(AgentFleet fleet, Duration quiet, Duration atMost) {
    awaitQuiet(fleet.api, quiet, atMost);
  }

  /** Waits until nobody wrote to this server for {@code quiet} (bounded by {@code atMost}). */
  static void awaitQuiet(dev.respawn.testsupport.MockApi api, Duration quiet, Duration atMost) {
    Observer.awaitQuiet(() -> api.requests().writeCount(), quiet, Duration.ofMillis(100), atMost);
  }


  static long elapsedMillis(long t0) {
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
  }
}

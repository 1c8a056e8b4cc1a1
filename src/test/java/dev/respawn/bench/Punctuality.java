package dev.respawn.bench;

import dev.respawn.api.v1alpha1.AgentInstance;
import io.fabric8.kubernetes.api.model.Pod;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Restarts on a backoff (Linear 1s, jitter 0.5: due 0.5–1.5 s after the failure): the actual restart
 * minus the {@code nextRestartAt} the instance announced in its status. Two views: when the harness's
 * informer saw the new pod (includes the create request and the watch delivery), and when the operator
 * decided the start (status.lastRestart.startedAt, the operator's clock). Early would be a bug; late is
 * timer precision plus queueing.
 */
final class Punctuality {
  static final String NAME = "restart punctuality";

  private Punctuality() {}

  record Restart(String instance, int endedRun) {
    String next() {
      return Observer.podName(instance, endedRun + 1);
    }
  }

  static void run(AgentFleet fleet, Plan plan, Results results) {
    Samples seenLate = new Samples();
    Samples decidedLate = new Samples();
    long spacingMillis = 1000L / plan.punctualKillsPerSecond();
    for (int round = 0; round < plan.punctualRounds(); round++) {
      List<Restart> restarts = new ArrayList<>();
      for (String instance : fleet.punctual) {
        Pod live = fleet.livePod(AgentFleet.AGENTS, instance);
        fleet.fail(live);
        restarts.add(new Restart(instance, Observer.run(live)));
        Observer.window(Duration.ofMillis(spacingMillis)); // the pace of the failures
      }
      for (Restart r : restarts) {
        Observer.Seen seen = fleet.observer.awaitPod(AgentFleet.AGENTS, r.next(), Duration.ofSeconds(60));
        Observer.require("nextRestartAt of " + r.instance(), Duration.ofSeconds(10),
            () -> fleet.observer.announcedRestart(r.instance(), r.endedRun()).isPresent());
        Instant due = fleet.observer.announcedRestart(r.instance(), r.endedRun()).get();
        seenLate.add(Duration.between(due, seen.at()).toNanos());
        Observer.require(r.instance() + " recovered on " + r.next(), AgentFleet.SETTLE,
            () -> fleet.recovered(r.instance(), r.next()));
        AgentInstance i = fleet.observer.instance(r.instance()).orElseThrow();
        var last = i.getStatus().lastRestart;
        if (last != null && r.next().equals(last.pod) && last.startedAt != null) {
          decidedLate.add(Duration.between(due, Instant.parse(last.startedAt)).toNanos());
        }
      }
    }
    long earlySeen = seenLate.count(x -> x < 0);
    long earlyDecided = decidedLate.count(x -> x < 0);
    results.goal(NAME, "restarts before nextRestartAt (of " + seenLate.size() + ")", earlySeen + " seen, "
        + earlyDecided + " decided", "never early", earlySeen == 0 && earlyDecided == 0);
    results.goal(NAME, "late, p50 / p99 (pod seen by the harness)", Results.ms(seenLate.p50()) + " / "
        + Results.ms(seenLate.p99()), "p99 < 100 ms", seenLate.p99() < 100_000_000L);
    results.info(NAME, "late, max (pod seen by the harness)", Results.ms(seenLate.max()));
    results.info(NAME, "late, p50 / p99 / max (operator's decision)", Results.ms(decidedLate.p50()) + " / "
        + Results.ms(decidedLate.p99()) + " / " + Results.ms(decidedLate.max()));
    results.note(NAME, String.format(Locale.ROOT, "%d instances × %d round(s), failures spread at %d/s; backoff "
        + "Linear 1s with jitter 0.5 (due 0.5–1.5 s after each failure); decided = status.lastRestart.startedAt "
        + "(%d of %d restarts), seen = the new pod's ADD at the harness's informer (includes the create request "
        + "and the watch delivery); afterwards %s", fleet.punctual.size(), plan.punctualRounds(),
        plan.punctualKillsPerSecond(), decidedLate.size(), seenLate.size(), fleet.storeDescription()));
  }
}

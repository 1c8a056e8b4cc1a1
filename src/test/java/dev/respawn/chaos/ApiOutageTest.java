package dev.respawn.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.chaos.ServerLedger.Faults;
import dev.respawn.chaos.ServerLedger.PodCreated;
import dev.respawn.sandbox.Run;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * An API server that refuses every write of the operator for longer than the operator's reconcile
 * retries last (JOSDK's default: 5 retries, 2 s growing by 1.5x, about 26 s in all). A restart that was
 * due during the outage must still happen once the server answers again, not hours later.
 */
class ApiOutageTest {
  static final Duration OUTAGE = Duration.ofSeconds(32);

  @Test
  void aRestartDueDuringALongOutageHappensWhenTheServerIsBack() {
    try (QuietLogs quiet = new QuietLogs(); ChaosWorld w = new ChaosWorld(1)) {
      w.policy("outage", """
          backoff: {type: Linear, initialDelay: 1s, maxDelay: 1s}
          maxRetries: 3
          """);
      w.kubelet.script("patient", Run.exit(1), Run.runForever());
      w.startOperator(0);
      w.instance("patient", "outage");
      Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> w.get("patient"),
          i -> i != null && i.getStatus() != null && i.getStatus().phase == Phase.Backoff);
      // every write of the operator fails from now on, before it reaches the store
      w.ledger.faults(new Faults(1.0, 0, 0));
      // the outage lasts until the operator has tried to start run 2 more often than JOSDK's default
      // retry (5 attempts, then a 10 h maximum interval) would: it must keep retrying
      Awaitility.await().atMost(OUTAGE.multipliedBy(3)).pollInterval(Duration.ofMillis(200))
          .until(() -> refusedCreates(w) >= 7);
      w.ledger.faults(Faults.NONE);
      Instant back = Instant.now();
      long refused = refusedCreates(w);
      assertThat(refused).as("the operator tried to start run 2 during the outage").isPositive();
      // retried at least every 10 s (RespawnOperator.RETRY): run 2 starts soon after the server is back
      AgentInstance running = Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> w.get("patient"),
          i -> i.getStatus().run == 2 && i.getStatus().phase == Phase.Running);
      List<PodCreated> created = w.ledger.pods();
      System.out.printf("ApiOutageTest: %d pod creates refused during the %d s outage; run 2 started %d ms after it%n",
          refused, OUTAGE.toSeconds(), Duration.between(back, created.get(created.size() - 1).at()).toMillis());
      assertThat(created).extracting(PodCreated::pod).containsExactly("patient-1", "patient-2");
      assertThat(running.getStatus().restarts).isEqualTo(1);
      assertThat(running.getStatus().attempt).isEqualTo(1);
    }
  }

  private static long refusedCreates(ChaosWorld w) {
    return w.ledger.injected().stream().filter(l -> l.contains("POST /api/v1/namespaces/test/pods")).count();
  }
}

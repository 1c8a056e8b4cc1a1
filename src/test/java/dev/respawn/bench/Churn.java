package dev.respawn.bench;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.testsupport.MockApi;
import dev.respawn.testsupport.RequestLog;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * Nothing grows with churn (api.md §8): an operator process of its own ({@link OperatorProcess}) watches
 * {@value #ROUNDS} rounds of N instances created (each gets its Lease, its pod and a status write) and
 * deleted again with their pods and Leases (the garbage collector's part, which the mock does not play);
 * its heap after a full GC is taken before the first round and after each, and with
 * {@code -Drespawn.bench.churn.settleMinutes=N} once more N minutes after the last round (anything kept for a
 * while only would be gone by then; the cancelled JOSDK timer tasks of deleted instances were such, until the
 * operator's own wake-ups replaced JOSDK's reschedule).
 */
final class Churn {
  static final String NAME = "churn";
  static final String NS = "churn";
  static final String POLICY = "standard";
  static final int ROUNDS = 10;
  static final double GOAL = 0.10;

  private Churn() {}

  static void run(Plan plan, Results results) {
    int n = plan.churnInstances();
    try (MockApi api = MockApi.start()) {
      KubernetesClient harness = api.newClient(b -> b.withUserAgent(AgentFleet.HARNESS));
      AgentRestartPolicy policy = new AgentRestartPolicy();
      policy.setMetadata(new ObjectMetaBuilder().withName(POLICY).withNamespace(NS).build());
      policy.setSpec(Serialization.unmarshal(OutageWorld.HEARTBEAT, AgentRestartPolicySpec.class));
      harness.resource(policy).create();
      try (ForkedOperator operator = new ForkedOperator(api.url(), NS, AgentFleet.OPERATOR).awaitStarted()) {
        long empty = operator.heapAfterGc();
        List<Long> heaps = new ArrayList<>();
        List<Long> live = new ArrayList<>();
        for (int r = 0; r < ROUNDS; r++) {
          long t0 = System.nanoTime();
          String prefix = "c" + r + "-";
          List<String> names = AgentFleet.names(prefix, n);
          AgentFleet.inParallel(names, name -> harness.resource(AgentFleet.instance(NS, name, POLICY)).create());
          int expected = n * (r + 1);
          Observer.require("round " + r + ": every instance reconciled and its status written", Duration.ofMinutes(10),
              () -> operator.stats()[1] >= expected && statusWritten(api, prefix) >= n);
          harness.resources(AgentInstance.class).inNamespace(NS).delete();
          harness.pods().inNamespace(NS).delete();
          harness.leases().inNamespace(NS).delete();
          Observer.require("round " + r + ": everything deleted", Duration.ofMinutes(5), () -> harness.resources(
              AgentInstance.class).inNamespace(NS).list().getItems().isEmpty() && harness.pods().inNamespace(NS).list()
              .getItems().isEmpty());
          MassFailure.awaitQuiet(api, Duration.ofSeconds(2), Duration.ofMinutes(2));
          heaps.add(operator.heapAfterGc());
          live.add(operator.liveBytes());
          System.out.printf("  churn round %d: %,d instances created and deleted in %s, operator heap %s, live objects "
              + "%,d bytes%n", r + 1, n, Results.seconds(System.nanoTime() - t0), Results.mib(heaps.get(r)), live.get(r));
        }
        long first = heaps.get(0);
        long last = heaps.get(heaps.size() - 1);
        double growth = (last - first) / (double) first;
        results.goal(NAME, String.format(Locale.ROOT, "operator heap after GC, round 1 → round %d (%,d instances "
            + "created and deleted per round)", ROUNDS, n), Results.mib(first) + " → " + Results.mib(last) + " ("
            + String.format(Locale.ROOT, "%+.1f%%", 100 * growth) + ")", "within ±10 %", Math.abs(growth) <= GOAL);
        double liveGrowth = (live.get(ROUNDS - 1) - live.get(0)) / (double) live.get(0);
        results.goal(NAME, String.format(Locale.ROOT, "operator's live objects, round 1 → round %d (class histogram "
            + "after a full GC)", ROUNDS), String.format(Locale.ROOT, "%.1f → %.1f MB (%+.1f%%)", live.get(0) / 1e6,
            live.get(ROUNDS - 1) / 1e6, 100 * liveGrowth), "within ±10 %", Math.abs(liveGrowth) <= GOAL);
        long settle = Long.getLong("respawn.bench.churn.settleMinutes", 0);
        if (settle > 0) {
          // what is kept of deleted objects for a while only (cancelled wake-ups until due) is gone by now
          Observer.window(Duration.ofMinutes(settle));
          long settled = operator.heapAfterGc();
          long settledLive = operator.liveBytes();
          results.info(NAME, "operator heap after GC, " + settle + " min after the last round", Results.mib(settled)
              + String.format(Locale.ROOT, " (%+.1f%% against round 1); live objects %.1f MB (%+.1f%%)",
              100.0 * (settled - first) / first, settledLive / 1e6, 100.0 * (settledLive - live.get(0)) / live.get(0)));
        }
        results.note(NAME, "operator process heap after a full GC before the first round " + Results.mib(empty)
            + ", after each round: " + heaps.stream().map(Results::mib).collect(Collectors.joining(", "))
            + "; live objects after each round (MB): " + live.stream().map(b -> String.format(Locale.ROOT, "%.2f", b / 1e6))
            .collect(Collectors.joining(", "))
            + "; each round's instances were deleted with their pods and Leases before the heap was taken");
      }
    }
  }

  /** Instances of this round whose status the operator wrote. */
  private static long statusWritten(MockApi api, String prefix) {
    return api.requests().matching(r -> r.userAgent().equals(AgentFleet.OPERATOR) && r.verb().equals("PATCH")
        && r.resource().equals("agentinstances.respawn.dev/status") && r.code() < 300
        && r.path().contains("/agentinstances/" + prefix)).stream().map(RequestLog.Request::path).distinct().count();
  }
}

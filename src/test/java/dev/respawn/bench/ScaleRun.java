package dev.respawn.bench;

import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.controller.OperatorSettings;
import dev.respawn.controller.RespawnOperator;
import dev.respawn.testsupport.MockApi;
import dev.respawn.testsupport.RequestLog;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * Scale, in steps on one mock server that keeps its store between steps (building 1,000, 5,000 and
 * 10,000 instances from scratch each would triple the time the mock takes to fill; it slows as it fills).
 * Each step: the harness adds instances up to N (no kubelet: each new instance needs a Lease, a pod and
 * a status write); a fresh operator starts, and the time until it has reconciled every instance and
 * the server has answered the status write of every new one is taken, with how busy the server was
 * meanwhile; reconciles per minute when nothing happens; the operator's heap after GC (the harness
 * JVM's heap with the operator running minus after it was stopped and dropped: the mock's store and the
 * request log stay in both); then a second fresh operator on the converged world (an operator restart,
 * a leader failover): the time until it has reconciled all N, writing nothing.
 */
final class ScaleRun implements AutoCloseable {
  static final String NAME = "scale";
  static final String NS = "scale";
  static final String POLICY = "standard";
  static final long HEAP_GOAL = 256L << 20;
  static final Duration CONVERGE = Duration.ofMinutes(40);

  private final MockApi api = MockApi.start();
  private final KubernetesClient harness = api.newClient(b -> b.withUserAgent(AgentFleet.HARNESS));
  private int instances;

  ScaleRun() {
    AgentRestartPolicy policy = new AgentRestartPolicy();
    policy.setMetadata(new ObjectMetaBuilder().withName(POLICY).withNamespace(NS).build());
    policy.setSpec(new AgentRestartPolicySpec());
    harness.resource(policy).create();
  }

  void step(int n, Plan plan, Results results, boolean goalStep) {
    String size = String.format(Locale.ROOT, "%,d", n);
    int before = instances;
    long f0 = System.nanoTime();
    AgentFleet.inParallel(IntStream.range(before, n).mapToObj(i -> "s-" + i).toList(), name ->
        harness.resource(AgentFleet.instance(NS, name, POLICY)).create());
    long fill = System.nanoTime() - f0;
    instances = n;
    System.out.printf("  scale %s: %,d instances added in %s%n", size, n - before, Results.seconds(fill));

    Operated first = operate(n, plan, true);
    String fresh = before == 0 ? "" : String.format(Locale.ROOT, " (%,d new)", n - before);
    results.info(NAME, size + " instances" + fresh + ": operator start → all reconciled",
        Results.seconds(first.convergedNanos()) + ", mock busy " + percent(first.mockBusyShare()));
    results.goal(NAME, size + " instances: reconciles per minute, idle", Results.number(first.idlePerMinute()), "~0",
        first.idlePerMinute() < 1);
    String heap = Results.mib(first.operatorHeap()) + " (JVM " + Results.mib(first.totalHeap()) + ")";
    if (goalStep) {
      results.goal(NAME, size + " instances: operator heap after GC", heap, "≤ 256 MiB",
          first.operatorHeap() <= HEAP_GOAL);
    } else {
      results.info(NAME, size + " instances: operator heap after GC", heap);
    }
    Operated restart = operate(n, plan, false);
    results.info(NAME, size + " instances: operator restart → all reconciled", Results.seconds(
        restart.convergedNanos()) + ", " + restart.writes() + " writes");
    if (restart.writes() > 0) {
      results.note(NAME, size + ": writes of the restarted operator: " + restart.writeMix());
    }
    results.note(NAME, String.format(Locale.ROOT, "%s: the harness added %,d instances in %s (%.0f/s, operator "
        + "stopped); the operator then made %,d writes (%s) with %.2f reconciles per instance; the mock server "
        + "was busy %s of that time (one global lock, a scan of the whole store on every request)", size,
        n - before, Results.seconds(fill), (n - before) / (fill / 1e9), first.writes(), first.writeMix(),
        first.reconciles() / (double) n, percent(first.mockBusyShare())));
  }

  record Operated(long convergedNanos, double mockBusyShare, long writes, String writeMix, long reconciles,
      double idlePerMinute, long totalHeap, long operatorHeap) {}

  /** Starts a fresh operator, waits until it reconciled all {@code n}; with {@code measure}, idle and heap too. */
  private Operated operate(int n, Plan plan, boolean measure) {
    KubernetesClient client = api.newClient(b -> b.withUserAgent(AgentFleet.OPERATOR));
    CountingSink sink = AgentFleet.productionSink(client);
    RespawnOperator operator = new RespawnOperator(client, OperatorSettings.defaults().withNamespaces(Set.of(NS)),
        sink, Optional.empty());
    try {
      long s0 = System.nanoTime();
      operator.start();
      long deadline = s0 + CONVERGE.toNanos();
      while (System.nanoTime() < deadline && !converged(n, sink)) {
        Observer.sleep(sink.reconciledInstances() < n ? 100 : 500);
      }
      if (!converged(n, sink)) {
        throw new IllegalStateException("only " + sink.reconciledInstances() + " of " + n
            + " instances reconciled within " + CONVERGE);
      }
      long done = System.nanoTime();
      List<RequestLog.Request> during = api.requests().matching(r -> r.startNanos() >= s0 && r.startNanos() <= done);
      List<RequestLog.Request> writes = during.stream().filter(r -> r.isWrite()
          && r.userAgent().equals(AgentFleet.OPERATOR)).toList();
      String mix = writes.stream().collect(Collectors.groupingBy(RequestLog.Request::key, java.util.TreeMap::new,
          Collectors.counting())).entrySet().stream().map(e -> e.getKey() + " " + String.format(Locale.ROOT, "%,d",
          e.getValue())).collect(Collectors.joining(", "));
      long reconciles = sink.reconciles();
      double busy = busyNanos(during) / (double) (done - s0);
      if (!measure) {
        awaitNoWrites(); // closing it amid reconciles would show JOSDK's shutdown, not the restart
        return new Operated(done - s0, busy, writes.size(), mix, reconciles, 0, 0, 0);
      }
      Observer.sleep(2000); // stragglers: the watch events of the operator's last writes
      long r0 = sink.reconciles();
      long i0 = System.nanoTime();
      Observer.sleep(plan.idleWindow().toMillis());
      double idle = (sink.reconciles() - r0) * 60e9 / (System.nanoTime() - i0);
      long total = heapAfterGc();
      operator.close();
      client.close();
      operator = null;
      sink = null;
      client = null;
      Observer.sleep(1000);
      long without = heapAfterGc();
      return new Operated(done - s0, busy, writes.size(), mix, reconciles, idle, total, total - without);
    } finally {
      if (operator != null) {
        operator.close();
        client.close();
      }
    }
  }

  /** Waits until the operator wrote nothing for a second (at most a minute). */
  private void awaitNoWrites() {
    long last = api.requests().writeCount(AgentFleet.OPERATOR);
    long quietSince = System.nanoTime();
    long deadline = quietSince + Duration.ofMinutes(1).toNanos();
    while (System.nanoTime() < deadline && System.nanoTime() - quietSince < 1_000_000_000L) {
      Observer.sleep(200);
      long now = api.requests().writeCount(AgentFleet.OPERATOR);
      if (now != last) {
        last = now;
        quietSince = System.nanoTime();
      }
    }
  }

  /** Every instance reconciled, and the server answered a status write for each (the operator's last act). */
  private boolean converged(int n, CountingSink sink) {
    if (sink.reconciledInstances() < n) {
      return false;
    }
    long withStatus = api.requests().matching(r -> r.userAgent().equals(AgentFleet.OPERATOR)
        && r.verb().equals("PATCH") && r.resource().equals("agentinstances.respawn.dev/status") && r.code() < 300)
        .stream().map(RequestLog.Request::path).distinct().count();
    return withStatus >= n;
  }

  private static String percent(double share) {
    return String.format(Locale.ROOT, "%.0f%%", 100 * share);
  }

  /** Time during which at least one request was inside the mock's dispatcher. */
  static long busyNanos(List<RequestLog.Request> requests) {
    List<RequestLog.Request> sorted = requests.stream().sorted(Comparator.comparingLong(RequestLog.Request::startNanos))
        .toList();
    long busy = 0;
    long from = 0;
    long to = 0;
    boolean open = false;
    for (RequestLog.Request r : sorted) {
      long s = r.startNanos();
      long e = s + r.durationNanos();
      if (!open || s > to) {
        busy += open ? to - from : 0;
        from = s;
        to = e;
        open = true;
      } else {
        to = Math.max(to, e);
      }
    }
    return busy + (open ? to - from : 0);
  }

  static long heapAfterGc() {
    for (int i = 0; i < 3; i++) {
      System.gc();
      Observer.sleep(200);
    }
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }

  @Override
  public void close() {
    api.close();
  }
}

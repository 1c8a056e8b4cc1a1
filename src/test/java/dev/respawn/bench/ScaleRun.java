package dev.respawn.bench;

import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.testsupport.MockApi;
import dev.respawn.testsupport.RequestLog;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * Scale, in steps on one mock server that keeps its store between steps (building 1,000, 5,000 and
 * 10,000 instances from scratch each would take the mock half as long again; it slows as it fills).
 * Each step: the harness adds instances up to N (no kubelet: each new instance needs a Lease, a pod and
 * a status write); a fresh operator process ({@link OperatorProcess}, a JVM of its own like in
 * production) starts, and the time until it has reconciled every instance and the server has answered
 * the status write of every new one is taken, with how busy the server was meanwhile; reconciles per
 * minute when nothing happens; its heap after GC; then a second fresh operator process on the converged
 * world (an operator restart, a leader failover): the time until it has reconciled all N, and its writes.
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
    String heap = Results.mib(first.operatorHeap());
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
    results.note(NAME, String.format(Locale.ROOT, "%s: the harness added %,d instances in %s (%.0f/s, no operator "
        + "running); the operator process started (JVM start and informers synced) in %s, then made %,d writes "
        + "(%s) with %.2f reconciles per instance; the mock server was busy %s of the time from start to all "
        + "reconciled (one global lock, a scan of the whole store on every request)", size, n - before,
        Results.seconds(fill), (n - before) / (fill / 1e9), Results.seconds(first.startedNanos()), first.writes(),
        first.writeMix(), first.reconciles() / (double) n, percent(first.mockBusyShare())));
  }

  record Operated(long convergedNanos, long startedNanos, double mockBusyShare, long writes, String writeMix,
      long reconciles, double idlePerMinute, long operatorHeap) {}

  /**
   * Starts a fresh operator process and waits until it reconciled all {@code n}; with {@code measure},
   * reconciles when idle and its heap too.
   */
  private Operated operate(int n, Plan plan, boolean measure) {
    long s0 = System.nanoTime();
    try (ForkedOperator operator = new ForkedOperator(api.url(), NS, AgentFleet.OPERATOR)) {
      operator.awaitStarted();
      long started = System.nanoTime() - s0;
      long deadline = s0 + CONVERGE.toNanos();
      Observer.await(Duration.ofNanos(deadline - System.nanoTime()), Duration.ofMillis(200),
          () -> converged(n, operator.stats()[1]));
      long[] stats = operator.stats();
      if (!converged(n, stats[1])) {
        throw new IllegalStateException("only " + stats[1] + " of " + n + " instances reconciled within " + CONVERGE);
      }
      long done = System.nanoTime();
      List<RequestLog.Request> during = api.requests().matching(r -> r.startNanos() >= s0 && r.startNanos() <= done);
      List<RequestLog.Request> writes = during.stream().filter(r -> r.isWrite()
          && r.userAgent().equals(AgentFleet.OPERATOR)).toList();
      String mix = writes.stream().collect(Collectors.groupingBy(RequestLog.Request::key, java.util.TreeMap::new,
          Collectors.counting())).entrySet().stream().map(e -> e.getKey() + " " + String.format(Locale.ROOT, "%,d",
          e.getValue())).collect(Collectors.joining(", "));
      double busy = busyNanos(during) / (double) (done - s0);
      if (!measure) {
        awaitNoWrites(); // stopping it amid its writes would show the shutdown, not the restart
        return new Operated(done - s0, started, busy, writes.size(), mix, stats[0], 0, 0);
      }
      // stragglers: the watch events of the operator's last writes, until it has reconciled nothing for a second
      Observer.awaitQuiet(() -> operator.stats()[0], Duration.ofSeconds(1), Duration.ofMillis(200),
          Duration.ofMinutes(1));
      long r0 = operator.stats()[0];
      long i0 = System.nanoTime();
      Observer.window(plan.idleWindow());
      double idle = (operator.stats()[0] - r0) * 60e9 / (System.nanoTime() - i0);
      return new Operated(done - s0, started, busy, writes.size(), mix, stats[0], idle, operator.heapAfterGc());
    }
  }

  /** Waits until the operator wrote nothing for a second (at most a minute). */
  private void awaitNoWrites() {
    Observer.awaitQuiet(() -> api.requests().writeCount(AgentFleet.OPERATOR), Duration.ofSeconds(1),
        Duration.ofMillis(200), Duration.ofMinutes(1));
  }


  /** Every instance reconciled, and the server answered a status write for each (the operator's last act). */
  private boolean converged(int n, long reconciledInstances) {
    if (reconciledInstances < n) {
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

  /** Used heap after full GCs, once another GC frees less than 1 % more (at most five). */
  static long heapAfterGc() {
    long used = Long.MAX_VALUE;
    for (int i = 0; i < 5; i++) {
      System.gc();
      long now = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
      if (now >= used * 0.99) {
        return Math.min(now, used);
      }
      used = now;
    }
    return used;
  }

  @Override
  public void close() {
    api.close();
  }
}

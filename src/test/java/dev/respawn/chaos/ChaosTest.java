package dev.respawn.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentInstanceStatus;
import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.api.v1alpha1.TerminalReason;
import dev.respawn.chaos.ServerLedger.Faults;
import dev.respawn.chaos.ServerLedger.PodCreated;
import dev.respawn.chaos.ServerLedger.StatusStored;
import dev.respawn.sandbox.Run;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;

/**
 * Chaos: many restart sequences while the operator is killed at random moments and replaced by a fresh
 * one, while a fraction of its writes fail (500/429 before the server applies them, 500 after it did),
 * its watches are dropped, and the test edits the instances under it (genuine 409 conflicts on its
 * status writes). Everything random comes from one seed: {@value #SEED_PROPERTY} (default
 * {@value #DEFAULT_SEED}); the thread interleaving is the machine's.
 *
 * <p>Checked at the end, from the API server's state and history: every instance ended exactly where
 * its kubelet script leads (no restart lost, none added: run, restarts, attempt, phase, terminal reason,
 * circuit state and trips exact); each instance's pods are exactly {@code <name>-1..<name>-N}, each
 * created once; never two live pods of one instance at once; and no pod was created before the
 * nextRestartAt the server held for it when the create arrived.
 */
class ChaosTest {
  static final String SEED_PROPERTY = "respawn.chaos.seed";
  static final long DEFAULT_SEED = 20261122L;
  static final Duration CHAOS = Duration.ofSeconds(10);
  static final Duration SETTLE = Duration.ofSeconds(Long.getLong("respawn.chaos.settleSeconds", 60));

  /** Where a story must end. attempt null: not checked. */
  record Expect(int runs, Phase phase, TerminalReason terminal, int restarts, Integer attempt, CircuitState circuit,
      int trips) {}

  record Story(String name, String policy, List<Run> runs, Expect expect) {}

  /** One operator kill: when, how long the operator stays down, how, and what its successor meets. */
  record Kill(long atMs, long downMs, boolean abrupt, Faults faults, int clientRetries) {}

  @Test
  void restartSequencesSurviveOperatorKillsAndApiFaults() {
    long seed = Long.getLong(SEED_PROPERTY, DEFAULT_SEED);
    String rerun = "chaos seed " + seed + " (rerun with -D" + SEED_PROPERTY + "=" + seed + ")";
    System.out.println("ChaosTest: " + rerun);
    SplittableRandom random = new SplittableRandom(seed);
    long started = System.nanoTime();
    try (QuietLogs quiet = new QuietLogs(); ChaosWorld w = new ChaosWorld(seed)) {
      // Timings are chosen so that a slow machine cannot change a story: runs end within ~0.3 s, far from
      // resetAfter (a failing run never looks healthy); a HalfOpen trial has 1.5 s to start running.
      int initialMs = 100 + random.nextInt(201);
      w.policy("steady", """
          backoff: {type: Exponential, initialDelay: %dms, multiplier: 2.0, maxDelay: 1s}
          maxRetries: 3
          resetAfter: 2s
          restartLimit: {maxRestarts: 20, window: 1h}
          circuitBreaker: {failureThreshold: 5, window: 10m, openDuration: 1s}
          """.formatted(initialMs));
      w.policy("latch", """
          backoff: {type: Exponential, initialDelay: %dms, maxDelay: 1s}
          maxRetries: 5
          circuitBreaker: {failureThreshold: 2, window: 10m, openDuration: 1s, latch: true}
          """.formatted(initialMs));
      w.policy("trial", """
          backoff: {type: Linear, initialDelay: 100ms, maxDelay: 300ms}
          maxRetries: 10
          resetAfter: 2s
          circuitBreaker: {failureThreshold: 2, window: 10m, openDuration: 1500ms}
          """);
      List<Story> stories = new ArrayList<>();
      for (String round : List.of("a", "b")) {
        stories.addAll(stories(round, random));
      }
      stories.forEach(s -> w.kubelet.script(s.name(), s.runs().toArray(Run[]::new)));
      List<Story> order = shuffled(stories, random);
      List<Kill> kills = kills(random);
      long[] drops = IntStream.range(0, 8).mapToLong(i -> random.nextLong(CHAOS.toMillis())).sorted().toArray();

      List<String> log = new CopyOnWriteArrayList<>();
      w.ledger.faults(profile(1));
      w.startOperator(random.nextInt(3));
      ScheduledExecutorService chaos = Executors.newScheduledThreadPool(3);
      try {
        // instances appear at random moments of the first half
        Map<String, Boolean> created = new ConcurrentHashMap<>();
        for (Story s : order) {
          chaos.schedule(() -> {
            w.instance(s.name(), s.policy());
            created.put(s.name(), true);
          }, random.nextLong(CHAOS.toMillis() / 2), TimeUnit.MILLISECONDS);
        }
        // the operator is killed and replaced, each successor with its own faults
        chaos.execute(() -> {
          long begin = System.nanoTime();
          for (Kill k : kills) {
            sleep(k.atMs() - (System.nanoTime() - begin) / 1_000_000);
            w.killOperator(k.abrupt());
            log.add(Instant.now() + " operator killed" + (k.abrupt() ? " abruptly" : "") + ", down " + k.downMs() + " ms");
            sleep(k.downMs());
            w.ledger.faults(k.faults());
            int n = w.startOperator(k.clientRetries());
            log.add(Instant.now() + " operator " + n + " started: " + k.faults() + ", client retries " + k.clientRetries());
          }
        });
        // its watches are dropped now and then
        for (long d : drops) {
          chaos.schedule(() -> log.add(Instant.now() + " dropped " + w.dropOperatorWatches() + " operator watches"),
              d, TimeUnit.MILLISECONDS);
        }
        // and the instances are edited under it: its next status write with the old resourceVersion gets a 409
        for (int k = 0; k < 30; k++) {
          String victim = order.get(random.nextInt(order.size())).name();
          int n = k;
          chaos.schedule(() -> {
            if (created.containsKey(victim)) {
              w.touch(victim, n);
            }
          }, random.nextLong(CHAOS.toMillis()), TimeUnit.MILLISECONDS);
        }
        sleep(CHAOS.toMillis());
      } finally {
        chaos.shutdown();
        awaitTermination(chaos);
      }
      w.ledger.faults(Faults.NONE);
      if (!w.operatorRunning()) {
        w.startOperator(0);
      }
      long chaosDone = System.nanoTime();

      String diagnostics = "";
      try {
        awaitSettled(w, stories);
        sleep(1500); // nothing more may happen: no late restart, no extra pod
        diagnostics = diagnostics(w, stories, log);
        check(w, stories);
      } catch (AssertionError | ConditionTimeoutException e) {
        if (diagnostics.isEmpty()) {
          diagnostics = diagnostics(w, stories, log);
        }
        throw new AssertionError(rerun + ": " + e.getMessage() + "\n" + diagnostics, e);
      }
      long conflicts = w.api.requests().matching(q -> q.code() == 409
          && q.resource().equals("agentinstances.respawn.dev/status")).size();
      System.out.printf("ChaosTest seed %d: %d instances, %d pods, %d operator kills, %d faults injected, %d status "
          + "conflicts, settled %.1f s after the chaos, %.1f s in all%n", seed, stories.size(), w.ledger.pods().size(),
          kills.size(), w.ledger.injected().size(), conflicts, (System.nanoTime() - chaosDone) / 1e9,
          (System.nanoTime() - started) / 1e9);
    }
  }

  /** 4..6 kills spread over the chaos; after each, the successor meets no, light or heavy faults. */
  static List<Kill> kills(SplittableRandom random) {
    int n = 4 + random.nextInt(3);
    List<Kill> kills = new ArrayList<>();
    long t = 0;
    for (int k = 0; k < n; k++) {
      t += 500 + random.nextLong(CHAOS.toMillis() / n);
      kills.add(new Kill(t, random.nextLong(500), random.nextBoolean(), profile(random.nextInt(3)),
          List.of(0, 1, 3).get(random.nextInt(3))));
    }
    return kills;
  }

  static <T> List<T> shuffled(List<T> list, SplittableRandom random) {
    List<T> out = new ArrayList<>(list);
    for (int i = out.size() - 1; i > 0; i--) {
      int j = random.nextInt(i + 1);
      T t = out.get(i);
      out.set(i, out.get(j));
      out.set(j, t);
    }
    return out;
  }

  /** The scripted stories of one round; run durations random. */
  static List<Story> stories(String round, SplittableRandom random) {
    Function<Run, Run> vary = r -> r.startAfter(Duration.ofMillis(random.nextInt(80)))
        .after(Duration.ofMillis(random.nextInt(250)));
    Run forever = Run.runForever();
    return List.of(
        new Story("flaky-" + round, "steady", List.of(vary.apply(Run.exit(1)), vary.apply(Run.exit(1)), forever),
            new Expect(3, Phase.Running, null, 2, 0, CircuitState.Closed, 0)),
        new Story("exhausted-" + round, "steady", List.of(vary.apply(Run.exit(1)), vary.apply(Run.exit(1)),
            vary.apply(Run.exit(1)), vary.apply(Run.exit(1))),
            new Expect(4, Phase.Escalated, TerminalReason.RestartLimitExceeded, 3, 4, CircuitState.Closed, 0)),
        new Story("clean-" + round, "steady", List.of(vary.apply(Run.exit(1)), vary.apply(Run.exit(0))),
            new Expect(2, Phase.Succeeded, TerminalReason.CleanExit, 1, null, CircuitState.Closed, 0)),
        new Story("requested-" + round, "steady", List.of(vary.apply(Run.exit(42)), vary.apply(Run.exit(42)), forever),
            new Expect(3, Phase.Running, null, 2, 0, CircuitState.Closed, 0)),
        new Story("latched-" + round, "latch", List.of(vary.apply(Run.exit(1)), vary.apply(Run.exit(1))),
            new Expect(2, Phase.Escalated, TerminalReason.CircuitBreakerOpen, 1, 2, CircuitState.Open, 1)),
        new Story("fatal-" + round, "steady",
            List.of(vary.apply(Run.exit(2, "Error", "invalid_configuration: unknown flag --x"))),
            new Expect(1, Phase.Failed, TerminalReason.UnrecoverableError, 0, null, CircuitState.Closed, 0)),
        new Story("mixed-" + round, "steady", List.of(vary.apply(Run.evicted()), vary.apply(Run.oomKilled()), forever),
            new Expect(3, Phase.Running, null, 2, 0, CircuitState.Closed, 0)),
        new Story("trial-" + round, "trial", List.of(vary.apply(Run.exit(1)), vary.apply(Run.exit(1)),
            vary.apply(Run.exit(1)), forever),
            new Expect(4, Phase.Running, null, 3, 0, CircuitState.Closed, 2)));
  }

  static Faults profile(int n) {
    return switch (n) {
      case 0 -> Faults.NONE;
      case 1 -> new Faults(0.05, 0.03, 0.02);
      default -> new Faults(0.12, 0.06, 0.05);
    };
  }

  static void awaitSettled(ChaosWorld w, List<Story> stories) {
    Awaitility.await().atMost(SETTLE).pollInterval(Duration.ofMillis(100)).until(() -> stories.stream()
        .allMatch(s -> settled(w.get(s.name()), s.expect())));
  }

  static boolean settled(AgentInstance i, Expect e) {
    if (i == null || i.getStatus() == null || i.getStatus().run == null) {
      return false;
    }
    AgentInstanceStatus st = i.getStatus();
    return st.run >= e.runs() && st.phase == e.phase() && (e.attempt() == null || Objects.equals(st.attempt,
        e.attempt()));
  }

  static void check(ChaosWorld w, List<Story> stories) {
    for (Story s : stories) {
      Expect e = s.expect();
      AgentInstanceStatus st = w.get(s.name()).getStatus();
      String who = s.name() + " ";
      assertThat(st.run).as(who + "run").isEqualTo(e.runs());
      assertThat(st.currentPod).as(who + "currentPod").isEqualTo(s.name() + "-" + e.runs());
      assertThat(st.phase).as(who + "phase").isEqualTo(e.phase());
      assertThat(st.terminalReason).as(who + "terminalReason").isEqualTo(e.terminal());
      assertThat(st.restarts).as(who + "restarts").isEqualTo(e.restarts());
      if (e.attempt() != null) {
        assertThat(st.attempt).as(who + "attempt").isEqualTo(e.attempt());
      }
      assertThat(st.circuitBreaker.state).as(who + "circuit").isEqualTo(e.circuit());
      assertThat(st.circuitBreaker.trips).as(who + "trips").isEqualTo(e.trips());
      if (s.policy().equals("steady")) { // restartLimit 20 in 1 h: every restart is in the window
        assertThat(st.recentRestarts == null ? List.of() : st.recentRestarts).as(who + "recentRestarts")
            .hasSize(e.restarts());
      }
      int ended = e.phase() == Phase.Running ? e.runs() - 1 : e.runs();
      assertThat(st.history).as(who + "history").hasSize(Math.min(10, ended));
      assertThat(st.history).as(who + "history runs").extracting(r -> r.pod)
          .containsExactlyElementsOf(IntStream.rangeClosed(1, ended).mapToObj(n -> s.name() + "-" + n).toList());
      // the pods: exactly <name>-1..N, in order, each created once
      List<String> expected = IntStream.rangeClosed(1, e.runs()).mapToObj(n -> s.name() + "-" + n).toList();
      assertThat(w.timeline.created(s.name())).as(who + "pods the test's watch saw").isEqualTo(expected);
      assertThat(w.ledger.pods().stream().filter(p -> s.name().equals(p.instance())).map(PodCreated::pod).toList())
          .as(who + "pods the server created").isEqualTo(expected);
    }
    assertThat(w.timeline.violations()).as("moments an instance had two live pods").isEmpty();
    assertThat(w.kubelet.errors()).as("simulated kubelet errors").isEmpty();
    assertThat(earlyStarts(w.ledger, stories.stream().map(Story::name).collect(Collectors.toSet())))
        .as("pods created before their nextRestartAt").isEmpty();
  }

  /**
   * Each pod of run r >= 2 against the last status the server stored for its instance before the create
   * arrived: when that status is still on run r-1 and has a nextRestartAt, the create must not be earlier.
   */
  static List<String> earlyStarts(ServerLedger ledger, java.util.Set<String> instances) {
    List<String> early = new ArrayList<>();
    List<StatusStored> statuses = ledger.statuses();
    for (PodCreated p : ledger.pods()) {
      if (!instances.contains(p.instance()) || p.run() < 2) {
        continue;
      }
      StatusStored last = statuses.stream().filter(s -> s.instance().equals(p.instance()) && s.seq() < p.seq()
          && !s.at().isAfter(p.at())).max(Comparator.comparingLong(StatusStored::seq)).orElse(null);
      if (last != null && last.run() == p.run() - 1 && last.nextRestartAt() != null
          && p.at().isBefore(last.nextRestartAt())) {
        early.add(p.pod() + " created at " + p.at() + ", nextRestartAt " + last.nextRestartAt() + " ("
            + Duration.between(p.at(), last.nextRestartAt()).toMillis() + " ms early)");
      }
    }
    return early;
  }

  static String diagnostics(ChaosWorld w, List<Story> stories, List<String> log) {
    StringBuilder sb = new StringBuilder("chaos log:\n");
    log.forEach(l -> sb.append("  ").append(l).append('\n'));
    sb.append("requests: ").append(w.ledger.requestsByAgent()).append('\n');
    List<String> injected = w.ledger.injected();
    sb.append("faults injected: ").append(injected.size()).append('\n');
    injected.stream().limit(40).forEach(l -> sb.append("  ").append(l).append('\n'));
    for (Story s : stories) {
      AgentInstance i = w.get(s.name());
      AgentInstanceStatus st = i == null ? null : i.getStatus();
      sb.append(s.name()).append(": expected ").append(s.expect()).append("; pods ").append(w.timeline.created(
          s.name())).append("; status ").append(st == null ? "none" : "run=" + st.run + " phase=" + st.phase
          + " attempt=" + st.attempt + " restarts=" + st.restarts + " terminal=" + st.terminalReason + " circuit="
          + (st.circuitBreaker == null ? null : st.circuitBreaker.state + "/" + st.circuitBreaker.trips)
          + " next=" + st.nextRestartAt).append('\n');
      if (st != null && !settled(i, s.expect())) {
        sb.append(Serialization.asYaml(st));
        w.ledger.podWrites(s.name()).forEach(l -> sb.append("  pod write ").append(l).append('\n'));
        w.ledger.statuses().stream().filter(x -> x.instance().equals(s.name()))
            .forEach(x -> sb.append("  status ").append(x).append('\n'));
        w.client.pods().inNamespace(ChaosWorld.NS).withLabel("respawn.dev/instance", s.name()).list().getItems()
            .forEach(p -> sb.append("  server pod ").append(p.getMetadata().getName()).append(" rv ")
                .append(p.getMetadata().getResourceVersion()).append(" phase ")
                .append(p.getStatus() == null ? null : p.getStatus().getPhase()).append('\n'));
      }
    }
    if (Boolean.getBoolean("respawn.chaos.threads")) {
      Thread.getAllStackTraces().forEach((t, trace) -> {
        if (t.getName().startsWith("ReconcilerExecutor") || t.getName().contains("informer")) {
          sb.append("thread ").append(t.getName()).append(' ').append(t.getState()).append('\n');
          for (int k = 0; k < Math.min(trace.length, 25); k++) {
            sb.append("    ").append(trace[k]).append('\n');
          }
        }
      });
    }
    return sb.toString();
  }

  /** A random pause of the chaos schedule (not a synchronisation: the invariants are checked at the end). */
  private static void sleep(long ms) {
    if (ms <= 0) {
      return;
    }
    Awaitility.await().pollDelay(Duration.ofMillis(ms)).atMost(Duration.ofMillis(ms + 5_000)).until(() -> true);
  }

  private static void awaitTermination(ScheduledExecutorService s) {
    try {
      if (!s.awaitTermination(30, TimeUnit.SECONDS)) {
        s.shutdownNow();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}

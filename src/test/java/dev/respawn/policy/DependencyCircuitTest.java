package dev.respawn.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.api.v1alpha1.FailureAction;
import dev.respawn.policy.DependencyCircuit.Blame;
import dev.respawn.policy.DependencyCircuit.ProbeOutcome;
import dev.respawn.policy.DependencyCircuit.Step;
import dev.respawn.policy.DependencyCircuit.Waiter;
import dev.respawn.policy.RestartPolicy.Rule;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/** The shared circuit of api.md §11, with a fixed clock. */
class DependencyCircuitTest {
  static final Instant T0 = Instant.parse("2026-11-24T10:00:00Z");
  static final DependencySettings MODEL_API = settings(3, 2, 5.0);

  static DependencySettings settings(int threshold, int probes, double rate) {
    Rule match = new Rule("model-api", Set.of(), List.of(), List.of("HTTP 503"), Set.of(), FailureAction.Retry,
        Optional.empty(), Optional.empty());
    return new DependencySettings("model-api", match, threshold, Duration.ofMinutes(1), Duration.ofSeconds(30),
        probes, rate);
  }

  static Step advance(DependencyCircuit c, List<Blame> blames, List<Waiter> waiting, Instant now) {
    return DependencyCircuit.advance(MODEL_API, c, blames, waiting, Map.of(), Map.of(), now);
  }

  static Instant t(int seconds) {
    return T0.plusSeconds(seconds);
  }

  /**
   * A status written by hand (or by an older tool) need not carry the circuit's times: Open without openedAt waits
   * its openDuration from when it last changed (or from now), then goes HalfOpen; Closed with a release order and no
   * closedAt releases them. Nothing throws (api.md §9).
   */
  @Test
  void aCircuitReadWithoutItsTimesStillMovesOn() {
    DependencyCircuit open = new DependencyCircuit("model-api", CircuitState.Open, 1, null, null, null, null,
        List.of(), List.of(), List.of(), 0, 0);
    List<Waiter> waiting = List.of(new Waiter("a0", t(0)));
    Step first = advance(open, List.of(), waiting, t(10));
    assertThat(first.next().state()).isEqualTo(CircuitState.Open);
    assertThat(first.next().openedAt()).isEqualTo(t(10));
    assertThat(first.wakeAt()).contains(t(40));
    assertThat(advance(first.next(), List.of(), waiting, t(40)).next().state()).isEqualTo(CircuitState.HalfOpen);

    DependencyCircuit changed = new DependencyCircuit("model-api", CircuitState.Open, 1, null, null, null, t(5),
        List.of(), List.of(), List.of(), 0, 0);
    assertThat(advance(changed, List.of(), waiting, t(10)).wakeAt()).contains(t(35));

    DependencyCircuit releasing = new DependencyCircuit("model-api", CircuitState.Closed, 1, null, null, null, null,
        List.of(), List.of("a0", "a1"), List.of(), 0, 0);
    assertThat(advance(releasing, List.of(), List.of(), t(10)).next().releaseOrder()).isEmpty();
  }

  @Test
  void blamedCountsEveryDistinctInstanceWithinTheWindowWhileStatusKeepsOnlyTheNewestThresholdOfThem() {
    List<Blame> seven = java.util.stream.IntStream.range(0, 7).mapToObj(i -> new Blame("agent-" + i, t(i))).toList();
    Step opens = advance(DependencyCircuit.closed("model-api"), seven, List.of(), t(7));
    assertThat(opens.next().state()).isEqualTo(CircuitState.Open);
    assertThat(opens.next().blamed()).as("api.md §11: blamed 7 with failureThreshold 3").isEqualTo(7);
    assertThat(opens.next().recentBlame()).extracting(Blame::instance).containsExactly("agent-4", "agent-5", "agent-6");
    Step later = advance(opens.next(), seven, List.of(), t(8));
    assertThat(later.next().blamed()).isEqualTo(7);
  }

  @Test
  void aBlameIsNotForgottenWhenTheInstanceLaterFailsForAnotherReason() {
    // a0 blamed at t(0): recorded; its next run then fails with "disk full", so the fleet shows no blame of a0
    Step a0 = advance(DependencyCircuit.closed("model-api"), List.of(new Blame("a0", t(0))), List.of(), t(1));
    assertThat(a0.next().blamed()).isEqualTo(1);
    Step later = advance(a0.next(), List.of(), List.of(), t(5));
    assertThat(later.next().blamed()).as("a0's blame is still within the window").isEqualTo(1);
    Step opens = advance(later.next(), List.of(new Blame("a1", t(10)), new Blame("a2", t(20))), List.of(), t(21));
    assertThat(opens.next().state()).as("a0, a1 and a2 blamed within 1m").isEqualTo(CircuitState.Open);
    assertThat(opens.next().openedAt()).isEqualTo(t(20));
    // out of the window, a recorded blame no longer counts
    Step aged = advance(a0.next(), List.of(new Blame("a1", t(70)), new Blame("a2", t(80))), List.of(), t(81));
    assertThat(aged.next().state()).isEqualTo(CircuitState.Closed);
    assertThat(aged.next().blamed()).isEqualTo(2);
  }

  @Test
  void distinctInstancesWithinTheWindowOpenItAtTheFailureThatReachesTheThreshold() {
    DependencyCircuit closed = DependencyCircuit.closed("model-api");
    // the same instance blamed three times is one instance
    Step same = advance(closed, List.of(new Blame("a", t(0)), new Blame("a", t(1)), new Blame("a", t(2))), List.of(),
        t(3));
    assertThat(same.next().state()).isEqualTo(CircuitState.Closed);
    assertThat(same.next().blamed()).isEqualTo(1);
    // a blame older than the window does not count
    Step old = advance(closed, List.of(new Blame("a", t(-120)), new Blame("b", t(1)), new Blame("c", t(2))),
        List.of(), t(3));
    assertThat(old.next().state()).isEqualTo(CircuitState.Closed);
    Step opens = advance(closed, List.of(new Blame("a", t(0)), new Blame("b", t(1)), new Blame("c", t(2))),
        List.of(), t(3));
    assertThat(opens.next().state()).isEqualTo(CircuitState.Open);
    assertThat(opens.next().openedAt()).isEqualTo(t(2));
    assertThat(opens.next().halfOpenAt()).isEqualTo(t(32));
    assertThat(opens.next().trips()).isEqualTo(1);
    assertThat(opens.transitions()).singleElement().satisfies(x -> {
      assertThat(x.from()).isEqualTo(CircuitState.Closed);
      assertThat(x.to()).isEqualTo(CircuitState.Open);
    });
    assertThat(opens.wakeAt()).contains(t(32));
  }

  @Test
  void openWaitsItsOpenDurationThenProbesTheInstancesThatWaitedLongest() {
    DependencyCircuit open = advance(DependencyCircuit.closed("model-api"), List.of(new Blame("a", t(0)),
        new Blame("b", t(1)), new Blame("c", t(2))), List.of(), t(3)).next();
    List<Waiter> waiting = List.of(new Waiter("d", t(5)), new Waiter("c", t(2)), new Waiter("e", t(4)));
    Step early = advance(open, List.of(), waiting, t(31));
    assertThat(early.next().state()).isEqualTo(CircuitState.Open);
    assertThat(early.transitions()).isEmpty();
    Step half = advance(open, List.of(), waiting, t(32));
    assertThat(half.next().state()).isEqualTo(CircuitState.HalfOpen);
    assertThat(half.next().probes()).containsExactly("c", "e");
    assertThat(half.next().waiting()).isEqualTo(3);
    assertThat(half.next().release(MODEL_API, "c", T0, false, t(32)).now()).isTrue();
    assertThat(half.next().release(MODEL_API, "d", T0, false, t(32))).satisfies(r -> {
      assertThat(r.now()).isFalse();
      assertThat(r.at()).isEmpty();
    });
    assertThat(open.release(MODEL_API, "d", T0, false, t(10))).satisfies(r -> {
      assertThat(r.now()).isFalse();
      assertThat(r.at()).contains(t(32));
    });
  }

  @Test
  void aHealthyProbeClosesItAndTheOthersAreReleasedAtTheRateInTheOrderTheyFailed() {
    DependencyCircuit half = halfOpen();
    Step closes = DependencyCircuit.advance(MODEL_API, half, List.of(), List.of(new Waiter("d", t(5)),
        new Waiter("f", t(3)), new Waiter("e", t(4))), Map.of("c", ProbeOutcome.HEALTHY, "e", ProbeOutcome.RUNNING),
        Map.of(), t(40));
    DependencyCircuit closed = closes.next();
    assertThat(closed.state()).isEqualTo(CircuitState.Closed);
    assertThat(closed.closedAt()).isEqualTo(t(40));
    assertThat(closed.releaseOrder()).containsExactly("f", "e", "d");
    assertThat(closed.release(MODEL_API, "f", T0, false, t(40)).at()).contains(t(40));
    // 5 per second, in slots 5 % wider than 200 ms
    assertThat(closed.release(MODEL_API, "e", T0, false, t(40)).at()).contains(t(40).plusMillis(210));
    assertThat(closed.release(MODEL_API, "d", T0, false, t(40).plusMillis(419)).now()).isFalse();
    assertThat(closed.release(MODEL_API, "d", T0, false, t(40).plusMillis(420)).now()).isTrue();
    // once every release time passed, the order is forgotten
    Step later = advance(closed, List.of(), List.of(), t(41));
    assertThat(later.next().releaseOrder()).isEmpty();
    assertThat(later.transitions()).isEmpty();
  }

  @Test
  void aProbeBlamedAgainReopensItAndAVanishedProbeIsReplaced() {
    DependencyCircuit half = halfOpen();
    Step reopens = DependencyCircuit.advance(MODEL_API, half, List.of(), List.of(new Waiter("d", t(5))),
        Map.of("c", ProbeOutcome.FAILED, "e", ProbeOutcome.RUNNING), Map.of("c", t(35)), t(36));
    assertThat(reopens.next().state()).isEqualTo(CircuitState.Open);
    assertThat(reopens.next().openedAt()).isEqualTo(t(35));
    assertThat(reopens.next().halfOpenAt()).isEqualTo(t(65));
    assertThat(reopens.next().trips()).isEqualTo(2);
    // e's run goes on: it stays a probe, and the next HalfOpen starts only one more (never more than 2 at once)
    assertThat(reopens.next().probes()).containsExactly("e");
    Step again = DependencyCircuit.advance(MODEL_API, reopens.next(), List.of(), List.of(new Waiter("c", t(35)),
        new Waiter("d", t(5)), new Waiter("f", t(6))), Map.of("e", ProbeOutcome.RUNNING), Map.of(), t(65));
    assertThat(again.next().state()).isEqualTo(CircuitState.HalfOpen);
    assertThat(again.next().probes()).containsExactly("e", "d");
    // e healthy for resetAfter while Open: once openDuration is over, it closes the circuit
    Step healthy = DependencyCircuit.advance(MODEL_API, reopens.next(), List.of(), List.of(new Waiter("c", t(35)),
        new Waiter("d", t(5))), Map.of("e", ProbeOutcome.HEALTHY), Map.of(), t(65));
    assertThat(healthy.next().state()).isEqualTo(CircuitState.Closed);
    assertThat(healthy.next().releaseOrder()).containsExactly("d", "c");
    Step replaced = DependencyCircuit.advance(MODEL_API, half, List.of(), List.of(new Waiter("d", t(5))),
        Map.of("c", ProbeOutcome.GONE, "e", ProbeOutcome.RUNNING), Map.of(), t(36));
    assertThat(replaced.next().state()).isEqualTo(CircuitState.HalfOpen);
    assertThat(replaced.next().probes()).containsExactly("e", "d");
  }

  @Test
  void aProbeWhoseRunWasBlamedAgainDoesNotRunAgainBeforeTheCircuitReopens() {
    DependencyCircuit half = halfOpen();
    assertThat(half.release(MODEL_API, "c", t(35), true, t(36))).satisfies(r -> {
      assertThat(r.now()).isFalse();
      assertThat(r.at()).contains(t(65));
    });
    assertThat(half.release(MODEL_API, "e", t(4), true, t(36)).now()).isTrue();
  }

  /**
   * §11 closes a circuit on a healthy probe only: nobody waiting at halfOpenAt is no sign the upstream is back. It
   * goes HalfOpen without a probe, and the next instance blamed on it waits and probes it at once.
   */
  @Test
  void anOpenCircuitNobodyWaitsForGoesHalfOpenAndTheNextInstanceBlamedProbesIt() {
    List<Blame> before = List.of(new Blame("a", t(0)), new Blame("b", t(1)), new Blame("c", t(2)));
    DependencyCircuit open = advance(DependencyCircuit.closed("model-api"), before, List.of(), t(3)).next();
    Step half = advance(open, before, List.of(), t(32));
    assertThat(half.next().state()).isEqualTo(CircuitState.HalfOpen);
    assertThat(half.next().probes()).isEmpty();
    assertThat(half.transitions()).singleElement().satisfies(tr -> assertThat(tr.why()).contains("no instance waits"));
    // the upstream still down: d fails, waits, and is the probe
    List<Blame> withD = List.of(new Blame("a", t(0)), new Blame("b", t(1)), new Blame("c", t(2)),
        new Blame("d", t(40)));
    Step probing = advance(half.next(), withD, List.of(new Waiter("d", t(40))), t(40));
    assertThat(probing.next().state()).isEqualTo(CircuitState.HalfOpen);
    assertThat(probing.next().probes()).containsExactly("d");
    Step closes = DependencyCircuit.advance(MODEL_API, probing.next(), withD, List.of(new Waiter("d", t(40))),
        Map.of("d", ProbeOutcome.HEALTHY), Map.of(), t(110));
    assertThat(closes.next().state()).isEqualTo(CircuitState.Closed);
    // the blames from before it closed do not open it again
    assertThat(advance(closes.next(), withD, List.of(), t(111)).next().state()).isEqualTo(CircuitState.Closed);
  }

  @Property(tries = 300, seed = "26112711")
  void onlyLegalTransitionsNeverMoreProbeRunsThanAllowedNeverAFasterRelease(
      @ForAll @IntRange(min = 1, max = 5) int threshold, @ForAll @IntRange(min = 1, max = 4) int probes,
      @ForAll @IntRange(min = 1, max = 20) int rate, @ForAll @IntRange(min = 0, max = 12) int fleet,
      @ForAll long seed) {
    DependencySettings s = settings(threshold, probes, rate);
    java.util.Random random = new java.util.Random(seed);
    DependencyCircuit c = DependencyCircuit.closed("model-api");
    // the fleet as the circuit sees it: each instance's latest blame, and whether it waits or its probe run goes on
    Map<String, Instant> failedAt = new java.util.HashMap<>();
    Set<String> probing = new java.util.HashSet<>();
    Set<String> healthy = new java.util.HashSet<>();
    for (int i = 0; i < fleet; i++) {
      failedAt.put("i" + i, t(i));
    }
    Instant now = t(fleet);
    for (int round = 0; round < 16; round++) {
      Map<String, ProbeOutcome> runs = new java.util.HashMap<>();
      Map<String, Instant> failures = new java.util.HashMap<>();
      for (String p : c.probes()) {
        boolean failedAgain = !probing.contains(p) && !healthy.contains(p) && c.halfOpenAt() != null
            && failedAt.get(p).isAfter(c.halfOpenAt());
        runs.put(p, healthy.contains(p) ? ProbeOutcome.HEALTHY : failedAgain ? ProbeOutcome.FAILED
            : ProbeOutcome.RUNNING);
        if (failedAgain) {
          failures.put(p, failedAt.get(p));
        }
      }
      List<Blame> blames = failedAt.entrySet().stream().map(e -> new Blame(e.getKey(), e.getValue())).toList();
      List<Waiter> waiting = failedAt.entrySet().stream()
          .filter(e -> !probing.contains(e.getKey()) && !healthy.contains(e.getKey()))
          .map(e -> new Waiter(e.getKey(), e.getValue())).toList();
      Step step = DependencyCircuit.advance(s, c, blames, waiting, runs, failures, now);
      for (DependencyCircuit.Transition x : step.transitions()) {
        assertThat(List.of("Closed>Open", "Open>HalfOpen", "HalfOpen>Open", "HalfOpen>Closed", "Open>Closed"))
            .contains(x.from() + ">" + x.to());
        assertThat(x.at()).isBeforeOrEqualTo(now);
      }
      c = step.next();
      assertThat(c.probes().size()).isLessThanOrEqualTo(probes);
      if (c.state() == CircuitState.Closed) {
        probing.clear(); // closed: every run goes on as an ordinary run, and the waiters are released
        healthy.clear();
        failedAt.keySet().removeIf(n -> true);
        break;
      }
      if (c.state() == CircuitState.HalfOpen) {
        assertThat(now).isAfterOrEqualTo(c.halfOpenAt());
        for (String p : c.probes()) { // the instances' side: a chosen probe starts unless its run was blamed again
          if (!probing.contains(p) && !healthy.contains(p)
              && c.release(s, p, failedAt.get(p), true, now).now()) {
            probing.add(p);
          }
        }
      }
      assertThat(probing.size() + healthy.size()).as("probe runs alive at once (%s)", c).isLessThanOrEqualTo(probes);
      // then each probe run fails again (blamed), proves healthy for resetAfter, or goes on
      now = now.plusSeconds(1 + random.nextInt(40));
      for (String p : List.copyOf(probing)) {
        int roll = random.nextInt(4);
        if (roll == 0) {
          probing.remove(p);
          failedAt.put(p, now.minusMillis(500));
        } else if (roll == 1) {
          probing.remove(p);
          healthy.add(p);
        }
      }
    }
  }

  @Property(tries = 200, seed = "26112712")
  void neverAFasterRelease(@ForAll @IntRange(min = 1, max = 5) int threshold,
      @ForAll @IntRange(min = 1, max = 4) int probes, @ForAll @IntRange(min = 1, max = 20) int rate,
      @ForAll @IntRange(min = 0, max = 12) int fleet) {
    DependencySettings s = settings(threshold, probes, rate);
    DependencyCircuit c = DependencyCircuit.closed("model-api");
    List<Blame> blames = new ArrayList<>();
    List<Waiter> waiting = new ArrayList<>();
    for (int i = 0; i < fleet; i++) {
      blames.add(new Blame("i" + i, t(i)));
      waiting.add(new Waiter("i" + i, t(i)));
    }
    Instant now = t(fleet);
    for (int round = 0; round < 6; round++) {
      Map<String, ProbeOutcome> runs = new java.util.HashMap<>();
      for (String p : c.probes()) {
        runs.put(p, round % 3 == 2 ? ProbeOutcome.HEALTHY : ProbeOutcome.RUNNING);
      }
      c = DependencyCircuit.advance(s, c, blames, waiting, runs, Map.of(), now).next();
      for (int i = 1; i < c.releaseOrder().size(); i++) {
        Instant before = s.releaseAt(c.closedAt(), i - 1);
        assertThat(Duration.between(before, s.releaseAt(c.closedAt(), i)))
            .isGreaterThanOrEqualTo(Duration.ofNanos(1_000_000_000L / rate));
        // no closed window of one second holds more than releaseRate releases
        if (i >= rate) {
          assertThat(Duration.between(s.releaseAt(c.closedAt(), i - rate), s.releaseAt(c.closedAt(), i)))
              .isGreaterThan(Duration.ofSeconds(1));
        }
      }
      now = now.plusSeconds(20);
    }
  }

  private static DependencyCircuit halfOpen() {
    DependencyCircuit open = advance(DependencyCircuit.closed("model-api"), List.of(new Blame("a", t(0)),
        new Blame("b", t(1)), new Blame("c", t(2))), List.of(), t(3)).next();
    return advance(open, List.of(), List.of(new Waiter("c", t(2)), new Waiter("e", t(4)), new Waiter("d", t(5))),
        t(32)).next();
  }

  /** README: "An edit of a dependency's openDuration while its circuit is Open counts from openedAt". */
  @Test
  void aShorterOpenDurationEditedWhileOpenBringsTheHalfOpenForward() {
    DependencyCircuit open = advance(DependencyCircuit.closed("model-api"), List.of(new Blame("a", t(0)),
        new Blame("b", t(1)), new Blame("c", t(2))), List.of(), t(3)).next();
    assertThat(open.halfOpenAt()).isEqualTo(t(32));
    DependencySettings shorter = new DependencySettings("model-api", MODEL_API.match(), 3, Duration.ofMinutes(1),
        Duration.ofSeconds(10), 2, 5.0);
    Step edited = DependencyCircuit.advance(shorter, open, List.of(), List.of(new Waiter("c", t(2))), Map.of(),
        Map.of(), t(12));
    assertThat(edited.next().state()).isEqualTo(CircuitState.HalfOpen);
    assertThat(edited.next().probes()).containsExactly("c");
  }

  /**
   * §11 "never more than probes probe runs at once" and README: a probe whose run ends for good "proves nothing";
   * a probe gone when another one reopens the circuit is not carried into the next round.
   */
  @Test
  void aProbeGoneWhenAnotherFailsIsNotCarriedIntoTheReopenedCircuit() {
    DependencyCircuit half = halfOpen(); // probes c and e
    Step reopens = DependencyCircuit.advance(MODEL_API, half, List.of(), List.of(new Waiter("d", t(5))),
        Map.of("c", ProbeOutcome.FAILED, "e", ProbeOutcome.GONE), Map.of("c", t(35)), t(36));
    assertThat(reopens.next().state()).isEqualTo(CircuitState.Open);
    assertThat(reopens.next().probes()).isEmpty();
    Step next = DependencyCircuit.advance(MODEL_API, reopens.next(), List.of(), List.of(new Waiter("c", t(35)),
        new Waiter("d", t(5)), new Waiter("f", t(6))), Map.of(), Map.of(), t(65));
    assertThat(next.next().probes()).containsExactly("d", "f");
  }

  /** stillRunning / README: a probe blamed again while the circuit is Open waits like every other instance. */
  @Test
  void aCarriedProbeThatWaitsAgainIsAWaiterNotAProbe() {
    DependencyCircuit half = halfOpen(); // probes c and e
    DependencyCircuit reopened = DependencyCircuit.advance(MODEL_API, half, List.of(), List.of(new Waiter("d", t(5))),
        Map.of("c", ProbeOutcome.FAILED, "e", ProbeOutcome.RUNNING), Map.of("c", t(35)), t(36)).next();
    assertThat(reopened.probes()).containsExactly("e");
    // e fails, blamed, while Open: it waits in the queue now
    Step open = DependencyCircuit.advance(MODEL_API, reopened, List.of(), List.of(new Waiter("d", t(5)),
        new Waiter("e", t(40))), Map.of("e", ProbeOutcome.RUNNING), Map.of(), t(41));
    assertThat(open.next().state()).isEqualTo(CircuitState.Open);
    assertThat(open.next().probes()).isEmpty();
  }

  /** §11 "Closed again: the waiting instances are restarted": the probe that closed it is running, not released. */
  @Test
  void theProbeThatClosesTheCircuitIsNotInTheReleaseOrder() {
    DependencyCircuit half = DependencyCircuit.advance(settings(3, 1, 5.0), advance(DependencyCircuit.closed(
        "model-api"), List.of(new Blame("a", t(0)), new Blame("b", t(1)), new Blame("c", t(2))), List.of(), t(3))
        .next(), List.of(), List.of(new Waiter("c", t(2)), new Waiter("d", t(5))), Map.of(), Map.of(), t(32)).next();
    assertThat(half.probes()).containsExactly("c");
    // the probe keeps waitingFor while it probes: it is among the waiters the policy reconciler sees
    Step closes = DependencyCircuit.advance(settings(3, 1, 5.0), half, List.of(), List.of(new Waiter("c", t(2)),
        new Waiter("d", t(5))), Map.of("c", ProbeOutcome.HEALTHY), Map.of(), t(100));
    assertThat(closes.next().state()).isEqualTo(CircuitState.Closed);
    assertThat(closes.next().releaseOrder()).containsExactly("d");
  }

  /** A HalfOpen circuit whose probes are gone with nobody waiting stays HalfOpen: only a healthy probe closes it. */
  @Test
  void aHalfOpenCircuitWithNoProbeLeftAndNobodyWaitingStaysHalfOpenUntilTheNextProbe() {
    DependencyCircuit half = halfOpen();
    Step step = DependencyCircuit.advance(MODEL_API, half, List.of(), List.of(),
        Map.of("c", ProbeOutcome.GONE, "e", ProbeOutcome.GONE), Map.of(), t(40));
    assertThat(step.next().state()).isEqualTo(CircuitState.HalfOpen);
    assertThat(step.next().probes()).isEmpty();
    assertThat(step.transitions()).isEmpty();
    Step next = DependencyCircuit.advance(MODEL_API, step.next(), List.of(), List.of(new Waiter("f", t(50))),
        Map.of(), Map.of(), t(50));
    assertThat(next.next().probes()).containsExactly("f");
  }

  /**
   * README: "openedAt is the time of the failure that reached failureThreshold". An instance blamed twice (recorded at
   * its first failure) and a second instance in between: two distinct instances were reached with the second
   * instance's failure, not with the first instance's later one.
   */
  @Test
  void theCircuitOpensAtTheFailureThatBroughtDistinctInstancesToTheThreshold() {
    DependencySettings two = settings(2, 1, 5.0);
    DependencyCircuit recorded = DependencyCircuit.advance(two, DependencyCircuit.closed("model-api"),
        List.of(new Blame("a", t(10))), List.of(), Map.of(), Map.of(), t(10)).next();
    assertThat(recorded.state()).isEqualTo(CircuitState.Closed);
    // b fails at t(30) and a again at t(40) before the policy reconciler steps again
    Step opens = DependencyCircuit.advance(two, recorded, List.of(new Blame("b", t(30)), new Blame("a", t(40))),
        List.of(), Map.of(), Map.of(), t(41));
    assertThat(opens.next().state()).isEqualTo(CircuitState.Open);
    assertThat(opens.next().openedAt()).isEqualTo(t(30));
  }

  /** §11 "releaseRate: 0 = no limit": every waiting instance is released when the circuit closes. */
  @Test
  void aReleaseRateOfZeroReleasesEveryWaiterAtOnce() {
    DependencySettings unlimited = settings(3, 1, 0.0);
    assertThat(unlimited.releaseAt(t(40), 0)).isEqualTo(t(40));
    assertThat(unlimited.releaseAt(t(40), 49)).isEqualTo(t(40));
    assertThat(MODEL_API.releaseAt(t(40), 1)).isEqualTo(t(40).plusMillis(210));
  }
}

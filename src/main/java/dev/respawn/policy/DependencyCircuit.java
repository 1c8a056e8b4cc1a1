package dev.respawn.policy;

import dev.respawn.api.v1alpha1.CircuitState;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The shared circuit of one dependency (api.md §11), as a value: its state and what it decided about the
 * fleet (probes, release order, recent blame). {@link #advance} is the one transition function, pure,
 * time passed in; {@link #release} tells one waiting instance when it may run.
 */
public record DependencyCircuit(String name, CircuitState state, int trips, Instant openedAt, Instant halfOpenAt,
    Instant closedAt, Instant lastTransitionTime, List<String> probes, List<String> releaseOrder,
    List<Blame> recentBlame, int waiting, int blamed) {

  public DependencyCircuit {
    probes = List.copyOf(probes);
    releaseOrder = List.copyOf(releaseOrder);
    recentBlame = List.copyOf(recentBlame);
  }

  public static DependencyCircuit closed(String name) {
    return new DependencyCircuit(name, CircuitState.Closed, 0, null, null, null, null, List.of(), List.of(),
        List.of(), 0, 0);
  }

  /** An instance's latest failure blamed on the dependency. */
  public record Blame(String instance, Instant at) {}

  /** An instance waiting for the dependency (phase CircuitOpen), since its blamed failure. */
  public record Waiter(String instance, Instant failedAt) {}

  public enum ProbeOutcome { RUNNING, HEALTHY, FAILED, GONE }

  /** A state change, for the Event and the audit line. */
  public record Transition(CircuitState from, CircuitState to, Instant at, String why) {}

  public record Step(DependencyCircuit next, List<Transition> transitions, Optional<Instant> wakeAt) {}

  /** When a waiting instance may run: the time to show (empty: not known yet) and whether it may now. */
  public record Release(Optional<Instant> at, boolean now) {}

  /**
   * One step of the circuit at {@code now}, from every instance's latest blame (with those the circuit
   * already recorded), the waiting instances and the outcome of each probe's run.
   */
  public static Step advance(DependencySettings s, DependencyCircuit c, List<Blame> blames, List<Waiter> waiting,
      Map<String, ProbeOutcome> probeRuns, Map<String, Instant> probeFailures, Instant now) {
    Draft d = new Draft(c);
    List<Waiter> queue = new ArrayList<>(waiting);
    queue.sort(Comparator.comparing(Waiter::failedAt, Comparator.nullsFirst(Comparator.naturalOrder()))
        .thenComparing(Waiter::instance));
    // an instance's blame outlives its status: a later failure for another reason replaces lastFailure there,
    // but the blame still counts within the window, so the blames status already holds are kept too
    List<Blame> known = new ArrayList<>(c.recentBlame());
    known.addAll(blames);
    DependencyBlames counted = new DependencyBlames(s, known, c.closedAt(), now);
    List<Blame> recent = counted.latest();
    d.blamed = recent.size();
    // status keeps only the newest failureThreshold of them: all an opening needs, and bounded
    d.recent = recent.size() > s.failureThreshold() ? recent.subList(recent.size() - s.failureThreshold(),
        recent.size()) : recent;
    switch (c.state()) {
      case Closed -> {
        if (d.recent.size() >= s.failureThreshold()) {
          // opened by the blame that reached the threshold (the failures after it came while it was Open, §3 d2)
          d.open(s, counted.thresholdReachedAt(), "failures of " + s.failureThreshold()
              + " distinct instances within " + GoDuration.format(s.window()));
        } else if (!c.releaseOrder().isEmpty() && (c.closedAt() == null
            || !now.isBefore(s.releaseAt(c.closedAt(), c.releaseOrder().size() - 1)))) {
          // released: all of them, or (no closedAt, a status written by hand) each at once, as release() says
          d.releaseOrder = List.of();
        }
      }
      case Open -> open(s, d, queue, probeRuns, now);
      case HalfOpen -> halfOpen(s, d, queue, probeRuns, probeFailures, now);
      default -> { }
    }
    d.waiting = queue.size();
    DependencyCircuit next = d.build();
    Optional<Instant> wake = Optional.empty();
    if (next.state() == CircuitState.Open) {
      // opened by failures openDuration ago or more (a look after the operator was away, a queued or retried
      // step): its HalfOpen is due at once, and nothing else would ask for the step that makes it
      wake = Optional.of(next.halfOpenAt().isAfter(now) ? next.halfOpenAt() : now);
    }
    return new Step(next, d.transitions, wake);
  }

  /**
   * Open: the probes of an earlier round whose runs still go on stay probes (never more than {@code probes}
   * probe runs at once); once openDuration is over, waiters that waited longest join them up to
   * {@code probes}, and one of them healthy for resetAfter meanwhile closes it.
   */
  private static void open(DependencySettings s, Draft d, List<Waiter> queue, Map<String, ProbeOutcome> runs,
      Instant now) {
    List<String> running = stillRunning(d.probes, queue, runs);
    d.probes = running;
    if (d.openedAt == null) {
      // a status written by hand without it (or with a time that is none): opened when it last changed, or now
      d.openedAt = d.lastTransitionTime != null ? d.lastTransitionTime : now;
    }
    d.halfOpenAt = d.openedAt.plus(s.openDuration()); // the openDuration of now: an edit while Open counts
    if (now.isBefore(d.halfOpenAt)) {
      return;
    }
    Optional<String> healthy = running.stream().filter(p -> runs.get(p) == ProbeOutcome.HEALTHY).findFirst();
    if (healthy.isPresent()) {
      d.halfOpen(now, running);
      d.close(now, queue.stream().map(Waiter::instance).toList(), "probe " + healthy.get()
          + " (of an earlier round) was healthy for resetAfter");
    } else {
      // nobody waiting is no sign the upstream is back (§11 closes only on a healthy probe): HalfOpen all the
      // same, and the next instance blamed on it waits and probes at once
      List<String> chosen = new ArrayList<>(running);
      queue.stream().map(Waiter::instance).limit(Math.max(0, s.probes() - running.size())).forEach(chosen::add);
      d.halfOpen(now, chosen);
    }
  }

  /**
   * The probes whose runs still go on (or already proved healthy): not gone, not failed, not waiting again
   * (a probe blamed again while the circuit is Open waits like every other instance).
   */
  private static List<String> stillRunning(List<String> probes, List<Waiter> queue, Map<String, ProbeOutcome> runs) {
    return probes.stream().filter(p -> runs.get(p) == ProbeOutcome.RUNNING || runs.get(p) == ProbeOutcome.HEALTHY)
        .filter(p -> queue.stream().noneMatch(w -> w.instance().equals(p))).toList();
  }

  private static void halfOpen(DependencySettings s, Draft d, List<Waiter> queue, Map<String, ProbeOutcome> runs,
      Map<String, Instant> failures, Instant now) {
    List<String> probes = new ArrayList<>(d.probes);
    for (String probe : d.probes) {
      ProbeOutcome outcome = runs.getOrDefault(probe, ProbeOutcome.GONE);
      if (outcome == ProbeOutcome.FAILED) {
        List<String> others = d.probes.stream().filter(p -> !p.equals(probe)).toList();
        d.open(s, failures.getOrDefault(probe, now), "probe " + probe + " failed again");
        // the other probes' runs go on: they stay probes, so the next HalfOpen starts only the missing number
        d.probes = stillRunning(others, queue, runs);
        return;
      }
      if (outcome == ProbeOutcome.HEALTHY) {
        queue.removeIf(w -> w.instance().equals(probe));
        d.close(now, queue.stream().map(Waiter::instance).toList(), "probe " + probe + " was healthy for resetAfter");
        return;
      }
      if (outcome == ProbeOutcome.GONE) {
        probes.remove(probe); // deleted or suspended: another waiter takes its place
      }
    }
    for (Waiter w : queue) {
      if (probes.size() >= s.probes()) {
        break;
      }
      if (!probes.contains(w.instance())) {
        probes.add(w.instance());
      }
    }
    // no probe left and nobody waiting: it stays HalfOpen, its next probe the next instance blamed on it
    d.probes = probes;
  }

  /**
   * True when this value differs from {@code before} only by blames that aged out of the window: time passed,
   * nothing a user could act on (api.md §12), so status may keep showing {@code before} until a real change.
   * Stale blames in it decide nothing: every use of recentBlame looks at the window again.
   */
  public boolean onlyAgedFrom(DependencyCircuit before) {
    return blamed <= before.blamed() && before.recentBlame().containsAll(recentBlame)
        && equals(new DependencyCircuit(before.name(), before.state(), before.trips(), before.openedAt(),
            before.halfOpenAt(), before.closedAt(), before.lastTransitionTime(), before.probes(),
            before.releaseOrder(), recentBlame, before.waiting(), blamed));
  }

  /** True when {@code instance}'s failure now is the one that brings this Closed circuit to its threshold. */
  public boolean opensWith(DependencySettings s, String instance, Instant now) {
    Instant from = now.minus(s.window());
    long others = recentBlame.stream().filter(b -> !b.instance().equals(instance))
        .filter(b -> b.at() != null && !b.at().isBefore(from))
        .filter(b -> closedAt == null || b.at().isAfter(closedAt)).count();
    return others + 1 >= s.failureThreshold();
  }

  /**
   * Whether an instance outside the fleet waits for this circuit now: while it is Open, until its halfOpenAt (the
   * policy's status may show Open a while after that: its writer moves it to HalfOpen with a probe).
   */
  public boolean holdsOutsiders(Instant now) {
    return state == CircuitState.Open && (halfOpenAt == null || now.isBefore(halfOpenAt));
  }

  /**
   * When {@code instance}, waiting for this dependency since its failure at {@code blamedAt} (which ended one of its
   * probe runs when {@code probeFailed}), may run (api.md §11). A probe whose probe run was blamed again does not
   * run again: the circuit reopens. An instance listed as a probe whose probe run has not started yet (its failure
   * was of a run that was none: one that ran through the outage) runs now; one not listed waits for a probe's
   * outcome (no time to show yet).
   */
  public Release release(DependencySettings s, String instance, Instant blamedAt, boolean probeFailed, Instant now) {
    if (!s.fleetMember()) {
      // an instance outside the fleet (of another namespace) is never a probe nor in the release order: the circuit
      // counts only its own namespace, whose instances may be none, so it waits out the Open time and goes
      Optional<Instant> at = state == CircuitState.Open ? Optional.ofNullable(halfOpenAt) : Optional.of(now);
      return new Release(at, at.filter(t -> !now.isBefore(t)).isPresent());
    }
    return switch (state) {
      case Open -> new Release(Optional.ofNullable(halfOpenAt), false);
      case HalfOpen -> {
        if (probes.contains(instance) && failedAsProbe(blamedAt, probeFailed, halfOpenAt)) {
          yield new Release(Optional.of(blamedAt.plus(s.openDuration())), false);
        }
        yield probes.contains(instance) ? new Release(Optional.ofNullable(halfOpenAt), true)
            : new Release(Optional.empty(), false);
      }
      default -> {
        int index = releaseOrder.indexOf(instance);
        Instant at = index < 0 || closedAt == null ? now : s.releaseAt(closedAt, index);
        yield new Release(Optional.of(at), !now.isBefore(at));
      }
    };
  }

  /**
   * Whether a blamed failure ended a probe's run of this HalfOpen: the run was a probe run ({@code probeRun}, status
   * lastFailure.probe) and failed after the circuit went HalfOpen (a probe that failed in an earlier round and was
   * chosen again has yet to run).
   */
  static boolean failedAsProbe(Instant blamedAt, boolean probeRun, Instant halfOpenAt) {
    return probeRun && blamedAt != null && halfOpenAt != null && blamedAt.isAfter(halfOpenAt);
  }

  /** The working copy of one step. */
  private static final class Draft {
    private final DependencyCircuit from;
    CircuitState state;
    int trips;
    Instant openedAt;
    Instant halfOpenAt;
    Instant closedAt;
    Instant lastTransitionTime;
    List<String> probes;
    List<String> releaseOrder;
    List<Blame> recent = List.of();
    int blamed;
    int waiting;
    final List<Transition> transitions = new ArrayList<>();

    Draft(DependencyCircuit c) {
      from = c;
      state = c.state();
      trips = c.trips();
      openedAt = c.openedAt();
      halfOpenAt = c.halfOpenAt();
      closedAt = c.closedAt();
      lastTransitionTime = c.lastTransitionTime();
      probes = c.probes();
      releaseOrder = c.releaseOrder();
    }

    void open(DependencySettings s, Instant at, String why) {
      move(CircuitState.Open, at, why);
      trips += 1;
      openedAt = at;
      halfOpenAt = at.plus(s.openDuration());
      probes = List.of();
      releaseOrder = List.of();
    }

    void halfOpen(Instant now, List<String> chosen) {
      move(CircuitState.HalfOpen, now, "open for its openDuration: " + (chosen.isEmpty()
          ? "no instance waits to probe it; the next one blamed on it probes it" : chosen.size() + " probe(s)"));
      probes = chosen;
    }

    void close(Instant now, List<String> order, String why) {
      move(CircuitState.Closed, now, why);
      closedAt = now;
      probes = List.of();
      releaseOrder = order;
      recent = List.of();
      blamed = 0;
    }

    private void move(CircuitState to, Instant at, String why) {
      transitions.add(new Transition(state, to, at, why));
      state = to;
      lastTransitionTime = at;
    }

    DependencyCircuit build() {
      return new DependencyCircuit(from.name(), state, trips, openedAt, halfOpenAt, closedAt, lastTransitionTime,
          probes, releaseOrder, recent, waiting, blamed);
    }
  }
}

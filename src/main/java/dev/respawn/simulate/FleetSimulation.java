package dev.respawn.simulate;

import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.policy.Decision;
import dev.respawn.policy.DependencyCircuit;
import dev.respawn.policy.EndingKind;
import dev.respawn.policy.FleetCircuits;
import dev.respawn.policy.InstanceState;
import dev.respawn.policy.PodView;
import dev.respawn.policy.RestartEvaluator;
import dev.respawn.policy.RestartPolicy;
import dev.respawn.policy.RunEnding;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;

/**
 * A fleet story in virtual time (api.md §11): {@code size} instances of one policy run; from {@code
 * outageStart} to {@code outageEnd} the upstream they share is down, and every run that is up then fails
 * with {@code message} (the agent meets the dead upstream {@code failAfter} after it starts, the fleet
 * one after the other, {@code stagger} apart). Every instance goes through the operator's own decision
 * core, and the policy's shared circuits through {@link FleetCircuits}, after every decision: the
 * simulation shows the policy's timing, not the cluster's latency.
 */
public final class FleetSimulation {
  private static final int MAX_STEPS = 2_000_000;

  /** The story: how many instances, when the upstream is down, what its failures say. */
  public record FleetStory(int size, Duration outageStart, Duration outageEnd, Duration failAfter, Duration stagger,
      String message) {}

  /** One restart: which instance, when (from t=0), and whether the upstream was down then. */
  public record Restart(String instance, Duration at, boolean intoOutage) {}

  /** What happened: restarts, circuit transitions, and the totals a user compares. */
  public record Outcome(List<Restart> restarts, List<String> transitions, int restartsIntoOutage,
      int failuresCounted, int escalated, Duration allRunningAfterRecovery, int peakRestartsPerSecond) {}

  private final RestartPolicy policy;
  private final RestartEvaluator evaluator = RestartEvaluator.builtIn();
  private final FleetStory story;
  private final Instant t0 = Simulation.T0;
  private final Map<String, InstanceState> states = new TreeMap<>();
  private final Map<String, SimulatedPods> pods = new HashMap<>();
  private final Map<String, Instant> failAt = new HashMap<>();
  private final Map<String, Instant> wakeAt = new HashMap<>();
  private Map<String, DependencyCircuit> circuits = new HashMap<>();
  private Instant circuitWake;
  private final List<Restart> restarts = new ArrayList<>();
  private final List<String> transitions = new ArrayList<>();
  private final SplittableRandom random;

  public FleetSimulation(RestartPolicy policy, FleetStory story, long seed) {
    this.policy = policy;
    this.story = story;
    this.random = new SplittableRandom(seed);
  }

  /** The name of the i-th instance of the story (from 0). */
  public static String instanceName(int i) {
    return String.format("agent-%03d", i);
  }

  public Outcome run() {
    for (int i = 0; i < story.size(); i++) {
      String name = instanceName(i);
      states.put(name, new InstanceState());
      pods.put(name, new SimulatedPods("default", name));
      decide(name, t0);
    }
    Instant end = t0.plus(story.outageEnd()).plus(Duration.ofHours(2));
    for (int steps = 0; steps < MAX_STEPS; steps++) {
      Instant now = nextEvent();
      if (now == null || now.isAfter(end)) {
        break;
      }
      for (String name : List.copyOf(states.keySet())) {
        if (now.equals(failAt.get(name))) {
          fail(name, now);
        } else if (now.equals(wakeAt.get(name))) {
          decide(name, now);
        }
      }
      if (now.equals(circuitWake)) {
        circuitStep(now);
        states.keySet().forEach(n -> decide(n, now));
      }
    }
    return outcome();
  }

  private Instant nextEvent() {
    Instant next = circuitWake;
    for (String name : states.keySet()) {
      next = earliest(next, failAt.get(name));
      next = earliest(next, wakeAt.get(name));
    }
    return next;
  }

  private static Instant earliest(Instant a, Instant b) {
    return a == null ? b : b == null ? a : a.isBefore(b) ? a : b;
  }

  /** The agent of this instance meets the dead upstream: its container exits 1 with the story's message. */
  private void fail(String name, Instant now) {
    failAt.remove(name);
    InstanceState s = states.get(name);
    SimulatedPods p = pods.get(name);
    PodView view = p.pod(s.currentPod).orElseThrow();
    p.update(new PodView(view.name(), view.uid(), PodView.Stage.FINISHED, view.createdAt(), view.startedAt(), null,
        null, false), new RunEnding(view.name(), view.uid(), EndingKind.TERMINATED, 1, "Error", story.message(), now));
    decide(name, now);
  }

  /** One reconcile of the instance: decide, apply, start the pod at once, then the policy's circuits. */
  private void decide(String name, Instant now) {
    InstanceState before = states.get(name);
    SimulatedPods p = pods.get(name);
    Decision d = evaluator.decide(policy, before, p.sighting(false, java.util.Map.of()).withDependencies(circuits), now,
        random);
    p.apply(d, now);
    InstanceState s = d.state();
    states.put(name, s);
    wakeAt.remove(name);
    d.wakeAt().ifPresent(t -> wakeAt.put(name, t));
    if (d.start().isPresent() && !d.startsExisting()) {
      PodView created = p.pod(d.start().get().podName()).orElseThrow();
      p.update(new PodView(created.name(), created.uid(), PodView.Stage.RUNNING, now, now, null, null, true), null);
      if (s.run > 1) {
        restarts.add(new Restart(name, Duration.between(t0, now), down(now)));
      }
      Instant meets = now.plus(story.failAfter());
      Instant firstHit = t0.plus(story.outageStart()).plus(story.stagger().multipliedBy(index(name)));
      Instant hit = meets.isBefore(firstHit) ? firstHit : meets;
      if (hit.isBefore(t0.plus(story.outageEnd()))) {
        failAt.put(name, hit);
      }
      Decision running = evaluator.decide(policy, s, p.sighting(false, java.util.Map.of()).withDependencies(circuits), now,
          random);
      states.put(name, running.state());
      running.wakeAt().ifPresent(t -> wakeAt.put(name, t));
    }
    if (!policy.dependencies().isEmpty()) {
      circuitStep(now);
    }
  }

  private void circuitStep(Instant now) {
    List<FleetCircuits.Member> fleet = new ArrayList<>();
    states.forEach((n, s) -> fleet.add(new FleetCircuits.Member(n, s, false)));
    FleetCircuits.Result r = FleetCircuits.step(policy, circuits, fleet, now);
    Map<String, DependencyCircuit> next = new HashMap<>();
    r.circuits().forEach(c -> next.put(c.name(), c));
    r.transitions().forEach((dep, list) -> list.forEach(t -> transitions.add(Simulation.rel(t.at()) + " " + dep
        + " " + t.from() + " -> " + t.to() + ": " + t.why())));
    boolean changed = !next.equals(circuits);
    circuits = next;
    circuitWake = r.wakeAt().orElse(null);
    if (changed) {
      // the operator tells a shared circuit's change to every instance of the policy; it changes the decision of a
      // waiter (released, or a probe) and of one whose blamed failure waits in its own Backoff or circuit trial (it
      // joins the wait: DependencyOpening), and no other's
      states.keySet().stream().filter(n -> movedByCircuits(states.get(n))).toList().forEach(n -> decide(n, now));
    }
  }

  private static boolean movedByCircuits(InstanceState s) {
    return s.waitingFor != null || s.lastFailure != null && s.lastFailure.dependency() != null
        && (s.phase == Phase.Backoff || s.phase == Phase.CircuitOpen);
  }

  private int index(String name) {
    return Integer.parseInt(name.substring(name.indexOf('-') + 1));
  }

  private boolean down(Instant t) {
    return !t.isBefore(t0.plus(story.outageStart())) && t.isBefore(t0.plus(story.outageEnd()));
  }

  private Outcome outcome() {
    int counted = 0;
    int escalated = 0;
    for (InstanceState s : states.values()) {
      counted += (int) s.history.stream().filter(h -> h.outcome() == dev.respawn.policy.RunOutcome.Failure && h.reasonCode() != null
          && h.reasonCode() != dev.respawn.policy.ReasonCode.DEPENDENCY_CIRCUIT_OPEN).count();
      escalated += s.phase == Phase.Escalated || s.phase == Phase.Failed ? 1 : 0;
    }
    Duration recovery = Duration.ZERO;
    for (Restart r : restarts) {
      if (!r.intoOutage() && r.at().compareTo(story.outageEnd()) > 0
          && r.at().minus(story.outageEnd()).compareTo(recovery) > 0) {
        recovery = r.at().minus(story.outageEnd());
      }
    }
    Map<Long, Integer> perSecond = new HashMap<>();
    restarts.forEach(r -> perSecond.merge(r.at().toMillis() / 1000, 1, Integer::sum));
    int peak = perSecond.values().stream().mapToInt(Integer::intValue).max().orElse(0);
    int into = (int) restarts.stream().filter(Restart::intoOutage).count();
    return new Outcome(List.copyOf(restarts), List.copyOf(transitions), into, counted, escalated, recovery, peak);
  }
}

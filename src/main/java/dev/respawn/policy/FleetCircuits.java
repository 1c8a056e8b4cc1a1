package dev.respawn.policy;

import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.policy.DependencyCircuit.Blame;
import dev.respawn.policy.DependencyCircuit.ProbeOutcome;
import dev.respawn.policy.DependencyCircuit.Waiter;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A policy's shared dependencies seen over its fleet (api.md §11): from the state of every instance that
 * uses the policy, each instance's latest blamed failure, who waits, and how each probe's run went; then
 * one step of each circuit. Pure: the policy reconciler (the circuits' one writer) and the fleet
 * simulator both use it.
 */
public final class FleetCircuits {
  /** One instance of the fleet: its name, its state, and whether it is suspended (or being deleted). */
  public record Member(String name, InstanceState state, boolean suspended) {}

  /** The next value of every circuit, what changed, and when to look again. */
  public record Result(List<DependencyCircuit> circuits, Map<String, List<DependencyCircuit.Transition>> transitions,
      Optional<Instant> wakeAt) {}

  private FleetCircuits() {}

  public static Result step(RestartPolicy policy, Map<String, DependencyCircuit> current, List<Member> fleet,
      Instant now) {
    List<DependencyCircuit> circuits = new ArrayList<>();
    Map<String, List<DependencyCircuit.Transition>> transitions = new HashMap<>();
    Instant wake = null;
    for (DependencySettings s : policy.dependencies()) {
      DependencyCircuit c = current.getOrDefault(s.name(), DependencyCircuit.closed(s.name()));
      List<Blame> blames = new ArrayList<>();
      List<Waiter> waiting = new ArrayList<>();
      Map<String, Member> byName = new HashMap<>();
      for (Member m : fleet) {
        byName.put(m.name(), m);
        InstanceState st = m.state();
        if (m.suspended()) {
          continue;
        }
        Instant failedAt = st.lastFailure == null ? null : st.lastFailure.at();
        if (st.lastFailure != null && s.name().equals(st.lastFailure.dependency()) && failedAt != null) {
          blames.add(new Blame(m.name(), failedAt));
        }
        if (st.phase == Phase.CircuitOpen && s.name().equals(st.waitingFor)) {
          waiting.add(new Waiter(m.name(), failedAt));
        }
      }
      Map<String, ProbeOutcome> runs = new HashMap<>();
      Map<String, Instant> failures = new HashMap<>();
      for (String probe : c.probes()) {
        runs.put(probe, outcome(byName.get(probe), s.name(), c.halfOpenAt(), failures));
      }
      DependencyCircuit.Step step = DependencyCircuit.advance(s, c, blames, waiting, runs, failures, now);
      // a blame that only aged out of the window is time passing: the circuit stays as status shows it
      boolean aged = step.transitions().isEmpty() && step.next().onlyAgedFrom(c);
      circuits.add(aged ? c : step.next());
      if (!step.transitions().isEmpty()) {
        transitions.put(s.name(), step.transitions());
      }
      if (step.wakeAt().isPresent() && (wake == null || step.wakeAt().get().isBefore(wake))) {
        wake = step.wakeAt().get();
      }
    }
    return new Result(circuits, transitions, Optional.ofNullable(wake));
  }

  /**
   * How a probe's run went: failed again (its probe run blamed), healthy (it stopped waiting), or still going
   * (also a probe chosen from instances blamed during HalfOpen, whose probe run has not started yet).
   */
  private static ProbeOutcome outcome(Member m, String dependency, Instant halfOpenAt,
      Map<String, Instant> failures) {
    if (m == null || m.suspended() || m.state().phase.isTerminal()) {
      return ProbeOutcome.GONE; // deleted, suspended, or its run ended for good (a clean exit proves nothing)
    }
    InstanceState st = m.state();
    Instant failedAt = st.lastFailure == null ? null : st.lastFailure.at();
    boolean sinceHalfOpen = failedAt != null && halfOpenAt != null && failedAt.isAfter(halfOpenAt);
    if (sinceHalfOpen && !dependency.equals(st.lastFailure.dependency())) {
      return ProbeOutcome.GONE; // its run failed for another reason: it proves nothing, another waiter probes
    }
    if (DependencyCircuit.failedAsProbe(failedAt, st.lastFailure != null && st.lastFailure.probe(), halfOpenAt)) {
      failures.put(m.name(), failedAt);
      return ProbeOutcome.FAILED;
    }
    if (st.waitingFor == null) {
      return st.phase == Phase.Running ? ProbeOutcome.HEALTHY : ProbeOutcome.GONE;
    }
    return ProbeOutcome.RUNNING;
  }
}

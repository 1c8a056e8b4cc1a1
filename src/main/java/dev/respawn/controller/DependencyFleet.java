package dev.respawn.controller;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentInstanceStatus;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.policy.DependencyCircuit;
import dev.respawn.policy.DependencyCircuit.Blame;
import dev.respawn.policy.DependencyCircuit.ProbeOutcome;
import dev.respawn.policy.DependencyCircuit.Waiter;
import dev.respawn.policy.DependencySettings;
import dev.respawn.policy.RestartPolicy;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The policy reconciler's view of a fleet for its shared dependencies (api.md §11): from the statuses of
 * the instances that use the policy, every instance's latest blamed failure, who waits, and how each
 * probe's run went; then one step of each circuit. The policy reconciler is the circuits' one writer.
 */
final class DependencyFleet {
  /** The next value of every circuit, what changed, and when to look again. */
  record Result(List<DependencyCircuit> circuits, Map<String, List<DependencyCircuit.Transition>> transitions,
      Optional<Instant> wakeAt) {}

  private DependencyFleet() {}

  static Result step(RestartPolicy policy, Map<String, DependencyCircuit> current, List<AgentInstance> fleet,
      Instant now) {
    List<DependencyCircuit> circuits = new ArrayList<>();
    Map<String, List<DependencyCircuit.Transition>> transitions = new HashMap<>();
    Instant wake = null;
    for (DependencySettings s : policy.dependencies()) {
      DependencyCircuit c = current.getOrDefault(s.name(), DependencyCircuit.closed(s.name()));
      List<Blame> blames = new ArrayList<>();
      List<Waiter> waiting = new ArrayList<>();
      Map<String, AgentInstance> byName = new HashMap<>();
      for (AgentInstance i : fleet) {
        byName.put(i.getMetadata().getName(), i);
        AgentInstanceStatus st = i.getStatus();
        if (st == null || suspended(i)) {
          continue;
        }
        Instant failedAt = st.lastFailure == null ? null : StatusMapper.time(st.lastFailure.at);
        if (st.lastFailure != null && s.name().equals(st.lastFailure.dependency) && failedAt != null) {
          blames.add(new Blame(i.getMetadata().getName(), failedAt));
        }
        if (st.phase == Phase.CircuitOpen && s.name().equals(st.waitingFor)) {
          waiting.add(new Waiter(i.getMetadata().getName(), failedAt));
        }
      }
      Map<String, ProbeOutcome> runs = new HashMap<>();
      Map<String, Instant> failures = new HashMap<>();
      for (String probe : c.probes()) {
        runs.put(probe, outcome(byName.get(probe), s.name(), c.halfOpenAt(), failures));
      }
      DependencyCircuit.Step step = DependencyCircuit.advance(s, c, blames, waiting, runs, failures, now);
      circuits.add(step.next());
      if (!step.transitions().isEmpty()) {
        transitions.put(s.name(), step.transitions());
      }
      if (step.wakeAt().isPresent() && (wake == null || step.wakeAt().get().isBefore(wake))) {
        wake = step.wakeAt().get();
      }
    }
    return new Result(circuits, transitions, Optional.ofNullable(wake));
  }

  /** How a probe's run went: failed again (blamed after HalfOpen), healthy (it stopped waiting), or still going. */
  private static ProbeOutcome outcome(AgentInstance i, String dependency, Instant halfOpenAt,
      Map<String, Instant> failures) {
    if (i == null || i.getStatus() == null || suspended(i)) {
      return ProbeOutcome.GONE;
    }
    AgentInstanceStatus st = i.getStatus();
    Instant failedAt = st.lastFailure == null ? null : StatusMapper.time(st.lastFailure.at);
    if (failedAt != null && halfOpenAt != null && failedAt.isAfter(halfOpenAt)) {
      if (!dependency.equals(st.lastFailure.dependency)) {
        return ProbeOutcome.GONE; // its run failed for another reason: it proves nothing, another waiter probes
      }
      failures.put(i.getMetadata().getName(), failedAt);
      return ProbeOutcome.FAILED;
    }
    if (st.waitingFor == null) {
      return st.phase == Phase.Running ? ProbeOutcome.HEALTHY : ProbeOutcome.GONE;
    }
    return ProbeOutcome.RUNNING;
  }

  private static boolean suspended(AgentInstance i) {
    return i.getSpec() != null && Boolean.TRUE.equals(i.getSpec().suspend);
  }
}

package dev.respawn.controller;

import com.fasterxml.jackson.databind.JsonNode;
import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import dev.respawn.policy.DependencyCircuit;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Commit first, then tell, for a policy's shared circuits (api.md §11: each transition writes a
 * {@code DependencyCircuitChanged} Event and an audit line). A status write whose answer was lost (a timeout, a 5xx on
 * every retry) may have landed all the same: the retried reconcile then steps the circuits from the status that
 * landed, finds no transition, and the write's Events would never be told. They are kept here, by policy UID, until
 * the next reconcile of the policy: told then when its status is the one they were written with, dropped when it is
 * not (the write did not land; the circuits are stepped again and tell their own). In memory, one entry at most per
 * policy whose write failed; nothing survives an operator restart.
 */
final class OwedTransitions {
  private record Owed(JsonNode status, List<DependencyCircuit> circuits,
      Map<String, List<DependencyCircuit.Transition>> transitions) {}

  private final Map<String, Owed> owed = new ConcurrentHashMap<>();

  /** The write of {@code status} failed: its transitions are owed until the next reconcile (none: nothing is). */
  void owe(AgentRestartPolicy policy, JsonNode status, List<DependencyCircuit> circuits,
      Map<String, List<DependencyCircuit.Transition>> transitions) {
    if (transitions.values().stream().anyMatch(t -> !t.isEmpty())) {
      owed.put(policy.getMetadata().getUid(), new Owed(status, circuits, transitions));
    }
  }

  /**
   * Tells what is owed to {@code policy} when it shows {@code shown}, the status the failed write carried (it
   * landed); forgets it either way.
   */
  void settle(AgentRestartPolicy policy, JsonNode shown, DecisionSink sink) {
    Owed o = owed.remove(policy.getMetadata().getUid());
    if (o != null && Objects.equals(o.status(), shown)) {
      sink.dependencies(policy, o.circuits(), o.transitions());
    }
  }

  /** The policy is gone. */
  void forget(AgentRestartPolicy policy) {
    owed.remove(policy.getMetadata().getUid());
  }
}

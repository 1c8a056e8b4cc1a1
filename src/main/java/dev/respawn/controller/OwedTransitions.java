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
  /** What a failed write carried, and the resourceVersion of the policy it was decided on. */
  private record Owed(String readVersion, JsonNode status, List<DependencyCircuit> circuits,
      Map<String, List<DependencyCircuit.Transition>> transitions) {}

  private final Map<String, Owed> owed = new ConcurrentHashMap<>();

  /** The write of {@code status} failed: its transitions are owed until the next reconcile (none: nothing is). */
  void owe(AgentRestartPolicy policy, JsonNode status, List<DependencyCircuit> circuits,
      Map<String, List<DependencyCircuit.Transition>> transitions) {
    if (transitions.values().stream().anyMatch(t -> !t.isEmpty())) {
      // a reconcile on the same version again (the cache had not seen the write) keeps the first one owed: it is
      // the one that may have landed
      owed.merge(policy.getMetadata().getUid(), new Owed(policy.getMetadata().getResourceVersion(), status, circuits,
          transitions), (first, again) -> first.readVersion().equals(again.readVersion()) ? first : again);
    }
  }

  /**
   * Tells what is owed to {@code policy} when it shows {@code shown}, the status the failed write carried (it
   * landed), and forgets it; forgets it untold when the policy moved on to another status. Kept while the policy is
   * still the version the write was decided on: the cache has not shown what became of the write yet.
   */
  void settle(AgentRestartPolicy policy, JsonNode shown, DecisionSink sink) {
    String uid = policy.getMetadata().getUid();
    Owed o = owed.get(uid);
    if (o == null || o.readVersion().equals(policy.getMetadata().getResourceVersion())) {
      return;
    }
    owed.remove(uid, o);
    if (Objects.equals(o.status(), shown)) {
      sink.dependencies(policy, o.circuits(), o.transitions());
    }
  }

  /** The policy is gone. */
  void forget(AgentRestartPolicy policy) {
    owed.remove(policy.getMetadata().getUid());
  }
}

package dev.respawn.controller;

import dev.respawn.api.v1alpha1.StatusCondition;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Kubernetes-style conditions: lastTransitionTime moves only when a condition's status changes, so
 * an unchanged condition never rewrites status (no reconcile loops).
 */
public final class Conditions {
  private Conditions() {}

  /**
   * The new condition list: {@code wanted} entries in order, each keeping its previous
   * lastTransitionTime when its status did not change; then, as they were, the conditions another party added under
   * a domain-qualified type ({@code example.com/Audited}: the operator's own types have no domain).
   */
  public static List<StatusCondition> merge(List<StatusCondition> previous, List<StatusCondition> wanted,
      Long generation, Instant now) {
    List<StatusCondition> result = new ArrayList<>();
    for (StatusCondition w : wanted) {
      StatusCondition old = find(previous, w.type);
      w.observedGeneration = generation;
      w.lastTransitionTime = old != null && old.status != null && old.status.equals(w.status)
          && old.lastTransitionTime != null ? old.lastTransitionTime : now.toString();
      result.add(w);
    }
    for (StatusCondition p : previous == null ? List.<StatusCondition>of() : previous) {
      if (p != null && p.type != null && p.type.contains("/") && find(wanted, p.type) == null) {
        result.add(p);
      }
    }
    return result;
  }

  public static StatusCondition find(List<StatusCondition> conditions, String type) {
    if (conditions == null) {
      return null;
    }
    return conditions.stream().filter(c -> c != null && type.equals(c.type)).findFirst().orElse(null);
  }

  public static StatusCondition of(String type, boolean status, String reason, String message) {
    // shown by kubectl describe: on one line, whatever an agent's words in it hold
    return new StatusCondition(type, status ? "True" : "False", reason,
        message == null ? null : dev.respawn.policy.Bounds.oneLine(message));
  }
}

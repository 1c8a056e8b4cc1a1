package dev.respawn.controller;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import dev.respawn.api.v1alpha1.BlameRecord;
import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.api.v1alpha1.DependencyStatus;
import dev.respawn.policy.DependencyCircuit;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Maps the shared circuits of a policy (status.dependencies) to the core's values and back, losslessly. */
public final class DependencyStatuses {
  private DependencyStatuses() {}

  /** The circuits the policy's status shows, by dependency name. */
  public static Map<String, DependencyCircuit> of(AgentRestartPolicy policy) {
    Map<String, DependencyCircuit> out = new HashMap<>();
    if (policy == null || policy.getStatus() == null || policy.getStatus().dependencies == null) {
      return out;
    }
    for (DependencyStatus d : policy.getStatus().dependencies) {
      if (d != null && d.name != null) {
        out.put(d.name, toCircuit(d));
      }
    }
    return out;
  }

  static DependencyCircuit toCircuit(DependencyStatus d) {
    List<DependencyCircuit.Blame> blame = new ArrayList<>();
    for (BlameRecord b : d.recentBlame == null ? List.<BlameRecord>of() : d.recentBlame) {
      Instant at = b == null ? null : StatusMapper.time(b.at);
      if (at != null && b.instance != null) {
        blame.add(new DependencyCircuit.Blame(b.instance, at));
      }
    }
    return new DependencyCircuit(d.name, d.state == null ? CircuitState.Closed : d.state,
        d.trips == null ? 0 : d.trips, StatusMapper.time(d.openedAt), StatusMapper.time(d.halfOpenAt),
        StatusMapper.time(d.closedAt), StatusMapper.time(d.lastTransitionTime),
        names(d.probes), names(d.releaseOrder), blame,
        d.waiting == null ? 0 : d.waiting, d.blamed == null ? 0 : d.blamed);
  }

  /** Instance names as status lists them, without null items (a hand edit where no schema is enforced). */
  private static List<String> names(List<String> listed) {
    return listed == null ? List.of() : listed.stream().filter(java.util.Objects::nonNull).toList();
  }

  /**
   * A policy status as read back, with each dependency's probes list as the operator writes it: a [] written
   * may come back absent (some API servers, the fabric8 mock among them, drop empty lists), and that alone is
   * no change to write again.
   */
  static JsonNode withProbesShown(JsonNode status) {
    if (status == null || !status.path("dependencies").isArray()) {
      return status;
    }
    JsonNode copy = status.deepCopy();
    for (JsonNode d : copy.path("dependencies")) {
      if (d instanceof ObjectNode o && !o.has("probes")) {
        o.putArray("probes");
      }
    }
    return copy;
  }

  static DependencyStatus toStatus(DependencyCircuit c) {
    DependencyStatus d = new DependencyStatus();
    d.name = c.name();
    d.state = c.state();
    d.blamed = c.blamed();
    d.waiting = c.waiting();
    d.probes = c.probes(); // always shown, [] when none (api.md §11's example)
    d.trips = c.trips();
    d.openedAt = StatusMapper.text(c.openedAt());
    d.halfOpenAt = StatusMapper.text(c.halfOpenAt());
    d.closedAt = StatusMapper.text(c.closedAt());
    d.lastTransitionTime = StatusMapper.text(c.lastTransitionTime());
    d.releaseOrder = c.releaseOrder().isEmpty() ? null : c.releaseOrder();
    List<BlameRecord> blame = new ArrayList<>();
    for (DependencyCircuit.Blame b : c.recentBlame()) {
      blame.add(new BlameRecord(b.instance(), StatusMapper.text(b.at())));
    }
    d.recentBlame = blame.isEmpty() ? null : blame;
    return d;
  }
}

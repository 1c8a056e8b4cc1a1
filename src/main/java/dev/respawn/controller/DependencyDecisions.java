package dev.respawn.controller;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import dev.respawn.api.v1alpha1.DependencyStatus;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Which changes of a shared circuit or of an instance concern the other side: the instances care about a
 * circuit's decisions (state, when it goes HalfOpen, the probes, the release order), not its counters; the
 * policy cares about an instance's blame, its waiting and its phase while it waits or probes. Everything
 * else is filtered out, so a fleet's status writes do not re-reconcile the fleet.
 */
final class DependencyDecisions {
  private DependencyDecisions() {}

  static boolean changed(AgentRestartPolicy newer, AgentRestartPolicy older) {
    return !Objects.equals(decisions(newer), decisions(older));
  }

  static boolean changed(AgentInstance newer, AgentInstance older) {
    return !Objects.equals(facts(newer), facts(older));
  }

  private static List<Object> decisions(AgentRestartPolicy p) {
    List<Object> out = new ArrayList<>();
    if (p.getStatus() != null && p.getStatus().dependencies != null) {
      for (DependencyStatus d : p.getStatus().dependencies) {
        if (d == null) {
          continue;
        }
        out.add(List.of(String.valueOf(d.name), String.valueOf(d.state), String.valueOf(d.halfOpenAt),
            String.valueOf(d.closedAt),
            String.valueOf(d.probes == null ? List.of() : d.probes), String.valueOf(d.releaseOrder)));
      }
    }
    return out;
  }

  private static List<String> facts(AgentInstance i) {
    var st = i.getStatus();
    if (st == null) {
      return List.of();
    }
    String blamed = st.lastFailure == null || st.lastFailure.dependency == null ? ""
        : st.lastFailure.dependency + "@" + st.lastFailure.at;
    String waiting = st.waitingFor == null ? "" : st.waitingFor + "/" + st.phase;
    boolean suspended = i.getSpec() != null && Boolean.TRUE.equals(i.getSpec().suspend);
    return List.of(blamed, waiting, String.valueOf(suspended));
  }
}

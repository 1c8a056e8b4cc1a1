package dev.respawn.cli;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentInstanceStatus;
import dev.respawn.api.v1alpha1.Phase;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code restart --all-failed}: resumes (respawn.dev/resume) every Failed or Escalated instance of the
 * namespace and reports it in the orchestrator's restart_all_failed shape.
 */
final class FailedAgentsResume {
  private final Cluster cluster;
  private final OutputFormat format;
  private final PrintWriter out;

  FailedAgentsResume(Cluster cluster, OutputFormat format, PrintWriter out) {
    this.cluster = cluster;
    this.format = format;
    this.out = out;
  }

  static boolean failed(AgentInstance i) {
    Phase phase = i.getStatus() == null ? null : i.getStatus().phase;
    return phase == Phase.Failed || phase == Phase.Escalated;
  }

  int run() {
    List<AgentInstance> failed = cluster.list().stream().filter(FailedAgentsResume::failed)
        .sorted(Comparator.comparing(i -> i.getMetadata().getName())).toList();
    List<Map<String, Object>> agents = new ArrayList<>();
    List<String> errors = new ArrayList<>();
    // the operator refuses a resume while spec.suspend is true: such an instance is not asked, and said so
    List<String> suspended = new ArrayList<>();
    for (AgentInstance i : failed) {
      String name = i.getMetadata().getName();
      if (i.getSpec() != null && Boolean.TRUE.equals(i.getSpec().suspend)) {
        suspended.add(name);
        continue;
      }
      String id = RequestIds.next(cluster.clock, i, AgentInstance.RESUME_ANNOTATION);
      Map<String, Object> a = item(i, id);
      try {
        cluster.annotate(name, Map.of(AgentInstance.RESUME_ANNOTATION, id));
        agents.add(a);
      } catch (RuntimeException e) {
        String why = e instanceof CommandFailure ? e.getMessage() : ApiErrors.describe(e, cluster.url());
        errors.add(name + ": " + why);
      }
    }
    Map<String, Object> d = new LinkedHashMap<>();
    d.put("success", errors.isEmpty());
    d.put("action", "restart_all_failed");
    d.put("namespace", cluster.namespace);
    d.put("agents_scheduled", agents.size());
    d.put("agents", agents);
    if (!errors.isEmpty()) {
      d.put("errors", errors);
    }
    String skipped = suspended.isEmpty() ? "" : "; not resumed, spec.suspend is true (clear it first): "
        + String.join(", ", suspended);
    if (!suspended.isEmpty()) {
      d.put("agents_suspended", suspended);
    }
    d.put("timestamp", cluster.now().toString());
    d.put("message", (agents.isEmpty() && errors.isEmpty() ? "No Failed or Escalated agents to resume in namespace "
        + cluster.namespace : agents.size() + " agent(s) resumed: each starts a new lifecycle now") + skipped);
    Printer.print(out, format, d, () -> table(agents, suspended) + (skipped.isEmpty() ? "" : skipped.substring(2)
        + System.lineSeparator()));
    if (!errors.isEmpty()) {
      throw CommandFailure.of("could not resume " + String.join("; ", errors));
    }
    return 0;
  }

  private static Map<String, Object> item(AgentInstance i, String id) {
    AgentInstanceStatus st = i.getStatus();
    Map<String, Object> a = new LinkedHashMap<>();
    a.put("agent_id", i.getMetadata().getName());
    a.put("task_id", i.getSpec() == null ? null : i.getSpec().task);
    a.put("retry_count", st.attempt == null ? 0 : st.attempt);
    a.put("backoff_seconds", 0);
    a.put("reason", st.lastDecision != null && st.lastDecision.reasonCode != null ? st.lastDecision.reasonCode
        : st.terminalReason == null ? null : st.terminalReason.name());
    a.put("phase", st.phase.name());
    a.put("request_id", id);
    return a;
  }

  private String table(List<Map<String, Object>> agents, List<String> suspended) {
    if (agents.isEmpty()) {
      return "No Failed or Escalated agentinstances " + (suspended.isEmpty() ? "" : "to resume ") + "in namespace "
          + cluster.namespace + (suspended.isEmpty() ? "" : System.lineSeparator());
    }
    Table t = new Table("NAME", "PHASE", "REASON", "RETRIES", "REQUEST");
    agents.forEach(a -> t.row(a.get("agent_id"), a.get("phase"), a.get("reason"), a.get("retry_count"),
        a.get("request_id")));
    return t.toString() + agents.size() + " agent(s) resumed: each starts a new lifecycle now" + System.lineSeparator();
  }
}

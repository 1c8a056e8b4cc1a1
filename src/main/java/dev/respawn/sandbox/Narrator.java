package dev.respawn.sandbox;

import dev.respawn.policy.ReasonCode;
import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentInstanceStatus;
import dev.respawn.api.v1alpha1.DecisionStatus;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Tells what happens to the sandbox's agents, one line per change seen in their status (a run
 * started, a decision made, the circuit moved, a failure sequence ended), and prints a
 * {@code kubectl get agentinstances}-style table.
 */
public final class Narrator {
  private final PrintWriter out;
  private final InstantSource clock;
  private final Instant start;
  private final Map<String, AgentInstance> told = new HashMap<>();

  public Narrator(PrintWriter out, InstantSource clock) {
    this.out = out;
    this.clock = clock;
    this.start = clock.instant();
  }

  /** Narrates the difference between two versions of an instance (old may be null). */
  public synchronized void changed(AgentInstance old, AgentInstance now) {
    AgentInstanceStatus a = old == null || old.getStatus() == null ? new AgentInstanceStatus() : old.getStatus();
    told.put(now.getMetadata().getName(), now);
    AgentInstanceStatus b = now.getStatus();
    if (b == null) {
      return;
    }
    String name = now.getMetadata().getName();
    DecisionStatus d = b.lastDecision;
    if (d != null && (a.lastDecision == null || !Objects.equals(a.lastDecision.at, d.at)
        || !Objects.equals(a.lastDecision.reasonCode, d.reasonCode))) {
      say(name, decision(b, d));
    }
    if (b.run != null && !Objects.equals(a.run, b.run)) {
      String how = b.run == 1 ? "first run" : "run " + b.run + " started";
      if (b.lastRestart != null && b.run > 1) {
        how += " (" + b.lastRestart.kind + (b.lastRestart.resumeCheckpoint != null
            ? ", resuming from checkpoint " + b.lastRestart.resumeCheckpoint : "") + ")";
      }
      say(name, how + ": pod " + b.currentPod);
    }
    String circuitA = a.circuitBreaker == null ? "Closed" : String.valueOf(a.circuitBreaker.state);
    String circuitB = b.circuitBreaker == null ? "Closed" : String.valueOf(b.circuitBreaker.state);
    if (!circuitA.equals(circuitB)) {
      say(name, "circuit breaker " + circuitA + " -> " + circuitB);
    }
    if (a.attempt != null && a.attempt > 0 && b.attempt != null && b.attempt == 0 && d != null
        && !"resumed".equals(d.reasonCode)) {
      say(name, "healthy for resetAfter: the failure sequence is over (RestartSucceeded)");
    }
  }

  /** The instances as last narrated: every line about them has been printed. */
  public synchronized List<AgentInstance> told() {
    return List.copyOf(told.values());
  }

  private String decision(AgentInstanceStatus s, DecisionStatus d) {
    String failure = s.lastFailure == null ? "" : s.lastFailure.failureClass + "/" + s.lastFailure.failureReason
        + (s.lastFailure.exitCode != null ? " exit " + s.lastFailure.exitCode : "")
        + (s.lastFailure.message != null ? " \"" + s.lastFailure.message + "\"" : "");
    ReasonCode code = ReasonCode.of(d.reasonCode).orElse(null);
    if (code == null) {
      return d.action + " (" + d.reasonCode + ")";
    }
    return switch (code) {
      case RESTART_SCHEDULED, RESUME_BLOCKED_COOLDOWN -> "failed (" + failure + "): " + d.reasonCode
          + ", attempt " + d.attempt + "/" + d.maxAttempts + ", next run in " + seconds(d.delaySeconds);
      case CIRCUIT_OPEN -> "failed (" + failure + "): circuit_open - " + ("Escalated".equals(String.valueOf(s.phase))
          ? "latched: Escalated until an operator resumes it" : "next run is the HalfOpen trial in "
          + seconds(d.delaySeconds));
      case DEPENDENCY_CIRCUIT_OPEN -> "failed (" + failure + "): waits for " + s.waitingFor
          + " (its circuit is shared by the fleet) - not counted against the agent";
      case RESTART_REQUESTED -> "asked for its own restart (exit code " + lastExitCode(s) + ": \""
          + (s.lastRestart == null ? "" : s.lastRestart.reason) + "\"): restarted at once, not a failure";
      case RESUMED -> "resume requested by an operator: new lifecycle, restarting now";
      case MANUAL_RESTART -> "restart requested by an operator";
      case CLEAN_EXIT -> "exited cleanly: Succeeded";
      default -> d.action + " (" + d.reasonCode + ")" + (failure.isEmpty() ? "" : " after " + failure)
          + (s.phase != null && s.phase.isTerminal() ? ": " + s.phase + " - only an operator action continues" : "");
    };
  }

  /** The exit code of the run that ended last, as status.history records it. */
  private static String lastExitCode(AgentInstanceStatus s) {
    return s.history == null || s.history.isEmpty() || s.history.get(s.history.size() - 1).exitCode == null ? "?"
        : String.valueOf(s.history.get(s.history.size() - 1).exitCode);
  }

  private static String seconds(Double s) {
    return s == null ? "?" : String.format(java.util.Locale.ROOT, "%.1fs", s);
  }

  private void say(String instance, String text) {
    // the sandbox's lines read the same on any machine: a German locale would print "+1,5s"
    out.printf(java.util.Locale.ROOT, "[+%5.1fs] %-11s %s%n", Duration.between(start, clock.instant()).toMillis()
        / 1000.0, instance, text);
  }

  /** Prints the instances like {@code kubectl get agentinstances}. */
  public synchronized void table(List<AgentInstance> instances) {
    List<String[]> rows = new ArrayList<>();
    rows.add(new String[] {"NAME", "PHASE", "RESTARTS", "ATTEMPT", "CIRCUIT", "HEARTBEAT", "NEXT-RESTART"});
    instances.stream().sorted(Comparator.comparing(i -> i.getMetadata().getName())).forEach(i -> {
      AgentInstanceStatus s = i.getStatus() == null ? new AgentInstanceStatus() : i.getStatus();
      rows.add(new String[] {i.getMetadata().getName(), text(s.phase), text(s.restarts), text(s.attempt),
          s.circuitBreaker == null ? "" : text(s.circuitBreaker.state),
          s.heartbeat == null ? "" : text(s.heartbeat.verdict), nextRestart(s)});
    });
    int[] width = new int[rows.get(0).length];
    for (String[] r : rows) {
      for (int c = 0; c < r.length; c++) {
        width[c] = Math.max(width[c], r[c].length());
      }
    }
    for (String[] r : rows) {
      StringBuilder line = new StringBuilder();
      for (int c = 0; c < r.length; c++) {
        line.append(String.format("%-" + (width[c] + 3) + "s", r[c]));
      }
      out.println(line.toString().stripTrailing());
    }
  }

  private String nextRestart(AgentInstanceStatus s) {
    java.time.Instant next = dev.respawn.api.v1alpha1.Timestamps.parse(s.nextRestartAt);
    if (next == null) {
      return "";
    }
    long ms = Duration.between(clock.instant(), next).toMillis();
    return ms <= 0 ? "due" : String.format(java.util.Locale.ROOT, "in %.1fs", ms / 1000.0);
  }

  private static String text(Object o) {
    return o == null ? "" : o.toString();
  }
}

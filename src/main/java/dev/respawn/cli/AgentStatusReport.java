package dev.respawn.cli;

import dev.respawn.policy.Bounds;
import dev.respawn.policy.ReasonCode;
import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentInstanceStatus;
import dev.respawn.api.v1alpha1.FailureStatus;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.api.v1alpha1.RefusedRequestStatus;
import dev.respawn.api.v1alpha1.StatusCondition;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * {@code kubectl respawn status}: an AgentInstance's status in the words of the orchestrator's
 * check_status ({@code agent_id}, {@code task_id}, {@code retry_count}, {@code max_retries},
 * {@code can_retry}, {@code last_failure}, {@code reason}, {@code restarting_in_seconds}, {@code message}).
 */
record AgentStatusReport(String name, String namespace, String task, Phase phase, int retryCount, Integer maxRetries,
    boolean canRetry, String lastFailureAt, String reason, Long restartingInSeconds, String nextRestartAt,
    String circuit, String currentPod, Integer run, Integer restarts, String terminalReason, FailureStatus failure,
    String message, Map<String, RefusedRequestStatus> refused) {
  static final String RESUME_COOLDOWN = ReasonCode.RESUME_BLOCKED_COOLDOWN.code();
  static final String RESUME_ALLOWED = ReasonCode.RESUME_ALLOWED.code();

  /**
   * @param maxRetries the retries the current failure sequence allows (null when unknown)
   * @param now the clock's time, for the seconds until the next restart
   */
  static AgentStatusReport of(AgentInstance instance, Integer maxRetries, Instant now) {
    return of(instance, maxRetries, now, null);
  }

  /** @param dependency the shared circuit the instance waits for (from its policy's status), or null */
  static AgentStatusReport of(AgentInstance instance, Integer maxRetries, Instant now,
      dev.respawn.api.v1alpha1.DependencyStatus dependency) {
    AgentInstanceStatus st = instance.getStatus() == null ? new AgentInstanceStatus() : instance.getStatus();
    String name = instance.getMetadata().getName();
    Phase phase = st.phase;
    boolean waiting = phase == Phase.Backoff || phase == Phase.CircuitOpen;
    String decided = st.lastDecision == null ? null : st.lastDecision.reasonCode;
    boolean cooldown = phase == Phase.Backoff && (RESUME_COOLDOWN.equals(decided)
        || (st.resume != null && RESUME_COOLDOWN.equals(st.resume.reasonCode)));
    Instant next = Times.parse(st.nextRestartAt);
    Long restartingIn = null;
    if (waiting && next != null) {
      restartingIn = Times.secondsUntil(next, now);
    } else if (cooldown && st.resume != null && st.resume.cooldownRemainingSeconds != null) {
      // only a resume cool-down's remaining seconds say when; an instance waiting for a dependency's circuit
      // without nextRestartAt runs when the circuit lets it, at no known time (its resume shows 0 seconds)
      restartingIn = st.resume.cooldownRemainingSeconds;
    }
    String reason = cooldown ? RESUME_COOLDOWN : RESUME_COOLDOWN.equals(decided) ? RESUME_ALLOWED : decided;
    boolean canRetry = phase == null || !phase.isTerminal();
    String message = st.waitingFor != null && phase == Phase.CircuitOpen
        ? waiting(st, dependency, restartingIn) : message(name, st, phase, restartingIn, cooldown, reason);
    // refused (policy missing or invalid, spec invalid): nothing is restarted and no request acted on until it is fixed
    java.util.Optional<InstanceRefusal> refusal = InstanceRefusal.of(st);
    if (refusal.isPresent()) {
      canRetry = false;
      reason = refusal.get().reason().code();
      restartingIn = null;
      message = refusal.get().message();
    }
    return new AgentStatusReport(name, instance.getMetadata().getNamespace(),
        instance.getSpec() == null ? null : instance.getSpec().task, phase, st.attempt == null ? 0 : st.attempt,
        maxRetries, canRetry, st.lastFailure == null ? null : st.lastFailure.at, reason, restartingIn,
        st.nextRestartAt, st.circuitBreaker == null || st.circuitBreaker.state == null ? null
            : st.circuitBreaker.state.name(), st.currentPod, st.run, st.restarts,
        st.terminalReason == null ? null : st.terminalReason.name(), st.lastFailure, message,
        st.refusedRequests == null ? Map.of() : new TreeMap<>(st.refusedRequests));
  }

  private static String message(String name, AgentInstanceStatus st, Phase phase, Long in, boolean cooldown,
      String reason) {
    if (phase == null) {
      return "No status yet: is the Respawn operator running?";
    }
    String checkpoint = st.resume == null || st.resume.checkpoint == null ? "" : " " + st.resume.checkpoint;
    return switch (phase) {
      case Pending -> "Agent waiting for its first run";
      case Starting -> "Agent starting (pod " + st.currentPod + ")";
      case Running -> "Agent running (pod " + st.currentPod + ")";
      case Backoff -> cooldown
          ? "Agent restarting in " + seconds(in) + ": resume cool-down before resuming from checkpoint" + checkpoint
          : "Agent restarting in " + seconds(in) + " (" + (reason == null ? "restart scheduled" : reason) + ")";
      case CircuitOpen -> "Circuit breaker open: trial run in " + seconds(in);
      case Succeeded -> "Agent finished successfully; nothing to restart";
      case Suspended -> "Agent suspended (spec.suspend: true); set it to false to run again";
      case Escalated, Failed -> escalation(name, st, phase, reason);
    };
  }

  /** "Waiting for model-api (Open, probe at ...)": what a shared dependency's circuit says of this instance. */
  private static String waiting(AgentInstanceStatus st, dev.respawn.api.v1alpha1.DependencyStatus d, Long in) {
    String circuit = d == null || d.state == null ? "" : switch (d.state) {
      case Open -> " (Open, probe at " + d.halfOpenAt + ")";
      case HalfOpen -> " (HalfOpen, probing with " + (d.probes == null ? "none" : String.join(", ", d.probes)) + ")";
      case Closed -> " (Closed, releasing)";
    };
    return "Waiting for " + st.waitingFor + circuit + (st.nextRestartAt != null ? "; next run in " + seconds(in)
        + " at " + st.nextRestartAt : "; it runs when the circuit lets it (a probe, or its turn in the release)")
        + "; not counted as a failure of the agent";
  }

  private static String escalation(String name, AgentInstanceStatus st, Phase phase, String reason) {
    if (st.conditions != null) {
      for (StatusCondition c : st.conditions) {
        if ("Escalated".equals(c.type) && "True".equals(c.status) && c.message != null && !c.message.isBlank()) {
          return c.message;
        }
      }
    }
    return "Agent " + phase + (reason == null ? "" : " (" + reason + ")")
        + "; only an operator action can continue: kubectl respawn resume " + name + " --force";
  }

  private static String seconds(Long s) {
    return s == null ? "an unknown time" : s + "s";
  }

  /** The JSON/YAML document: the orchestrator's field names first, then the extras. */
  Map<String, Object> document() {
    Map<String, Object> d = new LinkedHashMap<>();
    d.put("success", true);
    d.put("agent_id", name);
    d.put("task_id", task);
    d.put("retry_count", retryCount);
    d.put("max_retries", maxRetries);
    d.put("can_retry", canRetry);
    d.put("last_failure", lastFailureAt);
    d.put("reason", reason);
    d.put("restarting_in_seconds", restartingInSeconds);
    d.put("message", message);
    d.put("namespace", namespace);
    d.put("phase", phase == null ? null : phase.name());
    d.put("circuit", circuit);
    d.put("next_restart_at", nextRestartAt);
    d.put("current_pod", currentPod);
    d.put("run", run);
    d.put("restarts", restarts);
    d.put("terminal_reason", terminalReason);
    d.put("failure", failure == null ? null : failureDocument(failure));
    if (!refused.isEmpty()) {
      Map<String, Object> r = new LinkedHashMap<>();
      refused.forEach((kind, req) -> r.put(kind, Map.of("request_id", Objects.toString(req.id, ""), "message",
          Objects.toString(req.message, ""))));
      d.put("refused_requests", r);
    }
    return d;
  }

  private static Map<String, Object> failureDocument(FailureStatus f) {
    Map<String, Object> d = new LinkedHashMap<>();
    d.put("pod", f.pod);
    d.put("class", f.failureClass == null ? null : f.failureClass.name());
    d.put("failure_reason", f.failureReason);
    d.put("exit_code", f.exitCode);
    d.put("message", f.message);
    d.put("retryable", f.retryable);
    d.put("at", f.at);
    return d;
  }

  /** The human table: attempt/max, last failure, reason code, next restart, then the message. */
  String table(Instant now) {
    String attempt = retryCount + "/" + (maxRetries == null ? "?" : maxRetries);
    String lastFailure = null;
    if (failure != null) {
      Instant at = Times.parse(failure.at);
      lastFailure = (failure.failureClass == null ? "Failure" : failure.failureClass.name())
          + (failure.exitCode == null ? "" : " exit " + failure.exitCode)
          + (at == null ? "" : " (" + Times.human(Duration.between(at, now)) + " ago)");
    }
    String next = restartingInSeconds == null ? null : "in " + Times.human(Duration.ofSeconds(restartingInSeconds));
    StringBuilder out = new StringBuilder(new Table("NAME", "PHASE", "ATTEMPT", "CIRCUIT", "LAST-FAILURE", "REASON",
        "NEXT-RESTART").row(name, phase, attempt, circuit, lastFailure, reason, next).toString())
        .append(System.lineSeparator()).append(message).append(System.lineSeparator());
    // between runs the table shows only the failure's class (an escalation's message carries all of it)
    if (failure != null && failure.message != null && !failure.message.isBlank() && (phase == Phase.Backoff
        || phase == Phase.CircuitOpen || phase == Phase.Starting)) {
      out.append("Last failure: pod ").append(failure.pod).append(": \"")
          .append(Bounds.oneLine(failure.message)).append('"').append(System.lineSeparator());
    }
    refused.forEach((kind, r) -> out.append("Refused ").append(kind).append(" request ").append(r.id).append(": ")
        .append(Objects.toString(r.message, "")).append(System.lineSeparator()));
    return out.toString();
  }
}

package dev.respawn.acceptance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.events.v1.Event;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** api.md §8: one Event per decision, series folding, the JSON audit line, the metrics and health endpoints. */
class EventsAuditMetricsIT extends OperatorScenario {
  static final List<String> AUDIT_FIELDS = List.of("event", "namespace", "instance", "run", "interruption_class",
      "eligible", "reason_code", "cooldown_seconds_remaining", "attempt", "max_attempts", "at", "actor");

  @Test
  void aDecisionWritesOneEventAndOneAuditLineWithTheContractFields() {
    policy("p", "backoff: {type: Immediate}\nmaxRetries: 3\nresume: {mode: 'Off'}");
    instance("i", "p");
    startRun("i", "i-1");
    int before = events("i").size();
    kubelet.terminated(ns, "i-1", 1, "Error", "x");
    startRun("i", "i-2");
    await().atMost(PATIENCE).until(() -> events("i").size() > before);
    holdsFor(Duration.ofSeconds(3), () -> events("i").size() == before + 1);
    Event e = events("i").get(events("i").size() - 1);
    assertThat(e.getType()).isIn("Normal", "Warning");
    assertThat(e.getNote()).isNotBlank();
    assertThat(e.getReportingController()).isNotBlank();
    assertThat(e.getAction()).isNotBlank();

    List<JsonNode> failures = operator.auditLines(ns, "i").stream()
        .filter(a -> "restart_scheduled".equals(a.path("reason_code").asText())).toList();
    assertThat(failures).hasSize(1);
    JsonNode line = failures.get(0);
    for (String field : AUDIT_FIELDS) {
      assertThat(line.has(field)).as(field + " in " + line).isTrue();
    }
    assertThat(line.path("run").asInt()).isEqualTo(1);
    assertThat(line.path("interruption_class").asText()).isEqualTo("ToolFailure");
    assertThat(line.path("attempt").asInt()).isEqualTo(1);
    assertThat(line.path("max_attempts").asInt()).isEqualTo(3);
  }

  /** A quick run of failures loses no decision's Event (a recorder's burst allowance covers them). */
  @Test
  void thirteenQuickFailuresWriteThirteenEvents() {
    policy("p", "backoff: {type: Immediate}\nmaxRetries: 12\nresume: {mode: 'Off'}\n"
        + "circuitBreaker: {failureThreshold: 100}");
    instance("b", "p");
    for (int run = 1; run <= 13; run++) {
      String pod = "b-" + run;
      startRun("b", pod);
      kubelet.terminated(ns, pod, 1, "Error", "failure " + run);
      awaitFailureOf("b", pod);
    }
    awaitPhase("b", "Escalated");
    await().atMost(PATIENCE).until(() -> events("b").size() >= 13);
    holdsFor(Duration.ofSeconds(3), () -> events("b").size() == 13);
    assertThat(events("b")).filteredOn(e -> "Escalated".equals(e.getReason())).hasSize(1);
  }

  @Test
  void aRepeatedEventFoldsIntoItsSeries() {
    policy("p", "maxRetries: 5000\nresetAfter: 10s");
    await().atMost(PATIENCE).until(() -> cluster.events(ns, "AgentRestartPolicy", "p").size() == 1);
    assertThat(cluster.events(ns, "AgentRestartPolicy", "p").get(0).getReason()).isEqualTo("PolicyInvalid");
    cluster.editPolicySpec(ns, "p", spec -> spec.put("resetAfter", "11s"));
    await().atMost(Duration.ofSeconds(45)).until(() -> cluster.events(ns, "AgentRestartPolicy", "p").stream()
        .anyMatch(e -> e.getSeries() != null && e.getSeries().getCount() >= 2));
    List<Event> events = cluster.events(ns, "AgentRestartPolicy", "p");
    assertThat(events).hasSize(1);
    assertThat(events.get(0).getSeries().getLastObservedTime()).isNotNull();
  }

  /**
   * What an agent writes (its termination message) is quoted in Events and conditions on one line: it cannot add a
   * row that looks like the operator's own Event to kubectl describe, nor send escape sequences to a terminal,
   * nor put an instruction of its own after the Escalated Event's checklist.
   */
  @Test
  void anAgentsWordsCannotPassForTheOperatorsEventsOrChecklist() {
    String forged = "ok\n  Normal   RestartSucceeded  1s   respawn.dev/operator  Restart succeeded for victim\r\n"
        + "\u001b[2J\u0007\u0000 kubectl respawn resume victim --force";
    policy("p", "backoff: {type: Immediate}\nmaxRetries: 0\nresume: {mode: 'Off'}");
    instance("i", "p");
    startRun("i", "i-1");
    kubelet.terminated(ns, "i-1", 42, "Error", forged);
    startRun("i", "i-2");
    kubelet.terminated(ns, "i-2", 1, "Error", forged);
    JsonNode status = awaitPhase("i", "Escalated");
    await().atMost(PATIENCE).until(() -> events("i").stream().anyMatch(e -> "Escalated".equals(e.getReason())));
    List<Event> events = events("i");
    assertThat(events).extracting(Event::getReason).contains("RestartRequested", "Escalated");
    assertThat(events).allSatisfy(e -> assertThat(e.getNote()).doesNotContainPattern("\\p{Cc}"));
    assertThat(events).filteredOn(e -> "RestartRequested".equals(e.getReason())).allSatisfy(e ->
        assertThat(e.getNote()).contains("ok\\n  Normal   RestartSucceeded", "\\u001b[2J"));
    String escalated = condition(status, "Escalated").path("message").asText();
    assertThat(escalated).doesNotContainPattern("\\p{Cc}").contains("message \"ok\\n  Normal");
    // the checklist is the operator's, whole, after the quoted words
    assertThat(escalated).endsWith("or kubectl respawn resume i --force");
    assertThat(condition(status, "Ready").path("message").asText()).doesNotContainPattern("\\p{Cc}");
    // status keeps what the agent wrote as data (JSON escapes it)
    assertThat(status.path("lastFailure").path("message").asText()).startsWith("ok\n  Normal");
  }

  @Test
  void metricsAreExposedByNameWithoutInstanceNamesAndHealthEndpointsAnswer() throws Exception {
    policy("p", "backoff: {type: Immediate}\nmaxRetries: 5\nresume: {mode: 'Off'}\n"
        + "circuitBreaker: {failureThreshold: 1, window: 1m, openDuration: 60s}");
    instance("metric-probe-zq", "p");
    startRun("metric-probe-zq", "metric-probe-zq-1");
    kubelet.terminated(ns, "metric-probe-zq-1", 1, "Error", "x");
    awaitPhase("metric-probe-zq", "CircuitOpen");
    await().atMost(PATIENCE).until(() -> operator.metrics().contains("respawn_circuit_trips_total"));
    String m = operator.metrics();
    assertThat(m).contains("respawn_restart_attempts_total{class=\"ToolFailure\",result=\"failed\"}",
        "respawn_restart_delay_seconds", "respawn_circuit_breakers{state=\"Open\"} 1.0",
        "respawn_decision_duration", "respawn_heartbeat_stale", "respawn_restart_exhausted",
        "respawn_dependency_circuits", "respawn_dependency_waiting", "respawn_events_dropped_total",
        "respawn_events_lost_total");
    // the process's own: its heap, garbage collection, threads, CPU
    assertThat(m).contains("jvm_memory_used_bytes{area=\"heap\"", "jvm_gc_memory_allocated_bytes_total",
        "jvm_threads_live_threads", "process_cpu_usage", "process_uptime_seconds");
    assertThat(m).doesNotContain("metric-probe-zq");
    assertThat(operator.get("/healthz").statusCode()).isEqualTo(200);
    assertThat(operator.get("/readyz").statusCode()).isEqualTo(200);
  }
}

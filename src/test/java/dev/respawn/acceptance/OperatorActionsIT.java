package dev.respawn.acceptance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** api.md §3.1 (spec.suspend) and §6 (the restart and resume annotations). */
class OperatorActionsIT extends OperatorScenario {
  static final String RESTART = "respawn.dev/restart";
  static final String RESUME = "respawn.dev/resume";

  void suspend(String instance, boolean suspend) {
    cluster.editInstanceSpec(ns, instance, spec -> spec.put("suspend", suspend));
  }

  boolean goneOrDeleting(String pod) {
    var p = pod(pod);
    return p == null || p.getMetadata().getDeletionTimestamp() != null;
  }

  @Test
  void suspendingARunningInstanceEndsTheRunAndRestartsNothingUntilUnsuspended() {
    policy("p", "backoff: {type: Immediate}\nmaxRetries: 3\nresume: {mode: 'Off'}");
    instance("s", "p");
    startRun("s", "s-1");
    suspend("s", true);
    JsonNode s = awaitPhase("s", "Suspended");
    assertThat(s.path("terminalReason").asText()).isEqualTo("OperatorShutdown");
    assertThat(condition(s, "Ready").path("status").asText()).isEqualTo("False");
    await().atMost(PATIENCE).until(() -> goneOrDeleting("s-1"));
    holdsFor(Duration.ofSeconds(3), () -> pod("s-2") == null);
    suspend("s", false);
    startRun("s", "s-2");
    assertThat(status("s").path("terminalReason").isMissingNode() || status("s").path("terminalReason").isNull())
        .as("no terminal reason once running again: " + status("s")).isTrue();
  }

  /** A terminal instance has no run to stop: clearing spec.suspend must not restart it (only resume does). */
  @ParameterizedTest(name = "{0}")
  @CsvSource({
      "Failed, 1, invalid_configuration: bad key",
      "Escalated, 1, boom",
      "Succeeded, 0, ''"})
  void suspendingAndUnsuspendingATerminalInstanceRestartsNothing(String terminal, int exitCode, String message) {
    policy("p", "backoff: {type: Immediate}\nmaxRetries: 0\nresume: {mode: 'Off'}");
    instance("t", "p");
    startRun("t", "t-1");
    kubelet.terminated(ns, "t-1", exitCode, exitCode == 0 ? "Completed" : "Error", message);
    awaitPhase("t", terminal);
    suspend("t", true);
    holdsFor(Duration.ofSeconds(2), () -> pod("t-2") == null);
    suspend("t", false);
    holdsFor(Duration.ofSeconds(5), () -> pod("t-2") == null);
    assertThat(phase("t")).isEqualTo(terminal);
  }

  @Test
  void aRestartRequestIsActedOnOncePerIdAndSkipsABackoffWait() {
    policy("p", "backoff: {type: Linear, initialDelay: 120s, maxDelay: 600s}\nmaxRetries: 3\nresume: {mode: 'Off'}");
    instance("an", "p");
    startRun("an", "an-1");
    cluster.annotate(ns, "an", RESTART, "req-1");
    startRun("an", "an-2");
    JsonNode s = status("an");
    assertThat(s.path("attempt").asInt()).isZero();
    assertThat(s.path("lastRestart").path("requestId").asText()).isEqualTo("req-1");
    cluster.editInstanceSpec(ns, "an", spec -> spec.put("task", "T-2"));
    holdsFor(Duration.ofSeconds(4), () -> pod("an-3") == null);
    assertThat(cluster.instance(ns, "an").getMetadata().getAnnotations()).as("never removed (GitOps-safe)")
        .containsEntry(RESTART, "req-1");

    kubelet.terminated(ns, "an-2", 1, "Error", "boom");
    awaitPhase("an", "Backoff");
    cluster.annotate(ns, "an", RESTART, "req-2");
    startRun("an", "an-3");
    assertThat(status("an").path("lastRestart").path("requestId").asText()).isEqualTo("req-2");
  }

  @Test
  void aRestartRequestIsRefusedInATerminalPhaseAndResumeStartsANewLifecycle() {
    policy("p", "backoff: {type: Immediate}\nmaxRetries: 0\nresume: {mode: 'Off'}");
    instance("ae", "p");
    startRun("ae", "ae-1");
    kubelet.terminated(ns, "ae-1", 1, "Error", "boom");
    awaitPhase("ae", "Escalated");
    int before = events("ae").size();
    cluster.annotate(ns, "ae", RESTART, "r-1");
    await().atMost(PATIENCE).until(() -> events("ae").size() > before && events("ae").stream()
        .anyMatch(e -> "Warning".equals(e.getType()) && e.getNote() != null && e.getNote().contains("resume")));
    holdsFor(Duration.ofSeconds(2), () -> pod("ae-2") == null && "Escalated".equals(phase("ae")));

    cluster.annotate(ns, "ae", RESUME, "z-1");
    startRun("ae", "ae-2");
    JsonNode s = status("ae");
    assertThat(s.path("attempt").asInt()).isZero();
    assertThat(condition(s, "Escalated").path("status").asText()).isEqualTo("False");
    assertThat(s.path("circuitBreaker").path("state").asText()).isEqualTo("Closed");
  }

  /** A manual restart is not a failure: no Backoff, Recovering stays False while the next pod is not running. */
  @Test
  void aManualRestartNeverShowsAFailureSequence() {
    policy("p", "backoff: {type: Linear, initialDelay: 1s, maxDelay: 60s}\nmaxRetries: 3");
    instance("x", "p");
    startRun("x", "x-1");
    cluster.annotate(ns, "x", RESTART, "r");
    awaitPod("x-2");
    // Backoff shows only as the restart's own wait (manual_restart, due at once) until the new run's status is
    // written (README: a restart request of a live run), never a failure's
    holdsFor(Duration.ofSeconds(6), () -> {
      JsonNode s = status("x");
      String phase = s.path("phase").asText();
      boolean restartWait = "Backoff".equals(phase)
          && "manual_restart".equals(s.path("lastDecision").path("reasonCode").asText());
      return !"True".equals(condition(s, "Recovering").path("status").asText())
          && (restartWait || "Starting".equals(phase) || "Running".equals(phase)) && s.path("attempt").asInt(0) == 0
          && (s.path("firstFailureAt").isMissingNode() || s.path("firstFailureAt").isNull());
    });
    assertThat(pod("x-2").getStatus() == null || pod("x-2").getStatus().getPhase() == null
        || "Pending".equals(pod("x-2").getStatus().getPhase())).as("the test never started x-2").isTrue();
  }
}

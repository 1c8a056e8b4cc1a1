package dev.respawn.acceptance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ScheduledFuture;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** api.md §5: the heartbeat Lease and the liveness gate (Ready), and the run endings they decide (§3, §4). */
class HeartbeatIT extends OperatorScenario {

  @BeforeEach
  void policies() {
    policy("hb", "backoff: {type: Linear, initialDelay: 1s, maxDelay: 5s}\nmaxRetries: 5\nresume: {mode: 'Off'}\n"
        + "heartbeat: {timeout: 3s, startupGrace: 3s}");
    policy("hbslow", "backoff: {type: Linear, initialDelay: 1s, maxDelay: 5s}\nmaxRetries: 5\nresume: {mode: 'Off'}\n"
        + "heartbeat: {timeout: 6s, startupGrace: 20s}");
  }

  @Test
  void aFreshHealthyHeartbeatIsReadyAndAStaleOneEndsTheRunAsATimeout() {
    instance("st", "hb");
    awaitPod("st-1");
    await().atMost(PATIENCE).until(() -> agent.get(ns, "st") != null);
    ScheduledFuture<?> beating = agent.keepRenewing(ns, "st", "st-1", 500);
    try {
      kubelet.running(ns, "st-1");
      JsonNode s = awaitStatus("st", x -> "True".equals(condition(x, "Ready").path("status").asText()));
      assertThat(s.path("heartbeat").path("verdict").asText()).isEqualTo("Healthy");
    } finally {
      beating.cancel(false);
    }
    JsonNode s = awaitFailureOf("st", "st-1");
    assertThat(s.path("lastFailure").path("class").asText()).isEqualTo("Timeout");
    assertThat(s.path("lastFailure").path("failureReason").asText()).isEqualTo("HealthCheckFailed");
    await().atMost(PATIENCE).until(() -> events("st").stream().anyMatch(e -> "HeartbeatStale".equals(e.getReason())));
    awaitPod("st-2");
  }

  @Test
  void aRunningPodWithoutAnyHeartbeatIsNotReadyStaleHeartbeat() {
    instance("none", "hbslow");
    startRun("none", "none-1");
    awaitStatus("none", x -> "False/StaleHeartbeat".equals(readyReason(x)));
  }

  @Test
  void renewalsByAnotherHolderAreIgnored() {
    instance("wh", "hb");
    awaitPod("wh-1");
    await().atMost(PATIENCE).until(() -> agent.get(ns, "wh") != null);
    ScheduledFuture<?> impostor = agent.keepRenewing(ns, "wh", "wh-0", 500);
    try {
      kubelet.running(ns, "wh-1");
      JsonNode s = awaitFailureOf("wh", "wh-1");
      assertThat(s.path("lastFailure").path("class").asText()).isEqualTo("Timeout");
      assertThat(s.path("lastFailure").path("failureReason").asText()).isEqualTo("HealthCheckFailed");
    } finally {
      impostor.cancel(false);
    }
  }

  @Test
  void aStalledVerdictEndsTheRunAsATimeout() {
    verdictEndsTheRun("stl", "Stalled", "Timeout", "HealthCheckFailed");
  }

  @Test
  void aCrashedVerdictEndsTheRunAsAProcessCrash() {
    verdictEndsTheRun("crs", "Crashed", "ProcessCrash", "ProcessCrash");
  }

  void verdictEndsTheRun(String name, String verdict, String cls, String failureReason) {
    instance(name, "hbslow");
    startRun(name, name + "-1");
    heartbeat(name, name + "-1");
    awaitStatus(name, x -> "True".equals(condition(x, "Ready").path("status").asText()));
    agent.renew(ns, name, name + "-1", Map.of(AgentLease.HEALTH, verdict, AgentLease.DETAIL, "agent says " + verdict));
    JsonNode s = awaitFailureOf(name, name + "-1");
    assertThat(s.path("lastFailure").path("class").asText()).isEqualTo(cls);
    assertThat(s.path("lastFailure").path("failureReason").asText()).isEqualTo(failureReason);
    assertThat(s.path("heartbeat").path("verdict").asText()).isEqualTo(verdict);
    assertThat(s.path("heartbeat").path("detail").asText()).contains("agent says");
    awaitPod(name + "-2");
  }

  @Test
  void anAmbiguousVerdictIsNotReadyButTheRunContinues() {
    instance("amb", "hbslow");
    startRun("amb", "amb-1");
    heartbeat("amb", "amb-1");
    ScheduledFuture<?> beating = agent.keepRenewing(ns, "amb", "amb-1", 500);
    try {
      agent.renew(ns, "amb", "amb-1", Map.of(AgentLease.HEALTH, "Ambiguous"));
      awaitStatus("amb", x -> "False/AmbiguousState".equals(readyReason(x)));
      holdsFor(Duration.ofSeconds(4), () -> "Running".equals(phase("amb")) && pod("amb-2") == null);
      agent.renew(ns, "amb", "amb-1", Map.of(AgentLease.HEALTH, "Healthy"));
      awaitStatus("amb", x -> "True".equals(condition(x, "Ready").path("status").asText()));
    } finally {
      beating.cancel(false);
    }
  }

  /** A stale run cannot vouch for the new one: the previous pod's Stalled verdict does not end the current run. */
  @Test
  void theLastRunsStalledVerdictDoesNotEndTheCurrentRun() {
    instance("old", "hbslow");
    startRun("old", "old-1");
    heartbeat("old", "old-1");
    kubelet.terminated(ns, "old-1", 1, "Error", "x");
    awaitPod("old-2");
    ScheduledFuture<?> beating = agent.keepRenewing(ns, "old", "old-2", 700, Map.of(AgentLease.HEALTH, "Healthy"));
    try {
      startRun("old", "old-2");
      awaitStatus("old", x -> "True".equals(condition(x, "Ready").path("status").asText()));
      agent.renew(ns, "old", "old-1", Map.of(AgentLease.HEALTH, "Stalled", AgentLease.DETAIL, "old run"));
      holdsFor(Duration.ofSeconds(5), () -> "old-1".equals(status("old").path("lastFailure").path("pod").asText())
          && pod("old-3") == null);
    } finally {
      beating.cancel(false);
    }
  }
}

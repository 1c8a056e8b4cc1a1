package dev.respawn.acceptance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** api.md §7: resume from the last checkpoint, its reason codes, Prefer and Require; §10: status in a cool-down. */
class ResumeIT extends OperatorScenario {

  static String policySpec(String mode, String toolFailureCooldown) {
    return "backoff: {type: Linear, initialDelay: 2s, maxDelay: 5s}\nmaxRetries: 5\n"
        + "heartbeat: {timeout: 60s, startupGrace: 60s}\nresume:\n  mode: " + mode + "\n  maxAttempts: 3\n"
        + "  cooldowns: {ToolFailure: " + toolFailureCooldown + ", Timeout: 1s, ContextReset: 1s, ProcessCrash: 1s}";
  }

  static Map<String, String> env(Pod p) {
    return p.getSpec().getContainers().get(0).getEnv().stream()
        .collect(Collectors.toMap(EnvVar::getName, e -> e.getValue() == null ? "" : e.getValue(), (a, b) -> b));
  }

  /**
   * Run 1 of a new instance renews its Lease with these annotations (and a detail, so status shows when the
   * operator has seen the renewal), then its agent exits 1. Returns the status once the failure is decided.
   */
  JsonNode failWithLease(String name, String policySpec, Map<String, String> annotations) {
    policy("p", policySpec);
    instance(name, "p");
    startRun(name, name + "-1");
    heartbeat(name, name + "-1");
    Map<String, String> a = new HashMap<>(annotations);
    a.put(AgentLease.DETAIL, "step 17 of 20");
    agent.renew(ns, name, name + "-1", a);
    awaitStatus(name, s -> "step 17 of 20".equals(s.path("heartbeat").path("detail").asText()));
    kubelet.terminated(ns, name + "-1", 1, "Error", "tool broke");
    return awaitFailureOf(name, name + "-1");
  }

  @Test
  void preferResumesAnEligibleRunFromItsCheckpoint() {
    JsonNode s = failWithLease("k", policySpec("Prefer", "1s"), AgentLease.checkpoint("ckpt-17", "in_progress", true));
    assertThat(s.path("resume").path("eligible").asBoolean()).isTrue();
    assertThat(s.path("resume").path("checkpoint").asText()).isEqualTo("ckpt-17");
    Map<String, String> env = env(awaitPod("k-2"));
    assertThat(env).containsEntry("RESPAWN_RESUME_CHECKPOINT", "ckpt-17")
        .containsEntry("RESPAWN_INTERRUPTION_CLASS", "ToolFailure");
    assertThat(s.path("lastDecision").path("reasonCode").asText()).isEqualTo("restart_scheduled");
    assertThat(s.path("resume").path("reasonCode").asText()).isEqualTo("resume_allowed");
  }

  @ParameterizedTest(name = "{3}")
  @CsvSource({
      "complete, true, true, resume_missing_checkpoint",
      "in_progress, false, true, resume_non_idempotent_step",
      "failed, true, false, resume_missing_runtime_artifacts"})
  void preferRestartsFreshWhenTheRunIsNotEligibleAndRecordsWhy(String checkpointStatus, boolean idempotent,
      boolean artifactsReady, String code) {
    Map<String, String> a = new HashMap<>(AgentLease.checkpoint("ckpt-17", checkpointStatus, idempotent));
    a.put(AgentLease.ARTIFACTS_READY, String.valueOf(artifactsReady));
    JsonNode s = failWithLease("n", policySpec("Prefer", "1s"), a);
    assertThat(s.path("resume").path("eligible").asBoolean(true)).isFalse();
    assertThat(s.path("resume").path("reasonCode").asText()).isEqualTo(code);
    assertThat(env(awaitPod("n-2"))).doesNotContainKey("RESPAWN_RESUME_CHECKPOINT");
  }

  @Test
  void requireEscalatesWhenTheRunIsNotEligible() {
    failWithLease("q", policySpec("Require", "1s"), Map.of());
    JsonNode s = awaitPhase("q", "Escalated");
    assertThat(s.path("lastDecision").path("reasonCode").asText()).isEqualTo("resume_missing_checkpoint");
    await().atMost(PATIENCE).until(() -> events("q").stream().anyMatch(e -> "Escalated".equals(e.getReason())));
    String note = events("q").stream().filter(e -> "Escalated".equals(e.getReason())).findFirst().orElseThrow()
        .getNote();
    assertThat(note).contains("q-1", "kubectl logs", "respawn.dev/resume");
    assertThat(pod("q-2")).isNull();
  }

  @Test
  void aLongerResumeCooldownIsShownAsResumeBlockedCooldownAlsoByThePlugin() throws Exception {
    JsonNode s = failWithLease("c", policySpec("Prefer", "20s"), AgentLease.checkpoint("ckpt-17", "in_progress", true));
    assertThat(s.path("phase").asText()).isEqualTo("Backoff");
    assertThat(s.path("lastDecision").path("reasonCode").asText()).isEqualTo("resume_blocked_cooldown");
    assertThat(s.path("resume").path("cooldownRemainingSeconds").asDouble()).isGreaterThan(0);

    PluginCli.Result r = plugin.run("status", "c", "-n", ns, "-o", "json");
    assertThat(r.exitCode()).as(r.err()).isZero();
    JsonNode j = MockCluster.JSON.readTree(r.out());
    for (String field : List.of("agent_id", "task_id", "retry_count", "max_retries", "can_retry", "last_failure",
        "reason", "restarting_in_seconds", "message")) {
      assertThat(j.has(field)).as(field + " in " + r.out()).isTrue();
    }
    assertThat(j.path("agent_id").asText()).isEqualTo("c");
    assertThat(j.path("reason").asText()).isEqualTo("resume_blocked_cooldown");
    assertThat(j.path("restarting_in_seconds").asDouble()).isBetween(0.5, 20.5);
    assertThat(j.path("retry_count").asInt()).isEqualTo(1);
    assertThat(j.path("max_retries").asInt()).isEqualTo(5);
    assertThat(j.path("can_retry").asBoolean()).isTrue();
  }
}

package dev.respawn.acceptance;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.stream.Collectors;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;

/** api.md §2 (the pods an instance gets) and §3 (what ends a run and what happens next). */
class RunLifecycleIT extends OperatorScenario {

  static Map<String, String> env(Pod p) {
    return p.getSpec().getContainers().get(0).getEnv().stream()
        .collect(Collectors.toMap(EnvVar::getName, e -> e.getValue() == null ? "" : e.getValue(), (a, b) -> b));
  }

  /**
   * {@code kubectl replace --force} or a GitOps replace: the instance is deleted and made anew under its name at
   * once, here right as its run fails (the operator is mid-decision). The new instance is managed within seconds:
   * a status of its own, not that of the deleted one. Racy by nature: ten tries, where the operator once left a
   * re-made instance unmanaged in about one try of three (or its status 30 s late).
   */
  @Test
  void anInstanceDeletedAndMadeAnewMidDecisionIsManagedAtOnce() {
    String base = ns;
    for (int i = 0; i < 10; i++) {
      ns = base + "-" + i;
      policy("p", "backoff: {type: Exponential, initialDelay: 1s, maxDelay: 5s}\nmaxRetries: 3\nresume: {mode: 'Off'}");
      instance("a", "p");
      startRun("a", "a-1");
      String oldUid = cluster.instance(ns, "a").getMetadata().getUid();
      kubelet.terminated(ns, "a-1", 1, "Error", "boom");
      cluster.client.genericKubernetesResources(MockCluster.INSTANCES).inNamespace(ns).withName("a").delete();
      instance("a", "p");
      JsonNode fresh = awaitStatus("a", s -> !s.path("phase").asText("").isEmpty(), java.time.Duration.ofSeconds(10));
      assertThat(cluster.instance(ns, "a").getMetadata().getUid()).as("try %d", i).isNotEqualTo(oldUid);
      assertThat(fresh.path("attempt").asInt()).as("try %d: %s", i, fresh).isZero();
      assertThat(fresh.path("history").size()).as("try %d: %s", i, fresh).isZero();
    }
  }

  @Test
  void podIsNamedLabelledOwnedNeverRestartedAndGivenTheRunEnv() {
    policy("p", "backoff: {type: Linear, initialDelay: 1s, maxDelay: 5s}\nresume: {mode: 'Off'}");
    instanceWithPodSpec("coder", "p", "task: TASK-31-1\nheartbeat: {leaseName: coder-hb}",
        "restartPolicy: Always\ncontainers:\n- {name: agent, image: example/agent:1}");
    Pod first = awaitPod("coder-1");
    String uid = cluster.instance(ns, "coder").getMetadata().getUid();
    SoftAssertions soft = new SoftAssertions();
    soft.assertThat(first.getSpec().getRestartPolicy()).isEqualTo("Never");
    soft.assertThat(first.getMetadata().getLabels()).containsEntry("respawn.dev/instance", "coder")
        .containsEntry("respawn.dev/run", "1");
    soft.assertThat(first.getMetadata().getOwnerReferences()).filteredOn(OwnerReference::getController)
        .singleElement().satisfies(r -> {
          assertThat(r.getUid()).isEqualTo(uid);
          assertThat(r.getKind()).isEqualTo("AgentInstance");
        });
    soft.assertThat(env(first)).containsEntry("RESPAWN_INSTANCE", "coder").containsEntry("RESPAWN_RUN", "1")
        .containsEntry("RESPAWN_ATTEMPT", "0").containsEntry("RESPAWN_LEASE_NAME", "coder-hb")
        .containsEntry("RESPAWN_TASK", "TASK-31-1").doesNotContainKey("RESPAWN_RESUME_CHECKPOINT");
    soft.assertAll();

    startRun("coder", "coder-1");
    kubelet.terminated(ns, "coder-1", 1, "Error", "boom");
    Pod second = awaitPod("coder-2");
    assertThat(second.getMetadata().getLabels()).containsEntry("respawn.dev/run", "2");
    assertThat(env(second)).containsEntry("RESPAWN_RUN", "2").containsEntry("RESPAWN_ATTEMPT", "1");
  }

  @Test
  void failureWaitsInBackoffThenStartsTheNextPod() {
    policy("p", "backoff: {type: Linear, initialDelay: 3s, maxDelay: 10s}\nmaxRetries: 3\nresume: {mode: 'Off'}");
    instance("w", "p");
    startRun("w", "w-1");
    kubelet.terminated(ns, "w-1", 1, "Error", "tool blew up");
    JsonNode s = awaitPhase("w", "Backoff");
    SoftAssertions soft = new SoftAssertions();
    soft.assertThat(s.path("attempt").asInt()).isEqualTo(1);
    soft.assertThat(s.path("lastFailure").path("pod").asText()).isEqualTo("w-1");
    soft.assertThat(s.path("lastFailure").path("class").asText()).isEqualTo("ToolFailure");
    soft.assertThat(s.path("lastFailure").path("failureReason").asText()).isEqualTo("UnhandledException");
    soft.assertThat(s.path("lastFailure").path("exitCode").asInt()).isEqualTo(1);
    soft.assertThat(s.path("lastFailure").path("message").asText()).isEqualTo("tool blew up");
    soft.assertThat(s.path("lastDecision").path("reasonCode").asText()).isEqualTo("restart_scheduled");
    soft.assertThat(s.path("nextRestartAt").asText()).isNotBlank();
    soft.assertThat(condition(s, "Recovering").path("status").asText()).isEqualTo("True");
    soft.assertThat(condition(s, "Ready").path("status").asText()).isEqualTo("False");
    soft.assertThat(pod("w-1")).as("the finished pod is kept for kubectl logs").isNotNull();
    soft.assertAll();
    Instant next = Instant.parse(s.path("nextRestartAt").asText());

    // when the API server made it (whole seconds), not when this test saw it
    Instant made = Instant.parse(awaitPod("w-2").getMetadata().getCreationTimestamp());
    assertThat(made).as("not before nextRestartAt").isAfterOrEqualTo(next.truncatedTo(ChronoUnit.SECONDS));
    startRun("w", "w-2");
    JsonNode running = status("w");
    assertThat(running.path("run").asInt()).isEqualTo(2);
    assertThat(running.path("restarts").asInt()).isEqualTo(1);
    assertThat(running.path("lastRestart").path("previousPod").asText()).isEqualTo("w-1");
  }

  @Test
  void retriesExhaustedEscalatesWithTheLastFailureAndAChecklist() {
    policy("p", "backoff: {type: Immediate}\nmaxRetries: 1\nresume: {mode: 'Off'}");
    instance("e", "p");
    startRun("e", "e-1");
    kubelet.terminated(ns, "e-1", 1, "Error", "first boom");
    startRun("e", "e-2");
    kubelet.terminated(ns, "e-2", 3, "Error", "second boom");
    JsonNode s = awaitPhase("e", "Escalated");
    assertThat(s.path("terminalReason").asText()).isEqualTo("RestartLimitExceeded");
    assertThat(s.path("lastDecision").path("reasonCode").asText()).isEqualTo("retries_exhausted");
    JsonNode escalated = condition(s, "Escalated");
    assertThat(escalated.path("status").asText()).isEqualTo("True");
    assertThat(escalated.path("message").asText()).contains("e-2", "ToolFailure", "3", "second boom",
        "kubectl logs e-2", "respawn.dev/resume", "kubectl respawn resume");
    assertThat(condition(s, "Ready").path("status").asText()).isEqualTo("False");
    holdsFor(java.time.Duration.ofSeconds(3), () -> pod("e-3") == null);
  }

  @Test
  void exitZeroSucceedsWithCleanExitAndNoNewPod() {
    policy("p", "backoff: {type: Immediate}\nresume: {mode: 'Off'}");
    instance("ok", "p");
    startRun("ok", "ok-1");
    kubelet.terminated(ns, "ok-1", 0, "Completed", null);
    JsonNode s = awaitPhase("ok", "Succeeded");
    assertThat(s.path("terminalReason").asText()).isEqualTo("CleanExit");
    holdsFor(java.time.Duration.ofSeconds(3), () -> pod("ok-2") == null && "Succeeded".equals(phase("ok")));
  }

  @Test
  void restartRequestExitCodeRestartsAtOnceWithoutCountingAFailure() {
    policy("p", "backoff: {type: Linear, initialDelay: 30s, maxDelay: 60s}\nresume: {mode: 'Off'}");
    instance("r", "p");
    startRun("r", "r-1");
    kubelet.terminated(ns, "r-1", 42, "Error", "Load new GitConfig implementation");
    startRun("r", "r-2");
    JsonNode s = status("r");
    assertThat(s.path("attempt").asInt()).isZero();
    assertThat(s.path("restarts").asInt()).isEqualTo(1);
    assertThat(s.path("lastRestart").path("reason").asText()).isEqualTo("Load new GitConfig implementation");
    assertThat(s.path("circuitBreaker").path("failureCount").asInt()).isZero();
  }

  @Test
  void aRunHealthyForResetAfterEndsTheFailureSequence() {
    policy("p", "backoff: {type: Immediate}\nresetAfter: 2s\nresume: {mode: 'Off'}");
    instance("s", "p");
    startRun("s", "s-1");
    kubelet.terminated(ns, "s-1", 1, "Error", "x");
    startRun("s", "s-2");
    JsonNode s = awaitStatus("s", x -> x.path("attempt").asInt(-1) == 0
        && "False".equals(condition(x, "Recovering").path("status").asText()));
    assertThat(s.path("circuitBreaker").path("state").asText()).isEqualTo("Closed");
    org.awaitility.Awaitility.await().atMost(PATIENCE)
        .until(() -> events("s").stream().anyMatch(e -> "RestartSucceeded".equals(e.getReason())));
  }
}

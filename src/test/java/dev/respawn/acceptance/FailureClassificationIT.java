package dev.respawn.acceptance;

import static dev.respawn.acceptance.Kubelet.container;
import static dev.respawn.acceptance.Kubelet.podStatus;
import static dev.respawn.acceptance.Kubelet.terminatedState;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** api.md §4: how an ending is classified (interruption class, failureReason) and what follows by default. */
class FailureClassificationIT extends OperatorScenario {

  @BeforeEach
  void retryingPolicy() {
    policy("p", "backoff: {type: Immediate}\nmaxRetries: 5\nresume: {mode: 'Off'}\n"
        + "circuitBreaker: {failureThreshold: 100}");
  }

  void running(String instance) {
    instance(instance, "p");
    startRun(instance, instance + "-1");
  }

  static void expectFailure(JsonNode s, String pod, String cls, String failureReason, boolean retryable) {
    JsonNode f = s.path("lastFailure");
    SoftAssertions soft = new SoftAssertions();
    soft.assertThat(f.path("pod").asText()).isEqualTo(pod);
    soft.assertThat(f.path("class").asText()).as("class").isEqualTo(cls);
    if (failureReason != null) {
      soft.assertThat(f.path("failureReason").asText()).as("failureReason").isEqualTo(failureReason);
    }
    soft.assertThat(f.path("retryable").asBoolean()).as("retryable").isEqualTo(retryable);
    soft.assertAll();
  }

  @Test
  void exitByASignalIsAProcessCrashAndIsRetried() {
    running("sig");
    kubelet.terminated(ns, "sig-1", 137, "Error", null);
    expectFailure(awaitFailureOf("sig", "sig-1"), "sig-1", "ProcessCrash", "ProcessCrash", true);
    awaitPod("sig-2");
  }

  @Test
  void oomKilledIsRetriedAtMostTwiceWhateverMaxRetries() {
    running("oom");
    for (int run = 1; run <= 3; run++) {
      String pod = "oom-" + run;
      if (run > 1) {
        startRun("oom", pod);
      }
      kubelet.terminated(ns, pod, 137, "OOMKilled", null);
      expectFailure(awaitFailureOf("oom", pod), pod, "ProcessCrash", "ResourceExhaustion", true);
    }
    JsonNode s = awaitPhase("oom", "Escalated");
    assertThat(s.path("terminalReason").asText()).isEqualTo("RestartLimitExceeded");
    assertThat(s.path("lastDecision").path("reasonCode").asText()).isEqualTo("retries_exhausted");
    assertThat(readyReason(s)).isEqualTo("False/RestartLimitExceeded");
    assertThat(pod("oom-4")).isNull();
  }

  @Test
  void anyOtherExitIsAToolFailureRefinedByTheTerminationMessage() {
    running("net");
    kubelet.terminated(ns, "net-1", 1, "Error", "network_timeout: upstream did not answer");
    expectFailure(awaitFailureOf("net", "net-1"), "net-1", "ToolFailure", "DependencyFailure", true);
    awaitPod("net-2");
  }

  @Test
  void aNonRetryableMessageFailsTheInstance() {
    running("syn");
    kubelet.terminated(ns, "syn-1", 1, "Error", "syntax_error: unexpected token at line 3");
    JsonNode s = awaitPhase("syn", "Failed");
    expectFailure(s, "syn-1", "ToolFailure", null, false);
    assertThat(s.path("terminalReason").asText()).isEqualTo("UnrecoverableError");
    assertThat(s.path("lastDecision").path("reasonCode").asText()).isEqualTo("non_retryable_failure");
    assertThat(condition(s, "Ready").path("status").asText()).isEqualTo("False");
    holdsFor(Duration.ofSeconds(3), () -> pod("syn-2") == null);
  }

  @Test
  void aUserRuleComesBeforeTheBuiltInTable() {
    policy("rules", "backoff: {type: Immediate}\nmaxRetries: 5\nresume: {mode: 'Off'}\nfailureRules:\n"
        + "- name: permanent-config\n  match: {exitCodes: [78]}\n  action: Fail");
    instance("cfg", "rules");
    startRun("cfg", "cfg-1");
    kubelet.terminated(ns, "cfg-1", 78, "Error", "temporary_error: would be retryable by the table");
    JsonNode s = awaitPhase("cfg", "Failed");
    assertThat(s.path("lastFailure").path("rule").asText()).isEqualTo("permanent-config");
    assertThat(s.path("lastDecision").path("reasonCode").asText()).isEqualTo("non_retryable_failure");
  }

  @Test
  void aPodDeletedBySomeoneElseIsAContextReset() {
    running("del");
    cluster.client.pods().inNamespace(ns).withName("del-1").delete();
    expectFailure(awaitFailureOf("del", "del-1"), "del-1", "ContextReset", null, true);
    awaitPod("del-2");
  }

  @Test
  void anEvictedPodIsAContextReset() {
    running("ev");
    Map<String, Object> st = podStatus("Failed", List.of(container("agent", terminatedState(137,
        "ContainerStatusUnknown", "The container could not be located when the pod was terminated"), false)), false);
    st.put("reason", "Evicted");
    st.put("message", "The node was low on resource: ephemeral-storage.");
    kubelet.setStatus(ns, "ev-1", st);
    expectFailure(awaitFailureOf("ev", "ev-1"), "ev-1", "ContextReset", null, true);
    awaitPod("ev-2");
  }

  /** Kubelet admission refused the pod: phase Failed, reason OutOfcpu, no container state at all. */
  @Test
  void aPodTheNodeRefusedIsAContextResetThatIsRestarted() {
    instance("adm", "p");
    awaitPod("adm-1");
    Map<String, Object> st = new HashMap<>();
    st.put("phase", "Failed");
    st.put("reason", "OutOfcpu");
    st.put("message", "Pod was rejected: Node didn't have enough resource: cpu, requested: 4000, capacity: 2000");
    kubelet.setStatus(ns, "adm-1", st);
    JsonNode s = awaitFailureOf("adm", "adm-1");
    expectFailure(s, "adm-1", "ContextReset", null, true);
    assertThat(s.path("phase").asText()).isNotEqualTo("Escalated");
    awaitPod("adm-2");
    assertThat(phase("adm")).isNotEqualTo("Escalated");
  }

  /** Fail-closed: an ending with no usable termination state escalates, and says why in status.resume. */
  @Test
  void noUsableTerminationStateEscalatesAsUnknown() {
    policy("prefer", "backoff: {type: Immediate}\nmaxRetries: 5\nresume: {mode: Prefer}");
    instance("unk", "prefer");
    startRun("unk", "unk-1");
    heartbeat("unk", "unk-1");
    agent.renew(ns, "unk", "unk-1", AgentLease.checkpoint("ckpt-17", "in_progress", true));
    kubelet.setStatus(ns, "unk-1", podStatus("Failed", List.of(container("agent", Map.of(), false)), false));
    JsonNode s = awaitPhase("unk", "Escalated");
    expectFailure(s, "unk-1", "Unknown", "Unknown", false);
    assertThat(s.path("lastDecision").path("reasonCode").asText()).isEqualTo("resume_unknown_interruption_class");
    assertThat(s.path("resume").path("reasonCode").asText()).isEqualTo("resume_unknown_interruption_class");
    assertThat(s.path("resume").path("eligible").asBoolean(true)).isFalse();
    assertThat(condition(s, "Escalated").path("status").asText()).isEqualTo("True");
  }
}

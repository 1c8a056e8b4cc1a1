package dev.respawn.acceptance;

import static dev.respawn.acceptance.PodMutations.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The pod the operator POSTs is not the pod that is stored. A hook in front of
 * the mock API server's CRUD store rewrites every pod create of the operator the way an Istio/Linkerd injector, a
 * LimitRange, Kyverno/Gatekeeper/PSS mutations, an image-digest policy and the API server's own defaulting would, so
 * the operator only ever sees (in the 201 answer, in watches and lists) the mutated pod, as on a real cluster.
 */
class MutatingAdmissionIT extends AdmissionScenario {
  // ------------------------------------------------------------------ tests

  /** Control: the same at-rest check with no admission at all. */
  @Test
  void controlAnUnmutatedPodRestsWithoutWrites() {
    policy("p", POLICY);
    instance("a", "p");
    runningWithSidecars("a", "a-1");
    restsWithoutWrites("a", "a-1", Duration.ofSeconds(8));
  }

  /** Defaulting + Istio classic sidecar (appended): no restart loop, no writes at rest, one pod. */
  @Test
  void aDefaultedAndInjectedPodRunsAtRestWithoutWritesOrASecondPod() {
    admission.put(ns, istioSidecar(false));
    policy("p", POLICY);
    instance("a", "p");
    Pod stored = awaitPod("a-1");
    assertThat(stored.getSpec().getContainers()).extracting(Container::getName).containsExactly("agent",
        "istio-proxy");
    assertThat(stored.getSpec().getContainers().get(0).getImage()).contains("@sha256:");
    runningWithSidecars("a", "a-1");
    restsWithoutWrites("a", "a-1", Duration.ofSeconds(10));
    assertThat(cluster.podCreatesIn(ns)).isEqualTo(1);
    assertThat(podWrites).as("pod updates/patches/deletes by the operator").noneMatch(w -> w.contains("/" + ns + "/"));
  }

  /** §12: a restarted operator writes nothing for a mutated running pod (native sidecar, defaults). */
  @Test
  void aRestartedOperatorWritesNothingForAMutatedRunningPod() throws Exception {
    admission.put(ns, PodMutations::istioNative);
    policy("p", POLICY);
    instance("a", "p");
    runningWithSidecars("a", "a-1");
    restsWithoutWrites("a", "a-1", Duration.ofSeconds(3));
    operator.kill();
    Instant restarted = Instant.now();
    operator.start();
    await().atMost(PATIENCE).until(() -> cluster.operatorRequestedSince(restarted));
    holdsFor(Duration.ofSeconds(10), () -> writesInThisNamespaceSince(restarted).isEmpty());
    assertThat(cluster.podCreatesIn(ns)).isEqualTo(1);
    assertThat(phase("a")).isEqualTo("Running");
  }

  /** Proxy injected first, no spec.agentContainer: the template's first container decides, not the pod's. */
  @Test
  void aProxyInjectedFirstIsNotTakenForTheAgentOnFailure() {
    admission.put(ns, istioSidecar(true));
    policy("p", POLICY);
    instance("a", "p");
    Pod stored = awaitPod("a-1");
    assertThat(stored.getSpec().getContainers().get(0).getName()).isEqualTo("istio-proxy");
    runningWithSidecars("a", "a-1");
    status("a-1", "Running", states("agent", Kubelet.terminatedState(3, "Error", "tool broke")));
    JsonNode s = awaitFailureOf("a", "a-1");
    assertThat(s.path("lastFailure").path("exitCode").asInt()).as("%s", s).isEqualTo(3);
    assertThat(s.path("lastFailure").path("class").asText()).isEqualTo("ToolFailure");
    awaitPod("a-2");
  }

  @Test
  void aProxyInjectedFirstIsNotTakenForTheAgentOnCleanExit() {
    admission.put(ns, istioSidecar(true));
    policy("p", POLICY);
    instance("a", "p");
    runningWithSidecars("a", "a-1");
    status("a-1", "Running", states("agent", Kubelet.terminatedState(0, "Completed", null)));
    JsonNode s = awaitPhase("a", "Succeeded");
    assertThat(s.path("terminalReason").asText()).isEqualTo("CleanExit");
    holdsFor(Duration.ofSeconds(3), () -> pod("a-2") == null);
  }

  /** The classic sidecar dies (restartPolicy Never: it stays dead) while the agent runs: the agent's exit decides. */
  @Test
  void aCrashedClassicSidecarDoesNotEndTheRunTheAgentsExitDecides() {
    admission.put(ns, istioSidecar(false));
    policy("p", POLICY);
    instance("a", "p");
    runningWithSidecars("a", "a-1");
    status("a-1", "Running", states("istio-proxy", Kubelet.terminatedState(137, "OOMKilled", null)));
    holdsFor(Duration.ofSeconds(5), () -> "Running".equals(phase("a")) && status("a").path("lastFailure")
        .path("pod").asText("").isEmpty() && pod("a-2") == null);
    status("a-1", "Running", states("istio-proxy", Kubelet.terminatedState(137, "OOMKilled", null), "agent",
        Kubelet.terminatedState(1, "Error", "network_timeout: upstream connect error")));
    JsonNode s = awaitFailureOf("a", "a-1");
    assertThat(s.path("lastFailure").path("exitCode").asInt()).as("%s", s).isEqualTo(1);
    assertThat(s.path("lastFailure").path("failureReason").asText()).isEqualTo("DependencyFailure");
  }

  /** A native sidecar restarting (CrashLoop) does not end the run; the agent's clean exit while it runs does. */
  @Test
  void aNativeSidecarRestartingDoesNotEndTheRunAndTheAgentsExitDoes() {
    admission.put(ns, PodMutations::istioNative);
    policy("p", POLICY);
    instance("a", "p");
    Pod stored = awaitPod("a-1");
    assertThat(stored.getSpec().getContainers()).extracting(Container::getName).containsExactly("agent");
    runningWithSidecars("a", "a-1");
    status("a-1", "Running", states("istio-proxy", Kubelet.terminatedState(137, "Error", null)));
    holdsFor(Duration.ofSeconds(4), () -> "Running".equals(phase("a")) && pod("a-2") == null);
    status("a-1", "Running", states("istio-proxy", Kubelet.waitingState("CrashLoopBackOff", "back-off 10s")));
    holdsFor(Duration.ofSeconds(4), () -> "Running".equals(phase("a")) && pod("a-2") == null);
    status("a-1", "Running", states("agent", Kubelet.terminatedState(0, "Completed", null)));
    assertThat(awaitPhase("a", "Succeeded").path("terminalReason").asText()).isEqualTo("CleanExit");
  }

  /** README §Reference: a failed init container ends the run with its exit; the injected istio-init too. */
  @Test
  void aFailedInjectedInitContainerEndsTheRunWithItsExit() {
    admission.put(ns, istioSidecar(false));
    policy("p", POLICY);
    instance("a", "p");
    awaitPod("a-1");
    status("a-1", "Failed", states("istio-init", Kubelet.terminatedState(1, "Error", "iptables-restore: line 3 failed"),
        "agent", Kubelet.waitingState("PodInitializing", ""), "istio-proxy",
        Kubelet.waitingState("PodInitializing", "")));
    JsonNode s = awaitFailureOf("a", "a-1");
    assertThat(s.path("lastFailure").path("exitCode").asInt()).as("%s", s).isEqualTo(1);
    assertThat(s.path("lastFailure").path("class").asText()).isEqualTo("ToolFailure");
    awaitPod("a-2");
  }

  /**
   * A user's template edit is still seen through the mutation (observedGeneration, the next run's pod uses it),
   * and the mutation itself never rolls the run.
   */
  @Test
  void aTemplateEditIsStillAppliedToTheNextRunOfAMutatedPod() {
    admission.put(ns, istioSidecar(false));
    policy("p", POLICY);
    instance("a", "p");
    runningWithSidecars("a", "a-1");
    restsWithoutWrites("a", "a-1", Duration.ofSeconds(3));
    cluster.editInstanceSpec(ns, "a", spec -> {
      @SuppressWarnings("unchecked")
      Map<String, Object> template = (Map<String, Object>) spec.get("template");
      @SuppressWarnings("unchecked")
      Map<String, Object> podSpec = (Map<String, Object>) template.get("spec");
      @SuppressWarnings("unchecked")
      List<Map<String, Object>> cs = (List<Map<String, Object>>) podSpec.get("containers");
      cs.get(0).put("image", "example/agent:2");
    });
    awaitStatus("a", s -> s.path("observedGeneration").asInt() == 2);
    holdsFor(Duration.ofSeconds(4), () -> pod("a-2") == null && "Running".equals(phase("a")));
    status("a-1", "Running", states("agent", Kubelet.terminatedState(1, "Error", "boom")));
    awaitPod("a-2");
    JsonNode second = sent.get(ns).get(sent.get(ns).size() - 1);
    assertThat(second.path("spec").path("containers").get(0).path("image").asText()).isEqualTo("example/agent:2");
    assertThat(second.path("spec").path("containers")).as("no injected container sent back").hasSize(1);
    assertThat(pod("a-2").getSpec().getContainers().get(0).getImage())
        .isEqualTo("example/agent@sha256:" + sha256("example/agent:2"));
  }

  @Test
  void aMetadataOnlyMutationChangesNothing() {
    admission.put(ns, PodMutations::metadataOnly);
    policy("p", POLICY);
    instance("a", "p");
    runningWithSidecars("a", "a-1");
    restsWithoutWrites("a", "a-1", Duration.ofSeconds(6));
    kubelet.terminated(ns, "a-1", 1, "Error", "boom");
    awaitFailureOf("a", "a-1");
    assertThat(awaitPod("a-2").getMetadata().getLabels()).containsEntry("team", "platform")
        .containsEntry("respawn.dev/run", "2");
  }
}

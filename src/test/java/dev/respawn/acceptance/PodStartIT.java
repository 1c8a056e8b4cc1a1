package dev.respawn.acceptance;

import static dev.respawn.acceptance.Kubelet.container;
import static dev.respawn.acceptance.Kubelet.podStatus;
import static dev.respawn.acceptance.Kubelet.runningState;
import static dev.respawn.acceptance.Kubelet.terminatedState;
import static dev.respawn.acceptance.Kubelet.waitingState;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * api.md §2-§3.5: which container decides, and a pod that cannot start shows why on Ready=False; it becomes a
 * failure only when heartbeat.startupGrace runs out.
 */
class PodStartIT extends OperatorScenario {
  static final String SIDECAR_AND_AGENT =
      "containers:\n- {name: sidecar, image: example/proxy:1}\n- {name: agent, image: example/agent:1}";

  @BeforeEach
  void policies() {
    policy("nohb", "backoff: {type: Linear, initialDelay: 1s, maxDelay: 5s}\nmaxRetries: 5\nresume: {mode: 'Off'}");
    policy("hb", "backoff: {type: Linear, initialDelay: 1s, maxDelay: 5s}\nmaxRetries: 5\nresume: {mode: 'Off'}\n"
        + "heartbeat: {timeout: 3s, startupGrace: 3s}");
  }

  @Test
  void aSidecarExitIsNoDecisionTheAgentContainerDecides() {
    instanceWithPodSpec("side", "nohb", "agentContainer: agent", SIDECAR_AND_AGENT);
    startRun("side", "side-1");
    kubelet.setStatus(ns, "side-1", podStatus("Running", List.of(
        container("sidecar", terminatedState(1, "Error", "proxy died"), false),
        container("agent", runningState(), true)), false));
    holdsFor(Duration.ofSeconds(3), () -> "Running".equals(phase("side"))
        && status("side").path("lastFailure").path("pod").asText("").isEmpty());
    kubelet.setStatus(ns, "side-1", podStatus("Succeeded", List.of(
        container("sidecar", terminatedState(1, "Error", "proxy died"), false),
        container("agent", terminatedState(0, "Completed", null), false)), false));
    assertThat(awaitPhase("side", "Succeeded").path("terminalReason").asText()).isEqualTo("CleanExit");
  }

  @Test
  void aPodThatCannotStartFailsAsInitializationFailedWhenStartupGraceRunsOut() {
    instance("ccc", "hb");
    awaitPod("ccc-1");
    kubelet.waiting(ns, "ccc-1", "CreateContainerConfigError", "secret \"x\" not found");
    awaitStatus("ccc", s -> "False/CreateContainerConfigError".equals(readyReason(s)));
    JsonNode s = awaitFailureOf("ccc", "ccc-1");
    assertThat(s.path("lastFailure").path("failureReason").asText()).isEqualTo("InitializationFailed");
    assertThat(s.path("lastFailure").path("retryable").asBoolean()).isTrue();
    awaitPod("ccc-2");
  }

  /** A running sidecar does not make the run started while the agent container still waits for its image. */
  @Test
  void anAgentWaitingForItsImageBesideARunningSidecarHasNotStarted() {
    instanceWithPodSpec("sp", "nohb", "agentContainer: agent", SIDECAR_AND_AGENT);
    awaitPod("sp-1");
    kubelet.setStatus(ns, "sp-1", podStatus("Running", List.of(container("sidecar", runningState(), true),
        container("agent", waitingState("ErrImagePull", "pull access denied"), false)), false));
    JsonNode s = awaitStatus("sp", x -> "False/ErrImagePull".equals(readyReason(x)));
    assertThat(s.path("phase").asText()).isNotEqualTo("Running");
    holdsFor(Duration.ofSeconds(3), () -> !"Running".equals(phase("sp"))
        && status("sp").path("lastFailure").path("pod").asText("").isEmpty());
  }

  @Test
  void anAgentWaitingForItsImageBesideASidecarFailsAsInitializationFailedNotAsAStall() {
    instanceWithPodSpec("sph", "hb", "agentContainer: agent", SIDECAR_AND_AGENT);
    awaitPod("sph-1");
    kubelet.setStatus(ns, "sph-1", podStatus("Running", List.of(container("sidecar", runningState(), true),
        container("agent", waitingState("ErrImagePull", "pull access denied"), false)), false));
    JsonNode s = awaitFailureOf("sph", "sph-1");
    assertThat(s.path("lastFailure").path("failureReason").asText()).isEqualTo("InitializationFailed");
    assertThat(s.path("lastFailure").path("reason").asText()).isEqualTo("ErrImagePull");
  }

  @Test
  void anInitContainerThatCannotPullItsImageShowsOnReady() {
    instanceWithPodSpec("init", "nohb", "", "initContainers:\n- {name: init, image: example/nope:1}\n"
        + "containers:\n- {name: agent, image: example/agent:1}");
    awaitPod("init-1");
    Map<String, Object> st = podStatus("Pending",
        List.of(container("agent", waitingState("PodInitializing", ""), false)), false);
    st.put("initContainerStatuses", List.of(container("init",
        waitingState("ImagePullBackOff", "Back-off pulling image example/nope:1"), false)));
    kubelet.setStatus(ns, "init-1", st);
    JsonNode s = awaitStatus("init", x -> "False/ImagePullBackOff".equals(readyReason(x)));
    assertThat(s.path("phase").asText()).isNotEqualTo("Running");
  }
}

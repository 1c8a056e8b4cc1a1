package dev.respawn.acceptance;

import static dev.respawn.acceptance.PodMutations.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.Pod;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Mutating admission that rewrites what Respawn itself puts on a pod (its labels, its annotations, a finalizer), and a
 * person who relabels a live pod: the run stays managed, numbered and decided as the operator made it.
 */
class AdmissionRewritesIT extends AdmissionScenario {
  /**
   * A webhook replaces the whole label map (respawn.dev/instance and respawn.dev/run lost). The pod is still the
   * instance's (controller ownerReference, name): the operator should manage it, or say why it does not; it must
   * never start a second live pod nor loop on creates.
   */
  @Test
  void aWebhookDroppingTheRespawnLabelsLeavesTheRunManaged() {
    admission.put(ns, PodMutations::replaceLabels);
    policy("p", POLICY);
    instance("a", "p");
    awaitPod("a-1");
    // stored without them, labelled again by the operator at once (its own pod, by UID)
    await().atMost(PATIENCE).untilAsserted(() -> assertThat(pod("a-1").getMetadata().getLabels())
        .containsEntry("respawn.dev/instance", "a").containsEntry("respawn.dev/run", "1"));
    assertThat(cluster.requests.stream().filter(r -> r.byOperator() && "PATCH".equals(r.verb())
        && r.path().endsWith("/pods/a-1"))).as("one patch puts the labels back").hasSize(1);
    status("a-1", "Running", Map.of());
    try {
      awaitStatus("a", s -> "Running".equals(s.path("phase").asText()) && "a-1".equals(s.path("currentPod").asText()),
          Duration.ofSeconds(20));
    } finally {
      assertThat(cluster.podCreatesIn(ns)).as("pod creates; " + describe("a")).isEqualTo(1);
    }
    kubelet.terminated(ns, "a-1", 1, "Error", "boom");
    awaitFailureOf("a", "a-1");
    awaitPod("a-2");
  }

  /** A webhook rewrites the instance label's value: the same expectations. */
  @Test
  void aWebhookRewritingTheInstanceLabelLeavesTheRunManaged() {
    admission.put(ns, PodMutations::rewriteInstanceLabel);
    policy("p", POLICY);
    instance("a", "p");
    Pod stored = awaitPod("a-1");
    assertThat(stored.getMetadata().getLabels()).containsEntry("respawn.dev/instance", "team-a.a");
    status("a-1", "Running", Map.of());
    try {
      awaitStatus("a", s -> "Running".equals(s.path("phase").asText()) && "a-1".equals(s.path("currentPod").asText()),
          Duration.ofSeconds(20));
    } finally {
      assertThat(cluster.podCreatesIn(ns)).as("pod creates; " + describe("a")).isEqualTo(1);
    }
    kubelet.terminated(ns, "a-1", 1, "Error", "boom");
    awaitFailureOf("a", "a-1");
  }

  /**
   * A webhook replaces the annotation map (the operator's respawn.dev/agent-container record lost) and the proxy is
   * first: the template's first container must still decide.
   */
  @Test
  void aWebhookDroppingTheRespawnAnnotationsWithTheProxyFirst() {
    admission.put(ns, pod -> {
      istioSidecar(true).accept(pod);
      replaceAnnotations(pod);
    });
    policy("p", POLICY);
    instance("a", "p");
    runningWithSidecars("a", "a-1");
    restsWithoutWrites("a", "a-1", Duration.ofSeconds(4));
    status("a-1", "Running", states("agent", Kubelet.terminatedState(3, "Error", "tool broke")));
    JsonNode s = awaitFailureOf("a", "a-1");
    assertThat(s.path("lastFailure").path("exitCode").asInt()).as("%s", s).isEqualTo(3);
  }

  /** The same with an explicit spec.agentContainer naming a container that is not first in the stored pod. */
  @Test
  void anExplicitAgentContainerBehindAnInjectedProxyDecides() {
    admission.put(ns, istioSidecar(true));
    policy("p", POLICY);
    instanceWithPodSpec("a", "p", "agentContainer: worker",
        "containers:\n- {name: helper, image: example/helper:1}\n- {name: worker, image: example/agent:1}");
    runningWithSidecars("a", "a-1");
    restsWithoutWrites("a", "a-1", Duration.ofSeconds(4));
    status("a-1", "Running", states("helper", Kubelet.terminatedState(0, "Completed", null)));
    holdsFor(Duration.ofSeconds(3), () -> "Running".equals(phase("a")));
    status("a-1", "Running", states("helper", Kubelet.terminatedState(0, "Completed", null), "worker",
        Kubelet.terminatedState(2, "Error", "boom")));
    JsonNode s = awaitFailureOf("a", "a-1");
    assertThat(s.path("lastFailure").path("exitCode").asInt()).as("%s", s).isEqualTo(2);
  }

  /** Control for the annotation case: annotations replaced, but the agent stays first. */
  @Test
  void aWebhookDroppingTheRespawnAnnotationsWithTheAgentFirst() {
    admission.put(ns, pod -> {
      istioSidecar(false).accept(pod);
      replaceAnnotations(pod);
    });
    policy("p", POLICY);
    instance("a", "p");
    runningWithSidecars("a", "a-1");
    status("a-1", "Running", states("agent", Kubelet.terminatedState(3, "Error", "tool broke")));
    JsonNode s = awaitFailureOf("a", "a-1");
    assertThat(s.path("lastFailure").path("exitCode").asInt()).as("%s", s).isEqualTo(3);
  }

  /** Annotations replaced, explicit spec.agentContainer behind a helper container (no injection at all). */
  @Test
  void aWebhookDroppingTheRespawnAnnotationsWithAnExplicitAgentContainer() {
    admission.put(ns, PodMutations::replaceAnnotations);
    policy("p", POLICY);
    instanceWithPodSpec("a", "p", "agentContainer: worker",
        "containers:\n- {name: helper, image: example/helper:1}\n- {name: worker, image: example/agent:1}");
    runningWithSidecars("a", "a-1");
    status("a-1", "Running", states("worker", Kubelet.terminatedState(2, "Error", "boom")));
    JsonNode s = awaitStatus("a", x -> "a-1".equals(x.path("lastFailure").path("pod").asText()),
        Duration.ofSeconds(15));
    assertThat(s.path("lastFailure").path("exitCode").asInt()).as("%s", s).isEqualTo(2);
  }

  /**
   * Labels dropped by a webhook, with heartbeats: the agent runs and renews its Lease as its pod. The operator
   * must not end (delete) a healthy run it cannot see, nor start a second pod.
   */
  @Test
  void aWebhookDroppingTheRespawnLabelsWithAHealthyHeartbeat() {
    admission.put(ns, PodMutations::replaceLabels);
    policy("p", "heartbeat: {timeout: 3s, startupGrace: 4s}\n" + POLICY);
    instance("a", "p");
    awaitPod("a-1");
    await().atMost(PATIENCE).until(() -> agent.get(ns, "a") != null);
    var beating = agent.keepRenewing(ns, "a", "a-1", 500);
    try {
      status("a-1", "Running", Map.of());
      holdsFor(Duration.ofSeconds(12), () -> pod("a-1") != null && pod("a-1").getMetadata()
          .getDeletionTimestamp() == null && pod("a-2") == null);
    } catch (RuntimeException e) {
      throw new AssertionError("a healthy, heartbeating run was ended; pod a-1 = "
          + (pod("a-1") == null ? "deleted" : "kept") + ", a-2 = " + (pod("a-2") == null ? "none" : "created")
          + ", creates " + cluster.podCreatesIn(ns) + "\n" + describe("a"), e);
    } finally {
      beating.cancel(false);
    }
  }

  /** A webhook overwriting respawn.dev/run. */
  @Test
  void aWebhookRewritingTheRunLabelLeavesTheRunManaged() {
    admission.put(ns, pod -> ((ObjectNode) pod.get("metadata")).with("labels").put("respawn.dev/run", "7"));
    policy("p", POLICY);
    instance("a", "p");
    runningWithSidecars("a", "a-1");
    restsWithoutWrites("a", "a-1", Duration.ofSeconds(4));
    kubelet.terminated(ns, "a-1", 1, "Error", "boom");
    awaitFailureOf("a", "a-1");
    try {
      await().atMost(Duration.ofSeconds(20)).until(() -> pod("a-2") != null);
    } catch (RuntimeException e) {
      throw new AssertionError("no pod a-2; pods: " + cluster.client.pods().inNamespace(ns).list().getItems().stream()
          .map(x -> x.getMetadata().getName() + (x.getMetadata().getDeletionTimestamp() == null ? "" : "(deleting)"))
          .toList() + "; operator pod requests: " + cluster.requests.stream().filter(r -> r.byOperator()
          && r.path().startsWith("/api/v1/namespaces/" + ns + "/pods")).toList() + "\n" + describe("a"), e);
    }
    runningWithSidecars("a", "a-2");
    assertThat(status("a").path("run").asInt()).isEqualTo(2);
    assertThat(cluster.podCreatesIn(ns)).isEqualTo(2);
  }

  /**
   * No webhook: a user (or a labelling tool) overwrites respawn.dev/run on the live pod, as `kubectl label pod a-1
   * respawn.dev/run=7 --overwrite` would. The run number is the operator's own record (status.run, the pod's name):
   * the next pod must still be a-2 and status.restarts must count restarts, not labels.
   */
  @Test
  void aRelabelledRunLabelOnALivePodDoesNotRenumberTheRuns() {
    policy("p", POLICY);
    instance("a", "p");
    runningWithSidecars("a", "a-1");
    kubelet.edit(ns, "a-1", p -> p.getMetadata().getLabels().put("respawn.dev/run", "7"));
    kubelet.terminated(ns, "a-1", 1, "Error", "boom");
    JsonNode s = awaitFailureOf("a", "a-1");
    assertThat(s.path("run").asInt()).as("%s", s).isEqualTo(1);
    assertThat(s.path("restarts").asInt()).as("%s", s).isLessThanOrEqualTo(1);
    await().atMost(Duration.ofSeconds(20)).until(() -> cluster.podCreatesIn(ns) >= 2);
    assertThat(pod("a-2")).as("pods: %s", cluster.client.pods().inNamespace(ns).list().getItems().stream()
        .map(x -> x.getMetadata().getName()).toList()).isNotNull();
  }


  /**
   * A webhook adds a finalizer (backup/audit tools do). The agent exits while the classic sidecar keeps the pod
   * Running: the operator deletes the pod; once the kubelet reports every container terminated the pod is no longer
   * live, and the next run must start although the finalizer keeps the object.
   */
  @Test
  void aWebhookAddedFinalizerDoesNotBlockTheNextRun() {
    admission.put(ns, pod -> {
      istioSidecar(false).accept(pod);
      finalizer(pod);
    });
    policy("p", POLICY);
    instance("a", "p");
    runningWithSidecars("a", "a-1");
    status("a-1", "Running", states("agent", Kubelet.terminatedState(1, "Error", "boom")));
    awaitFailureOf("a", "a-1");
    await().atMost(PATIENCE).until(() -> pod("a-1").getMetadata().getDeletionTimestamp() != null);
    status("a-1", "Failed", states("agent", Kubelet.terminatedState(1, "Error", "boom"), "istio-proxy",
        Kubelet.terminatedState(0, "Completed", null)));
    try {
      await().atMost(Duration.ofSeconds(20)).until(() -> pod("a-2") != null);
    } catch (RuntimeException e) {
      throw new AssertionError("no a-2 while a finished a-1 is held by a finalizer; " + describe("a"), e);
    }
    runningWithSidecars("a", "a-2");
    kubelet.terminated(ns, "a-2", 1, "Error", "boom");
    awaitFailureOf("a", "a-2");
    await().atMost(Duration.ofSeconds(20)).until(() -> pod("a-3") != null || pod("a-2").getMetadata()
        .getDeletionTimestamp() != null);
  }
}

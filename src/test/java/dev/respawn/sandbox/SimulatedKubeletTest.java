package dev.respawn.sandbox;

import dev.respawn.testsupport.ManualClock;
import dev.respawn.testsupport.MockApi;
import dev.respawn.testsupport.RequestLog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class SimulatedKubeletTest {
  @RegisterExtension
  static final MockApi API = new MockApi();
  static final AtomicInteger NAMESPACES = new AtomicInteger();
  static final Duration AT_MOST = Duration.ofSeconds(10);

  final String ns = "kubelet-" + NAMESPACES.incrementAndGet();
  final ManualClock clock = ManualClock.at("2026-11-21T10:00:00Z");
  SimulatedKubelet kubelet;

  KubernetesClient client() {
    return API.client();
  }

  SimulatedKubelet kubelet() {
    kubelet = new SimulatedKubelet(API.newClient(b -> b.withUserAgent("simulated-kubelet")), ns, clock);
    return kubelet;
  }

  @AfterEach
  void stop() {
    if (kubelet != null) {
      assertThat(kubelet.errors()).isEmpty();
      kubelet.close();
    }
  }

  Pod createPod(String instance, int run, String... containers) {
    var spec = new PodBuilder().withNewMetadata().withName(instance + "-" + run).withNamespace(ns)
        .addToLabels(dev.respawn.api.v1alpha1.AgentInstance.INSTANCE_LABEL, instance).addToLabels("respawn.dev/run", String.valueOf(run))
        .endMetadata().withNewSpec().withRestartPolicy("Never");
    for (String c : containers.length == 0 ? new String[] {"agent"} : containers) {
      spec = spec.addNewContainer().withName(c).withImage("registry.example/" + c + ":1").addNewEnv()
          .withName("RESPAWN_LEASE_NAME").withValue(instance + "-lease").endEnv().endContainer();
    }
    return client().pods().inNamespace(ns).resource(spec.endSpec().build()).create();
  }

  Pod pod(String name) {
    return client().pods().inNamespace(ns).withName(name).get();
  }

  String phase(String name) {
    Pod p = pod(name);
    return p == null || p.getStatus() == null ? null : p.getStatus().getPhase();
  }

  static PodCondition condition(Pod pod, String type) {
    return pod.getStatus().getConditions().stream().filter(c -> type.equals(c.getType())).findFirst().orElseThrow();
  }

  static ContainerStatus container(Pod pod, String name) {
    return pod.getStatus().getContainerStatuses().stream().filter(c -> name.equals(c.getName())).findFirst()
        .orElseThrow();
  }

  @Test
  void movesAPodFromPendingToRunningToFailed() {
    kubelet();
    createPod("manual", 1);
    assertThat(phase("manual-1")).isNull();

    kubelet.startRunning("manual-1");
    Pod running = pod("manual-1");
    assertThat(running.getStatus().getPhase()).isEqualTo("Running");
    assertThat(running.getStatus().getStartTime()).isEqualTo("2026-11-21T10:00:00Z");
    assertThat(container(running, "agent").getState().getRunning().getStartedAt()).isEqualTo("2026-11-21T10:00:00Z");
    assertThat(container(running, "agent").getReady()).isTrue();
    assertThat(condition(running, "Ready").getStatus()).isEqualTo("True");

    clock.advance(Duration.ofSeconds(42));
    kubelet.terminate("manual-1", 1, "Error", "network_timeout: upstream did not answer");
    Pod failed = pod("manual-1");
    assertThat(failed.getStatus().getPhase()).isEqualTo("Failed");
    var terminated = container(failed, "agent").getState().getTerminated();
    assertThat(terminated.getExitCode()).isEqualTo(1);
    assertThat(terminated.getReason()).isEqualTo("Error");
    assertThat(terminated.getMessage()).isEqualTo("network_timeout: upstream did not answer");
    assertThat(terminated.getStartedAt()).isEqualTo("2026-11-21T10:00:00Z");
    assertThat(terminated.getFinishedAt()).isEqualTo("2026-11-21T10:00:42Z");
    assertThat(condition(failed, "Ready").getStatus()).isEqualTo("False");
    assertThat(condition(failed, "Ready").getReason()).isEqualTo("PodCompleted");
    assertThat(failed.getStatus().getStartTime()).isEqualTo("2026-11-21T10:00:00Z");
  }

  @Test
  void exitCodeZeroSucceedsAndOomKilledFails() {
    kubelet();
    createPod("clean", 1);
    createPod("oom", 1);
    kubelet.startRunning("clean-1");
    kubelet.startRunning("oom-1");

    kubelet.terminate("clean-1", 0, "Completed", "");
    kubelet.terminate("oom-1", 137, "OOMKilled", "");

    assertThat(phase("clean-1")).isEqualTo("Succeeded");
    assertThat(container(pod("clean-1"), "agent").getState().getTerminated().getMessage()).isNull();
    assertThat(phase("oom-1")).isEqualTo("Failed");
    assertThat(container(pod("oom-1"), "agent").getState().getTerminated().getReason()).isEqualTo("OOMKilled");
    assertThat(container(pod("oom-1"), "agent").getState().getTerminated().getExitCode()).isEqualTo(137);
  }

  @Test
  void aPodEndsOnlyWhenAllItsContainersHave() {
    kubelet();
    createPod("sidecar", 1, "agent", "proxy");
    kubelet.startRunning("sidecar-1");

    kubelet.terminateContainer("sidecar-1", "agent", 1, "Error", "boom");
    assertThat(phase("sidecar-1")).isEqualTo("Running");
    assertThat(container(pod("sidecar-1"), "proxy").getState().getRunning()).isNotNull();
    assertThat(container(pod("sidecar-1"), "agent").getState().getTerminated().getExitCode()).isEqualTo(1);

    kubelet.terminateContainer("sidecar-1", "proxy", 0, "Completed", "");
    assertThat(phase("sidecar-1")).isEqualTo("Failed");
    assertThat(container(pod("sidecar-1"), "agent").getState().getTerminated().getMessage()).isEqualTo("boom");
  }

  @Test
  void evictsWithReasonAndDisruptionTarget() {
    kubelet();
    createPod("evictee", 1);
    kubelet.startRunning("evictee-1");

    kubelet.evict("evictee-1");

    Pod evicted = pod("evictee-1");
    assertThat(evicted.getStatus().getPhase()).isEqualTo("Failed");
    assertThat(evicted.getStatus().getReason()).isEqualTo("Evicted");
    assertThat(evicted.getStatus().getMessage()).contains("low on resource");
    assertThat(condition(evicted, "DisruptionTarget").getStatus()).isEqualTo("True");
    assertThat(condition(evicted, "DisruptionTarget").getReason()).isEqualTo("TerminationByKubelet");
  }

  @Test
  void leavesAPodStuckInPending() {
    kubelet();
    createPod("pull", 1);
    createPod("nowhere", 1);

    kubelet.stuckPending("pull-1", "ErrImagePull", "manifest unknown");
    kubelet.stuckPending("nowhere-1", "Unschedulable", "0/3 nodes are available");

    Pod pull = pod("pull-1");
    assertThat(pull.getStatus().getPhase()).isEqualTo("Pending");
    assertThat(container(pull, "agent").getState().getWaiting().getReason()).isEqualTo("ErrImagePull");
    assertThat(container(pull, "agent").getState().getWaiting().getMessage()).isEqualTo("manifest unknown");
    assertThat(pull.getStatus().getStartTime()).isNull();
    Pod nowhere = pod("nowhere-1");
    assertThat(condition(nowhere, "PodScheduled").getStatus()).isEqualTo("False");
    assertThat(condition(nowhere, "PodScheduled").getReason()).isEqualTo("Unschedulable");
    assertThat(nowhere.getStatus().getContainerStatuses()).isEmpty();
  }

  @Test
  void deletesAPodAsSomeoneElse() {
    kubelet();
    createPod("victim", 1);

    assertThat(kubelet.deleteBySomeoneElse("victim-1")).isTrue();

    assertThat(pod("victim-1")).isNull();
    assertThat(kubelet.deleteBySomeoneElse("victim-1")).isFalse();
  }

  @Test
  void playsAScriptPodByPodThenRunsForever() {
    kubelet().script("coder", Run.exit(1), Run.exit(1), Run.runForever()).start();

    for (int run = 1; run <= 2; run++) {
      String name = "coder-" + run;
      createPod("coder", run);
      await().atMost(AT_MOST).until(() -> "Failed".equals(phase(name)));
      assertThat(container(pod(name), "agent").getState().getTerminated().getExitCode()).isEqualTo(1);
    }
    createPod("coder", 3);
    createPod("unscripted", 1);
    await().atMost(AT_MOST).until(() -> "Running".equals(phase("coder-3")) && "Running".equals(phase("unscripted-1")));

    await().during(Duration.ofMillis(300)).atMost(AT_MOST).until(() -> "Running".equals(phase("coder-3")));
    assertThat(kubelet.played()).containsExactlyInAnyOrder("coder-1: Run[EXIT 1 Error]", "coder-2: Run[EXIT 1 Error]",
        "coder-3: Run[NEVER]", "unscripted-1: Run[NEVER]");
    assertThat(API.requests().matching(r -> r.isWrite() && r.path().contains("/namespaces/" + ns + "/pods/coder-1")))
        .extracting(RequestLog.Request::key).containsExactly("PATCH pods/status", "PATCH pods/status");
  }

  @Test
  void playsEveryKindOfEnding() {
    kubelet().script("oom", Run.oomKilled().after(Duration.ofMillis(100)))
        .script("late", Run.deadlineExceeded())
        .script("evicted", Run.evicted())
        .script("deleted", Run.deletedBySomeoneElse())
        .script("pull", Run.stuckPending("ImagePullBackOff", "back-off pulling image"))
        .script("slow", Run.exit(0).startAfter(Duration.ofMillis(300)))
        .script("told", Run.exit(3, "Error", "spec_not_found: TASK-9"))
        .start();
    for (String instance : List.of("oom", "late", "evicted", "deleted", "pull", "slow", "told")) {
      createPod(instance, 1);
    }

    await().atMost(AT_MOST).ignoreExceptions().untilAsserted(() -> {
      assertThat(container(pod("oom-1"), "agent").getState().getTerminated().getReason()).isEqualTo("OOMKilled");
      assertThat(container(pod("late-1"), "agent").getState().getTerminated().getReason())
          .isEqualTo("DeadlineExceeded");
      assertThat(pod("evicted-1").getStatus().getReason()).isEqualTo("Evicted");
      assertThat(pod("deleted-1")).isNull();
      assertThat(container(pod("pull-1"), "agent").getState().getWaiting().getReason()).isEqualTo("ImagePullBackOff");
      assertThat(container(pod("told-1"), "agent").getState().getTerminated().getMessage())
          .isEqualTo("spec_not_found: TASK-9");
    });
    // a slow start shows ContainerCreating first, then runs and succeeds
    await().atMost(AT_MOST).until(() -> "Succeeded".equals(phase("slow-1")));
    assertThat(phase("pull-1")).isEqualTo("Pending");
    assertThat(API.requests().matching(r -> r.path().contains("/namespaces/" + ns + "/pods/slow-1/status")
        && r.isWrite())).hasSize(3);
  }

  @Test
  void leavesPodsAloneThatAreAlreadyRunningOrNotAnInstancesPods() {
    kubelet();
    createPod("before", 1);
    kubelet.startRunning("before-1");
    kubelet.terminate("before-1", 2, "Error", "ended before the kubelet started");
    client().pods().inNamespace(ns).resource(new PodBuilder().withNewMetadata().withName("stranger").endMetadata()
        .withNewSpec().addNewContainer().withName("c").withImage("i").endContainer().endSpec().build()).create();

    kubelet.script("before", Run.runForever()).start();
    createPod("after", 1);

    await().atMost(AT_MOST).until(() -> "Running".equals(phase("after-1")));
    assertThat(phase("before-1")).isEqualTo("Failed");
    assertThat(phase("stranger")).isNull();
    assertThat(kubelet.played()).containsExactly("after-1: Run[NEVER]");
  }

  @Test
  void renewsALeaseWithTheAnnotations() {
    kubelet();

    Lease created = kubelet.renew("coder", "coder-1", "Healthy", "respawn.dev/checkpoint", "ckpt-17",
        "respawn.dev/checkpoint-status", "in_progress", "respawn.dev/step-idempotent", "true",
        "respawn.dev/artifacts-ready", "true");

    Lease stored = client().leases().inNamespace(ns).withName("coder").get();
    assertThat(stored.getMetadata().getUid()).isEqualTo(created.getMetadata().getUid());
    assertThat(stored.getSpec().getHolderIdentity()).isEqualTo("coder-1");
    assertThat(stored.getSpec().getRenewTime().toInstant()).isEqualTo(Instant.parse("2026-11-21T10:00:00Z"));
    assertThat(stored.getMetadata().getAnnotations()).containsOnly(
        java.util.Map.entry("respawn.dev/health", "Healthy"), java.util.Map.entry("respawn.dev/checkpoint", "ckpt-17"),
        java.util.Map.entry("respawn.dev/checkpoint-status", "in_progress"),
        java.util.Map.entry("respawn.dev/step-idempotent", "true"),
        java.util.Map.entry("respawn.dev/artifacts-ready", "true"));

    clock.advance(Duration.ofMillis(1500));
    kubelet.renew("coder", "coder-2", "Stalled", "respawn.dev/checkpoint", "ckpt-18", "respawn.dev/artifacts-ready",
        null);

    Lease renewed = client().leases().inNamespace(ns).withName("coder").get();
    assertThat(renewed.getSpec().getHolderIdentity()).isEqualTo("coder-2");
    assertThat(renewed.getSpec().getRenewTime().toInstant()).isEqualTo(Instant.parse("2026-11-21T10:00:01.500Z"));
    assertThat(renewed.getSpec().getAcquireTime().withZoneSameInstant(ZoneOffset.UTC).toInstant())
        .isEqualTo(Instant.parse("2026-11-21T10:00:01.500Z"));
    assertThat(renewed.getSpec().getLeaseTransitions()).isEqualTo(1);
    assertThat(renewed.getMetadata().getAnnotations())
        .containsEntry("respawn.dev/health", "Stalled").containsEntry("respawn.dev/checkpoint", "ckpt-18")
        .containsEntry("respawn.dev/checkpoint-status", "in_progress").doesNotContainKey("respawn.dev/artifacts-ready");
  }

  @Test
  void renewsPeriodicallyUntilStopped() {
    kubelet = new SimulatedKubelet(API.newClient(), ns); // the system clock: renewTime moves
    Heartbeat heartbeat = kubelet.renewEvery(Duration.ofMillis(20), "periodic", "periodic-1",
        "Healthy");

    await().atMost(AT_MOST).until(() -> heartbeat.renewals() >= 3);
    assertThat(kubelet.activeHeartbeats()).isEqualTo(1);
    Lease lease = client().leases().inNamespace(ns).withName("periodic").get();
    assertThat(lease.getSpec().getHolderIdentity()).isEqualTo("periodic-1");
    heartbeat.stop();
    assertThat(heartbeat.isStopped()).isTrue();
    assertThat(kubelet.activeHeartbeats()).isZero();
    int renewals = heartbeat.renewals();

    // a renewal already under way when stop() came may still land; nothing after it
    await().during(Duration.ofMillis(200)).atMost(AT_MOST).until(() -> heartbeat.renewals() <= renewals + 1
        && leaseWrites("periodic") <= renewals + 1);
    assertThatThrownBy(() -> kubelet.renewEvery(Duration.ofMillis(1), "x", "y", "Healthy"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> kubelet.renewEvery(Duration.ofHours(2), "x", "y", "Healthy"))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void aScriptedRunRenewsItsLeaseWhileItRunsAndStopsWhenItsPodIsGone() {
    kubelet = new SimulatedKubelet(API.newClient(), ns);
    kubelet.script("beating", Run.runForever().heartbeat(Duration.ofMillis(20), "respawn.dev/checkpoint", "ckpt-1"))
        .start();
    createPod("beating", 1);
    // a scripted agent renews only, as the documented agent Role allows: it never makes the Lease
    await().atMost(AT_MOST).until(() -> kubelet.activeHeartbeats() == 1);
    await().during(Duration.ofMillis(200)).atMost(AT_MOST)
        .until(() -> client().leases().inNamespace(ns).withName("beating-lease").get() == null);
    // the operator's part: the Lease exists
    client().leases().inNamespace(ns).resource(new io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder()
        .withNewMetadata().withName("beating-lease").endMetadata().withNewSpec().endSpec().build()).create();

    await().atMost(AT_MOST).ignoreExceptions().untilAsserted(() -> {
      Lease lease = client().leases().inNamespace(ns).withName("beating-lease").get();
      assertThat(lease).isNotNull();
      assertThat(lease.getSpec().getHolderIdentity()).isEqualTo("beating-1");
      assertThat(lease.getMetadata().getAnnotations()).containsEntry("respawn.dev/health", "Healthy")
          .containsEntry("respawn.dev/checkpoint", "ckpt-1");
    });
    var first = client().leases().inNamespace(ns).withName("beating-lease").get().getSpec().getRenewTime();
    await().atMost(AT_MOST).until(() -> !client().leases().inNamespace(ns).withName("beating-lease").get().getSpec()
        .getRenewTime().equals(first));

    client().pods().inNamespace(ns).withName("beating-1").delete();
    await().atMost(AT_MOST).until(() -> kubelet.activeHeartbeats() == 0);
    long writes = leaseWrites("beating-lease");
    await().during(Duration.ofMillis(200)).atMost(AT_MOST).until(() -> leaseWrites("beating-lease") <= writes + 1);
  }

  long leaseWrites(String lease) {
    return API.requests().matching(r -> r.isWrite() && r.path().startsWith(
        "/apis/coordination.k8s.io/v1/namespaces/" + ns + "/leases") && r.path().contains(lease)).size();
  }

  @Test
  void aManualCommandOnAMissingPodFails() {
    kubelet();
    assertThatThrownBy(() -> kubelet.startRunning("ghost-1"))
        .isInstanceOf(io.fabric8.kubernetes.client.KubernetesClientException.class);
  }
}

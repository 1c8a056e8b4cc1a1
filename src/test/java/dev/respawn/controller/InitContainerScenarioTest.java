package dev.respawn.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.InterruptionClass;
import dev.respawn.api.v1alpha1.Phase;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.PodStatusBuilder;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * Pods whose template has init containers (a checkout of the task before the agent starts): they are given
 * the RESPAWN_* environment too, and an init container that fails ends the run as its exit says (api.md §4:
 * "any other non-zero exit"), not as a pod without a usable termination state.
 */
class InitContainerScenarioTest extends MockClusterScenario {
  static PodTemplateSpec withCheckout() {
    return new PodTemplateSpecBuilder().withNewSpec()
        .addNewInitContainer().withName("checkout").withImage("git:1").endInitContainer()
        .addNewContainer().withName("agent").withImage("a:1").endContainer().endSpec().build();
  }

  @Test
  void initContainersAreGivenTheRespawnEnvironment() {
    f.policy("fast", "backoff: {type: Immediate}");
    f.instance("ic", "fast", spec -> {
      spec.template = withCheckout();
      spec.task = "TASK-7";
    });
    await().atMost(OperatorFixture.AT_MOST).until(() -> f.pod("ic-1") != null);
    assertThat(f.pod("ic-1").getSpec().getInitContainers().get(0).getEnv())
        .extracting(EnvVar::getName)
        .contains("RESPAWN_INSTANCE", "RESPAWN_RUN", "RESPAWN_ATTEMPT", "RESPAWN_LEASE_NAME", "RESPAWN_TASK");
    assertThat(f.pod("ic-1").getSpec().getInitContainers().get(0).getEnv())
        .filteredOn(e -> e.getName().equals("RESPAWN_TASK")).singleElement()
        .extracting(EnvVar::getValue).isEqualTo("TASK-7");
  }

  @Test
  void aFailedInitContainerEndsTheRunWithItsExit() {
    f.kubelet.close(); // the pod's status is written here, as a kubelet would after the init container failed
    f.policy("slow", "backoff: {type: Exponential, initialDelay: 1h, maxDelay: 1h}");
    f.instance("init", "slow", spec -> spec.template = withCheckout());
    await().atMost(OperatorFixture.AT_MOST).until(() -> f.pod("init-1") != null);
    f.client.pods().inNamespace(OperatorFixture.NS).withName("init-1").editStatus(p -> {
      p.setStatus(new PodStatusBuilder().withPhase("Failed").withStartTime(Instant.now().toString())
          .addNewInitContainerStatus().withName("checkout").withImage("git:1").withReady(false).withRestartCount(0)
          .withNewState().withNewTerminated().withExitCode(128).withReason("Error")
          .withMessage("fatal: unable to access the repository: network_timeout").endTerminated().endState()
          .endInitContainerStatus()
          .addNewContainerStatus().withName("agent").withImage("a:1").withReady(false).withRestartCount(0)
          .withNewState().withNewWaiting().withReason("PodInitializing").endWaiting().endState().endContainerStatus()
          .build());
      return p;
    });
    AgentInstance failed = f.awaitInstance("init", i -> i.getStatus().lastFailure != null);
    assertThat(failed.getStatus().phase).isEqualTo(Phase.Backoff);
    assertThat(failed.getStatus().lastFailure.failureClass).isEqualTo(InterruptionClass.ProcessCrash);
    assertThat(failed.getStatus().lastFailure.exitCode).isEqualTo(128);
    assertThat(failed.getStatus().lastFailure.message).contains("network_timeout");
  }
}

package dev.respawn.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.sandbox.Run;
import io.fabric8.kubernetes.api.model.Pod;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The seed scenarios, through the Kubernetes API only. */
class SeedScenarioTest extends MockClusterScenario {
  @Test
  void failsTwiceThenRecoversOnTheThirdRun() {
    f.policy("fast", """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
        resetAfter: 500ms
        """);
    f.kubelet.script("coder", Run.exit(1, "Error", "network_timeout: upstream"), Run.exit(1), Run.runForever());
    f.instance("coder", "fast");
    AgentInstance healed = f.awaitInstance("coder", i -> i.getStatus().run != null && i.getStatus().run == 3
        && i.getStatus().phase == Phase.Running && i.getStatus().attempt == 0);
    assertThat(healed.getStatus().restarts).isEqualTo(2);
    assertThat(healed.getStatus().currentPod).isEqualTo("coder-3");
    assertThat(healed.getStatus().circuitBreaker.state).isEqualTo(CircuitState.Closed);
    assertThat(healed.getStatus().history).extracting(r -> r.outcome).containsExactly("Failure", "Failure");
    assertThat(healed.getStatus().lastFailure.failureReason).isEqualTo("UnhandledException");
    Pod pod = f.client.pods().inNamespace(OperatorFixture.NS).withName("coder-3").get();
    assertThat(pod.getSpec().getRestartPolicy()).isEqualTo("Never");
    assertThat(pod.getMetadata().getOwnerReferences()).singleElement().satisfies(o -> {
      assertThat(o.getController()).isTrue();
      assertThat(o.getKind()).isEqualTo("AgentInstance");
    });
    assertThat(pod.getMetadata().getLabels()).containsEntry("respawn.dev/instance", "coder")
        .containsEntry("respawn.dev/run", "3");
    assertThat(pod.getSpec().getContainers().get(0).getEnv()).extracting(e -> e.getName() + "=" + e.getValue())
        .contains("RESPAWN_INSTANCE=coder", "RESPAWN_RUN=3", "RESPAWN_ATTEMPT=2", "RESPAWN_LEASE_NAME=coder",
            "RESPAWN_TASK=TASK-31-1");
    // the finished pods of earlier runs are cleaned up once the next run started
    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10))
        .until(() -> f.pods("coder").stream().map(p -> p.getMetadata().getName()).toList(),
            names -> names.equals(java.util.List.of("coder-3")));
  }

  @Test
  void exponentialScheduleIsVisibleInNextRestartAt() {
    f.policy("exp", """
        backoff: {type: Exponential, initialDelay: 1s, multiplier: 2.0, maxDelay: 10s}
        maxRetries: 5
        """);
    // runs 2 and 3 last a while: long enough to see each run's own start in status before it fails
    f.kubelet.script("exp", Run.exit(1), Run.exit(1).after(Duration.ofMillis(300)),
        Run.exit(1).after(Duration.ofMillis(300)), Run.runForever());
    f.instance("exp", "exp");
    long[] expectedMs = {1000, 2000, 4000};
    for (int attempt = 1; attempt <= 3; attempt++) {
      int a = attempt;
      AgentInstance waiting = f.awaitInstance("exp", x -> x.getStatus().phase == Phase.Backoff
          && x.getStatus().attempt == a && x.getStatus().nextRestartAt != null);
      Instant decided = Instant.parse(waiting.getStatus().lastDecision.at);
      Instant next = Instant.parse(waiting.getStatus().nextRestartAt);
      assertThat(Duration.between(decided, next).toMillis()).isEqualTo(expectedMs[a - 1]);
      assertThat(waiting.getStatus().lastDecision.reasonCode).isEqualTo("restart_scheduled");
      AgentInstance started = f.awaitInstance("exp", x -> x.getStatus().run == a + 1
          && x.getStatus().lastRestart != null && ("exp-" + (a + 1)).equals(x.getStatus().lastRestart.pod));
      // never early: the next pod was created at or after nextRestartAt
      assertThat(Instant.parse(started.getStatus().lastRestart.startedAt)).isAfterOrEqualTo(next);
    }
  }
}

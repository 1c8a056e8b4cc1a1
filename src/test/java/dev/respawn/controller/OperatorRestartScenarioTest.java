package dev.respawn.controller;

import static dev.respawn.controller.OperatorFixture.at;
import static dev.respawn.controller.OperatorFixture.hasCondition;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.policy.Decision;
import dev.respawn.sandbox.Run;
import io.fabric8.kubernetes.api.model.Pod;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * api.md §3 "survives an operator restart": a restart scheduled before the operator died happens at
 * nextRestartAt, once, by the new operator.
 */
class OperatorRestartScenarioTest extends MockClusterScenario {
  @Test
  void theNewOperatorStartsTheNextRunAtNextRestartAtOnce() {
    f.policy("slow", """
        backoff: {type: Linear, initialDelay: 3s, maxDelay: 10s}
        maxRetries: 3
        restartLimit: {maxRestarts: 10, window: 1h}
        """);
    f.kubelet.script("survivor", Run.exit(1, "Error", "network_timeout: upstream"), Run.runForever());
    f.instance("survivor", "slow");
    AgentInstance waiting = f.awaitInstance("survivor", i -> i.getStatus().phase == Phase.Backoff);
    Instant next = Instant.parse(waiting.getStatus().nextRestartAt);
    assertThat(Duration.between(Instant.parse(waiting.getStatus().lastDecision.at), next))
        .isEqualTo(Duration.ofSeconds(3));

    f.restartOperator();
    assertThat(Instant.now()).as("the operator was restarted inside the backoff").isBefore(next);

    AgentInstance running = f.awaitInstance("survivor", i -> at(i, 2, Phase.Running));
    var st = running.getStatus();
    Instant started = Instant.parse(st.lastRestart.startedAt);
    assertThat(started).as("not earlier than nextRestartAt").isAfterOrEqualTo(next);
    Pod pod = f.pod("survivor-2");
    assertThat(Instant.parse(pod.getMetadata().getCreationTimestamp()))
        .isAfterOrEqualTo(next.truncatedTo(ChronoUnit.SECONDS));
    assertThat(st.attempt).isEqualTo(1);
    assertThat(st.restarts).isEqualTo(1);
    assertThat(st.circuitBreaker.state).isEqualTo(CircuitState.Closed);
    assertThat(st.circuitBreaker.failureCount).isEqualTo(1);
    assertThat(st.recentRestarts).containsExactly(st.lastRestart.startedAt);
    assertThat(st.history).singleElement().satisfies(r -> {
      assertThat(r.pod).isEqualTo("survivor-1");
      assertThat(r.reasonCode).isEqualTo("restart_scheduled");
    });
    // once: one pod for that run, none after it
    f.holdsFor(Duration.ofMillis(700), () -> f.podsEverCreated("survivor"),
        p -> p.equals(List.of("survivor-1", "survivor-2")));
    assertThat(f.get("survivor").getStatus().run).isEqualTo(2);
  }

  @Test
  void aRestartedOperatorDoesNotCountAFailureAgain() {
    f.policy("hour", "backoff: {type: Exponential, initialDelay: 1h, maxDelay: 1h}");
    f.kubelet.script("counted", Run.exit(1), Run.runForever());
    f.instance("counted", "hour");
    AgentInstance before = f.awaitInstance("counted", i -> i.getStatus().phase == Phase.Backoff);
    f.restartOperator();
    // the new operator reconciles the instance and its failed pod again
    f.edit("counted", i -> {
      i.getSpec().task = "TASK-2";
      return i;
    });
    f.awaitInstance("counted", i -> i.getMetadata().getGeneration().equals(i.getStatus().observedGeneration));
    AgentInstance after = f.holdsFor(Duration.ofMillis(700), () -> f.get("counted"),
        i -> i.getStatus().phase == Phase.Backoff && i.getStatus().attempt == 1);
    assertThat(after.getStatus().circuitBreaker.failureCount).isEqualTo(1);
    assertThat(after.getStatus().history).hasSize(1);
    assertThat(after.getStatus().nextRestartAt).isEqualTo(before.getStatus().nextRestartAt);
    assertThat(after.getStatus().lastDecision.at).isEqualTo(before.getStatus().lastDecision.at);
  }

  @Test
  void aFailureWhileTheOperatorIsDownIsHandledOnceWhenItIsBack() {
    f.policy("fast", "backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}");
    f.kubelet.script("down", Run.runForever(), Run.runForever());
    f.instance("down", "fast");
    f.awaitInstance("down", i -> at(i, 1, Phase.Running));
    f.stopOperator();
    f.kubelet.terminate("down-1", 1, "Error", "network_timeout: while nobody watched");
    f.startOperator();
    AgentInstance running = f.awaitInstance("down", i -> at(i, 2, Phase.Running));
    var st = running.getStatus();
    assertThat(st.attempt).isEqualTo(1);
    assertThat(st.restarts).isEqualTo(1);
    assertThat(st.lastFailure.message).isEqualTo("network_timeout: while nobody watched");
    assertThat(st.lastFailure.failureReason).isEqualTo("DependencyFailure");
    assertThat(st.history).hasSize(1);
    f.holdsFor(Duration.ofMillis(700), () -> f.podsEverCreated("down"), p -> p.size() == 2);
  }

  @Test
  void aHeartbeatingRunSurvivesAnOperatorRestart() {
    f.healthyHeartbeatingRun("steady");
    f.restartOperator();
    // well past the heartbeat timeout: the new operator judges the renewals it sees itself
    AgentInstance steady = f.holdsFor(Duration.ofMillis(2500), () -> f.get("steady"),
        i -> at(i, 1, Phase.Running) && hasCondition(i, "Ready", "True", "Healthy"));
    assertThat(steady.getStatus().attempt).isZero();
    assertThat(steady.getStatus().lastFailure).isNull();
    assertThat(f.podsEverCreated("steady")).containsExactly("steady-1");
  }

  @Test
  void aPodCreatedJustBeforeTheOperatorDiedIsAdoptedNotDuplicated() {
    f.policy("slow", """
        backoff: {type: Linear, initialDelay: 1s, maxDelay: 1s}
        restartLimit: {maxRestarts: 10, window: 1h}
        """);
    f.kubelet.script("adopt", Run.exit(1), Run.runForever(), Run.runForever());
    f.instance("adopt", "slow");
    AgentInstance waiting = f.awaitInstance("adopt", i -> i.getStatus().phase == Phase.Backoff);
    f.stopOperator();
    // at nextRestartAt the dying operator created the next run's pod, but wrote no status any more
    Instant due = Instant.parse(waiting.getStatus().nextRestartAt);
    await().atMost(OperatorFixture.AT_MOST).until(() -> !Instant.now().isBefore(due));
    Pod next = PodFactory.build(f.get("adopt"), new Decision.PodStart(2, "adopt-2", 1, Optional.empty(),
        Optional.empty(), Optional.empty(), due), "adopt");
    f.client.pods().inNamespace(OperatorFixture.NS).resource(next).create();
    f.startOperator();
    AgentInstance adopted = f.awaitInstance("adopt", i -> at(i, 2, Phase.Running));
    f.holdsFor(Duration.ofMillis(700), () -> f.podsEverCreated("adopt"), p -> p.size() == 2);
    var st = adopted.getStatus();
    assertThat(st.currentPod).isEqualTo("adopt-2");
    assertThat(st.attempt).isEqualTo(1);
    assertThat(st.nextRestartAt).isNull();
    // the adopted run is a restart like any other
    assertThat(st.restarts).isEqualTo(1);
    assertThat(st.recentRestarts).hasSize(1);
    assertThat(st.lastRestart.pod).isEqualTo("adopt-2");
    assertThat(st.lastRestart.startedAt).isNotNull();
  }

  @Test
  void aFailureWhoseRestartWasStartedJustBeforeTheOperatorDiedIsStillCounted() {
    // Immediate: the failure and the next run's start are one decision, one status write
    f.policy("now", "backoff: {type: Immediate}");
    f.kubelet.script("lost", Run.runForever(), Run.runForever(), Run.runForever());
    f.instance("lost", "now");
    f.awaitInstance("lost", i -> at(i, 1, Phase.Running));
    f.stopOperator();
    // what the dead operator did before its status write: it saw the failure and created the next pod
    f.kubelet.terminate("lost-1", 1, "Error", "network_timeout: upstream");
    Pod next = PodFactory.build(f.get("lost"), new Decision.PodStart(2, "lost-2", 1, Optional.empty(),
        Optional.empty(), Optional.empty(), Instant.now()), "lost");
    f.client.pods().inNamespace(OperatorFixture.NS).resource(next).create();
    f.startOperator();
    AgentInstance running = f.awaitInstance("lost", i -> at(i, 2, Phase.Running));
    var st = running.getStatus();
    f.holdsFor(Duration.ofMillis(700), () -> f.podsEverCreated("lost"), p -> p.size() == 2);
    assertThat(st.attempt).as("the failure of lost-1 counts").isEqualTo(1);
    assertThat(st.lastFailure).isNotNull();
    assertThat(st.lastFailure.pod).isEqualTo("lost-1");
    assertThat(st.history).singleElement().satisfies(r -> assertThat(r.pod).isEqualTo("lost-1"));
    assertThat(st.restarts).isEqualTo(1);
    assertThat(st.lastRestart.pod).isEqualTo("lost-2");
  }
}

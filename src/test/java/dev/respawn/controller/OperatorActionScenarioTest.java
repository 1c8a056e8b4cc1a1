package dev.respawn.controller;

import static dev.respawn.controller.OperatorFixture.at;
import static dev.respawn.controller.OperatorFixture.hasCondition;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.sandbox.Run;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** api.md §6: the respawn.dev/restart and respawn.dev/resume annotations. */
class OperatorActionScenarioTest extends MockClusterScenario {
  static final String RESTART = AgentInstance.RESTART_ANNOTATION;
  static final String RESUME = AgentInstance.RESUME_ANNOTATION;

  @Test
  void aManualRestartEndsTheLiveRunOnceAndIsNeverActedOnAgain() {
    f.policy("fast", "backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}");
    f.kubelet.script("manual", Run.runForever(), Run.runForever());
    f.instance("manual", "fast");
    f.awaitInstance("manual", i -> at(i, 1, Phase.Running));

    f.annotate("manual", RESTART, "req-1");
    AgentInstance restarted = f.awaitInstance("manual", i -> at(i, 2, Phase.Running));
    var st = restarted.getStatus();
    assertThat(st.handledRequests.get("restart")).isEqualTo("req-1");
    assertThat(st.lastRestart.requestId).isEqualTo("req-1");
    assertThat(st.lastRestart.kind).isEqualTo("Manual");
    assertThat(st.lastRestart.previousPod).isEqualTo("manual-1");
    assertThat(st.attempt).isZero();
    assertThat(st.circuitBreaker.failureCount).isZero();
    assertThat(st.lastFailure).isNull();
    assertThat(st.restarts).isEqualTo(1);
    assertThat(f.pod("manual-1")).as("the live run was ended").isNull();
    assertThat(f.get("manual").getMetadata().getAnnotations()).containsEntry(RESTART, "req-1");
    f.awaitEvent("manual", e -> {
      assertThat(e.getReason()).isEqualTo("RestartRequested");
      assertThat(e.getType()).isEqualTo("Normal");
    });

    // the same id again, however often the instance is reconciled, is not a new request
    f.restartOperator();
    f.edit("manual", i -> {
      i.getSpec().task = "TASK-31-2"; // a spec change: reconciled for sure
      return i;
    });
    f.awaitInstance("manual", i -> i.getStatus().observedGeneration != null
        && i.getStatus().observedGeneration.equals(i.getMetadata().getGeneration()));
    f.holdsFor(Duration.ofMillis(700), () -> f.get("manual"), i -> at(i, 2, Phase.Running));
    assertThat(f.podsEverCreated("manual")).containsExactly("manual-1", "manual-2");

    // a new id is a new request
    f.annotate("manual", RESTART, "req-2");
    AgentInstance again = f.awaitInstance("manual", i -> at(i, 3, Phase.Running));
    assertThat(again.getStatus().handledRequests.get("restart")).isEqualTo("req-2");
    assertThat(again.getStatus().lastRestart.requestId).isEqualTo("req-2");
    assertThat(f.podsEverCreated("manual")).containsExactly("manual-1", "manual-2", "manual-3");
  }

  /**
   * §2 "Recovering: True while a failure sequence is open": a restart request opens none, also while its next run
   * is not started yet (the old pod going, the new one not running).
   */
  @Test
  void aManualRestartOpensNoFailureSequence() {
    f.policy("fast", "backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}");
    f.kubelet.script("calm", Run.runForever(), Run.stuckPending("ContainerCreating", "pulling"));
    f.instance("calm", "fast");
    f.awaitInstance("calm", i -> at(i, 1, Phase.Running));
    f.annotate("calm", RESTART, "req-calm");
    AgentInstance waiting = f.awaitInstance("calm", i -> i.getStatus().lastRestart != null
        && "req-calm".equals(i.getStatus().lastRestart.requestId));
    assertThat(waiting.getStatus().attempt).isZero();
    assertThat(hasCondition(waiting, "Recovering", "False", "Stable")).as(f.describe("calm")).isTrue();
    AgentInstance starting = f.awaitInstance("calm", i -> at(i, 2, Phase.Starting));
    assertThat(hasCondition(starting, "Recovering", "False", "Stable")).isTrue();
  }

  @Test
  void aManualRestartSkipsTheBackoffWait() {
    f.policy("hour", "backoff: {type: Exponential, initialDelay: 1h, maxDelay: 1h}");
    f.kubelet.script("skip", Run.exit(1), Run.runForever());
    f.instance("skip", "hour");
    f.awaitInstance("skip", i -> i.getStatus().phase == Phase.Backoff);
    f.annotate("skip", RESTART, "now-please");
    AgentInstance running = f.awaitInstance("skip", i -> at(i, 2, Phase.Running));
    assertThat(running.getStatus().lastRestart.requestId).isEqualTo("now-please");
    assertThat(running.getStatus().lastRestart.kind).isEqualTo("Manual");
    // a restart is not a resume: the failure sequence goes on
    assertThat(running.getStatus().attempt).isEqualTo(1);
    assertThat(f.podsEverCreated("skip")).containsExactly("skip-1", "skip-2");
  }

  /**
   * A restart asked for before the first run (the policy not there yet) is acted on by that run: status names
   * its pod and start, as `restart --wait` and `verify-restarted` read it; no restart is counted.
   */
  @Test
  void aRestartRequestedBeforeTheFirstRunIsRecordedAsThatRunsStart() {
    f.kubelet.script("early", Run.runForever());
    f.instance("early", "later");
    f.awaitInstance("early", i -> OperatorFixture.hasCondition(i, "Ready", "False", "PolicyNotFound"));
    f.annotate("early", RESTART, "r-early");
    f.policy("later", "backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}");
    AgentInstance running = f.awaitInstance("early", i -> OperatorFixture.at(i, 1, Phase.Running));
    assertThat(running.getStatus().lastRestart.requestId).isEqualTo("r-early");
    assertThat(running.getStatus().lastRestart.pod).isEqualTo("early-1");
    assertThat(running.getStatus().lastRestart.startedAt).isNotNull();
    assertThat(running.getStatus().restarts).isZero();
  }

  /** The same for an instance created suspended: its unsuspend is what started its first run. */
  @Test
  void theUnsuspendOfAnInstanceCreatedSuspendedNamesItsFirstPod() {
    f.policy("fast", "backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}");
    f.kubelet.script("later", Run.runForever());
    f.instance("later", "fast", spec -> spec.suspend = true);
    f.awaitInstance("later", i -> i.getStatus() != null && i.getStatus().phase == Phase.Suspended);
    f.edit("later", i -> {
      i.getSpec().suspend = false;
      return i;
    });
    AgentInstance running = f.awaitInstance("later", i -> OperatorFixture.at(i, 1, Phase.Running));
    assertThat(running.getStatus().lastRestart.pod).isEqualTo("later-1");
    assertThat(running.getStatus().lastRestart.startedAt).isNotNull();
  }

  @Test
  void aManualRestartIsRefusedInATerminalPhase() {
    f.policy("fast", "backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}");
    f.kubelet.script("done", Run.exit(0), Run.runForever());
    f.instance("done", "fast");
    f.awaitInstance("done", i -> i.getStatus().phase == Phase.Succeeded);

    f.annotate("done", RESTART, "too-late");
    await().atMost(OperatorFixture.AT_MOST).pollInterval(OperatorFixture.POLL).until(() -> f.events("done"),
        events -> events.stream().anyMatch(e -> "RestartRequested".equals(e.getReason())
            && "Warning".equals(e.getType()) && e.getNote().contains("too-late") && e.getNote().contains("refused")));
    f.holdsFor(Duration.ofMillis(700), () -> f.get("done"), i -> i.getStatus().phase == Phase.Succeeded);
    assertThat(f.podsEverCreated("done")).containsExactly("done-1");
    assertThat(f.get("done").getStatus().handledRequests.get("restart")).isEqualTo("too-late");
    // status says it was refused, and why, for as long as no later restart request is acted on (Events expire)
    var refused = f.get("done").getStatus().refusedRequests.get("restart");
    assertThat(refused.id).isEqualTo("too-late");
    assertThat(refused.message).isEqualTo("phase Succeeded is terminal; use respawn.dev/resume (kubectl respawn "
        + "resume done --force)");
  }

  @Test
  void aResumeFromEscalatedStartsANewLifecycle() {
    f.policy("none-left", """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
        maxRetries: 1
        circuitBreaker: {failureThreshold: 2}
        restartLimit: {maxRestarts: 5, window: 1h}
        """);
    f.kubelet.script("esc", Run.exit(1), Run.exit(1), Run.runForever());
    f.instance("esc", "none-left");
    AgentInstance escalated = f.awaitInstance("esc", i -> i.getStatus().phase == Phase.Escalated);
    assertThat(escalated.getStatus().attempt).isEqualTo(2);
    assertThat(escalated.getStatus().circuitBreaker.state).isEqualTo(CircuitState.Open);

    f.annotate("esc", RESUME, "res-1");
    AgentInstance resumed = f.awaitInstance("esc", i -> at(i, 3, Phase.Running));
    var st = resumed.getStatus();
    assertThat(st.attempt).isZero();
    assertThat(st.circuitBreaker.state).isEqualTo(CircuitState.Closed);
    assertThat(st.circuitBreaker.failureCount).isZero();
    assertThat(st.terminalReason).isNull();
    assertThat(st.handledRequests.get("resume")).isEqualTo("res-1");
    assertThat(st.lastRestart.kind).isEqualTo("Resume");
    assertThat(st.lastRestart.requestId).isEqualTo("res-1");
    assertThat(st.lastRestart.previousPod).isEqualTo("esc-2");
    assertThat(escalated.getStatus().recentRestarts).hasSize(1);
    assertThat(st.recentRestarts).as("cleared, then the resume's own restart")
        .containsExactly(st.lastRestart.startedAt);
    assertThat(hasCondition(resumed, "Escalated", "False", "None")).isTrue();
    assertThat(f.get("esc").getMetadata().getAnnotations()).containsEntry(RESUME, "res-1");
    f.awaitInstance("esc", i -> hasCondition(i, "Ready", "True", "Healthy"));
    f.holdsFor(Duration.ofMillis(700), () -> f.podsEverCreated("esc"), p -> p.size() == 3);
  }

  @Test
  void aResumeFromFailedStartsANewLifecycle() {
    f.policy("fast", "backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}");
    f.kubelet.script("failed", Run.exit(2, "Error", "invalid_configuration: no model"), Run.runForever());
    f.instance("failed", "fast");
    f.awaitInstance("failed", i -> i.getStatus().phase == Phase.Failed);
    f.annotate("failed", RESUME, "fixed-config");
    AgentInstance resumed = f.awaitInstance("failed", i -> at(i, 2, Phase.Running));
    assertThat(resumed.getStatus().attempt).isZero();
    assertThat(resumed.getStatus().terminalReason).isNull();
    assertThat(resumed.getStatus().handledRequests.get("resume")).isEqualTo("fixed-config");
  }
}

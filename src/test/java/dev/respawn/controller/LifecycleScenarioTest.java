package dev.respawn.controller;

import static dev.respawn.controller.OperatorFixture.at;
import static dev.respawn.controller.OperatorFixture.condition;
import static dev.respawn.controller.OperatorFixture.hasCondition;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.api.v1alpha1.TerminalReason;
import dev.respawn.policy.QuietStart;
import dev.respawn.sandbox.Run;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * api.md §3 steps 1–3 and 5: suspend, a clean exit, the agent's own restart request (exit code 42), and
 * a pod that cannot start.
 */
class LifecycleScenarioTest extends MockClusterScenario {
  void suspend(String name, boolean suspend) {
    f.edit(name, i -> {
      i.getSpec().suspend = suspend;
      return i;
    });
  }

  @Test
  void suspendDeletesThePodAndClearingItStartsANewRun() {
    f.policy("fast", "backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}");
    f.kubelet.script("sus", Run.runForever(), Run.runForever());
    f.instance("sus", "fast");
    f.awaitInstance("sus", i -> at(i, 1, Phase.Running));

    suspend("sus", true);
    AgentInstance suspended = f.awaitInstance("sus", i -> i.getStatus().phase == Phase.Suspended);
    assertThat(suspended.getStatus().terminalReason).isEqualTo(TerminalReason.OperatorShutdown);
    assertThat(suspended.getStatus().nextRestartAt).isNull();
    assertThat(hasCondition(suspended, "Ready", "False", "PodNotRunning")).isTrue();
    await().atMost(OperatorFixture.AT_MOST).until(() -> f.pod("sus-1") == null);
    // suspended stays suspended: nothing is restarted
    f.holdsFor(Duration.ofMillis(700), () -> f.podsEverCreated("sus"), p -> p.size() == 1);
    assertThat(f.get("sus").getStatus().phase).isEqualTo(Phase.Suspended);
    assertThat(f.get("sus").getStatus().history).singleElement()
        .satisfies(r -> assertThat(r.outcome).isEqualTo("Stopped"));

    suspend("sus", false);
    AgentInstance resumed = f.awaitInstance("sus", i -> at(i, 2, Phase.Running));
    assertThat(resumed.getStatus().terminalReason).isNull();
    assertThat(resumed.getStatus().attempt).isZero();
    assertThat(resumed.getStatus().lastRestart.previousPod).isEqualTo("sus-1");
    assertThat(resumed.getStatus().lastRestart.pod).isEqualTo("sus-2");
    assertThat(f.podsEverCreated("sus")).containsExactly("sus-1", "sus-2");
  }

  @Test
  void suspendWhileInBackoffStartsNothing() {
    f.policy("slow", "backoff: {type: Exponential, initialDelay: 1s, maxDelay: 1s}");
    f.kubelet.script("sus-wait", Run.exit(1), Run.runForever());
    f.instance("sus-wait", "slow");
    f.awaitInstance("sus-wait", i -> i.getStatus().phase == Phase.Backoff);
    suspend("sus-wait", true);
    f.awaitInstance("sus-wait", i -> i.getStatus().phase == Phase.Suspended);
    // the 1 s backoff has passed long before this ends: still one pod
    f.holdsFor(Duration.ofMillis(1500), () -> f.podsEverCreated("sus-wait"), p -> p.size() == 1);
    assertThat(f.get("sus-wait").getStatus().nextRestartAt).isNull();
  }

  @Test
  void exitZeroSucceedsAndRestartsNothing() {
    f.policy("fast", "backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}");
    f.kubelet.script("clean", Run.exit(0).after(Duration.ofMillis(100)), Run.runForever());
    f.instance("clean", "fast");
    AgentInstance done = f.awaitInstance("clean", i -> i.getStatus().phase == Phase.Succeeded);
    var st = done.getStatus();
    assertThat(st.terminalReason).isEqualTo(TerminalReason.CleanExit);
    assertThat(st.restarts).isZero();
    assertThat(st.attempt).isZero();
    assertThat(st.lastFailure).isNull();
    assertThat(st.history).singleElement().satisfies(r -> {
      assertThat(r.outcome).isEqualTo("Success");
      assertThat(r.exitCode).isZero();
    });
    assertThat(hasCondition(done, "Escalated", "False", "None")).isTrue();
    assertThat(hasCondition(done, "Ready", "False", "PodNotRunning")).isTrue();
    f.holdsFor(Duration.ofMillis(700), () -> f.podsEverCreated("clean"), p -> p.size() == 1);
    assertThat(f.pod("clean-1").getStatus().getPhase()).isEqualTo("Succeeded");
  }

  /** api.md §2: with a sidecar still running, the pod of the clean exit is kept for kubectl logs all the same. */
  @Test
  void exitZeroWhileASidecarRunsKeepsThePodForLogs() {
    f.policy("fast", "backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}");
    f.kubelet.script("side0", Run.runForever());
    f.instance("side0", "fast", spec -> spec.template = new PodTemplateSpecBuilder().withNewSpec()
        .addNewContainer().withName("agent").withImage("registry.example/agents/coder:1.4").endContainer()
        .addNewContainer().withName("proxy").withImage("registry.example/proxy:1").endContainer()
        .endSpec().build());
    f.awaitInstance("side0", i -> at(i, 1, Phase.Running));
    f.kubelet.terminateContainer("side0-1", "agent", 0, "Completed", "");
    f.awaitInstance("side0", i -> i.getStatus().phase == Phase.Succeeded);
    f.holdsFor(Duration.ofMillis(1500), () -> f.pod("side0-1") != null, kept -> kept);
  }

  /** A run whose pod went from Pending straight to Failed (never seen Running) started all the same. */
  @Test
  void aRunNeverSeenRunningHasItsPodsStartInHistory() {
    f.policy("fast", "backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}");
    f.kubelet.script("nosee", Run.stuckPending("ContainerCreating", ""), Run.runForever());
    f.instance("nosee", "fast");
    await().atMost(OperatorFixture.AT_MOST).until(() -> f.pod("nosee-1") != null
        && f.pod("nosee-1").getStatus() != null && "Pending".equals(f.pod("nosee-1").getStatus().getPhase()));
    f.kubelet.terminate("nosee-1", 1, "Error", "boom");
    AgentInstance running = f.awaitInstance("nosee", i -> at(i, 2, Phase.Running));
    assertThat(running.getStatus().history).singleElement().satisfies(r -> {
      assertThat(r.pod).isEqualTo("nosee-1");
      assertThat(r.startedAt).as(f.describe("nosee")).isNotNull();
    });
  }

  @Test
  void exitCode42RestartsAtOnceWithoutCountingAFailure() {
    // a one-hour backoff and a circuit that opens on the first failure: a restart within the test
    // proves exit code 42 was not counted as one
    f.policy("hour", """
        backoff: {type: Exponential, initialDelay: 1h, maxDelay: 1h}
        circuitBreaker: {failureThreshold: 1}
        """);
    f.kubelet.script("rr", Run.exit(42, "Error", "context window full: restart me"), Run.runForever());
    f.instance("rr", "hour");
    AgentInstance running = f.awaitInstance("rr", i -> at(i, 2, Phase.Running));
    var st = running.getStatus();
    assertThat(st.attempt).isZero();
    assertThat(st.restarts).isEqualTo(1);
    assertThat(st.circuitBreaker.state).isEqualTo(CircuitState.Closed);
    assertThat(st.circuitBreaker.failureCount).isZero();
    assertThat(st.circuitBreaker.trips).isZero();
    assertThat(st.lastFailure).isNull();
    assertThat(st.lastRestart.kind).isEqualTo("RestartRequest");
    assertThat(st.lastRestart.reason).isEqualTo("context window full: restart me");
    assertThat(st.lastRestart.previousPod).isEqualTo("rr-1");
    assertThat(st.lastRestart.pod).isEqualTo("rr-2");
    assertThat(st.history).singleElement().satisfies(r -> {
      assertThat(r.outcome).isEqualTo("RestartRequest");
      assertThat(r.exitCode).isEqualTo(42);
    });
    assertThat(hasCondition(running, "Recovering", "False", "Stable")).isTrue();
    assertThat(f.podsEverCreated("rr")).containsExactly("rr-1", "rr-2");
  }

  @Test
  void aCustomRestartRequestExitCodeIsHonoured() {
    f.policy("custom", """
        backoff: {type: Exponential, initialDelay: 1h, maxDelay: 1h}
        restartRequestExitCode: 7
        """);
    f.kubelet.script("rr7", Run.exit(7), Run.runForever());
    f.instance("rr7", "custom");
    AgentInstance running = f.awaitInstance("rr7", i -> at(i, 2, Phase.Running));
    assertThat(running.getStatus().attempt).isZero();
    assertThat(running.getStatus().lastRestart.kind).isEqualTo("RestartRequest");
    assertThat(running.getStatus().lastRestart.reason).isEqualTo("exit code 7");
  }

  @Test
  void aPodThatCannotStartShowsWhyAndFailsOnlyAfterTheStartupGrace() {
    f.policy("grace", """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
        heartbeat: {timeout: 30s, startupGrace: 3s}
        """);
    f.kubelet.script("pull", Run.stuckPending("ErrImagePull", "image registry.example/agents/coder:1.4 not found"),
        Run.runForever().heartbeat(Duration.ofMillis(200)));
    f.instance("pull", "grace");
    AgentInstance waiting = f.awaitInstance("pull", i -> hasCondition(i, "Ready", "False", "ErrImagePull"));
    assertThat(waiting.getStatus().run).isEqualTo(1);
    assertThat(waiting.getStatus().attempt).isZero();
    assertThat(condition(waiting, "Ready").message).contains("not found");
    AgentInstance next = f.awaitInstance("pull", i -> at(i, 2, Phase.Running));
    assertThat(next.getStatus().lastFailure.pod).isEqualTo("pull-1");
    assertThat(next.getStatus().lastFailure.failureReason).isEqualTo("InitializationFailed");
    assertThat(next.getStatus().attempt).isEqualTo(1);
    assertThat(f.pod("pull-1")).isNull();
  }

  /**
   * An instance being deleted (a foreground deletion, as `kubectl delete --cascade=foreground` and Argo CD's
   * pruning ask for) has its pods deleted first by the garbage collector: that is no failure, and nothing new
   * is started for an instance that is going away.
   */
  @Test
  void anInstanceBeingDeletedStartsNoNewPod() {
    f.policy("fast", "backoff: {type: Immediate}");
    f.kubelet.script("fg", Run.runForever(), Run.runForever());
    f.instance("fg", "fast");
    f.awaitInstance("fg", i -> at(i, 1, Phase.Running));
    f.edit("fg", i -> {
      i.getMetadata().setFinalizers(new java.util.ArrayList<>(java.util.List.of("foregroundDeletion")));
      return i;
    });
    f.client.resources(AgentInstance.class).inNamespace(OperatorFixture.NS).withName("fg").delete();
    await().atMost(OperatorFixture.AT_MOST).until(() -> f.get("fg").getMetadata().getDeletionTimestamp() != null);
    String before = f.get("fg").getMetadata().getResourceVersion();
    f.client.pods().inNamespace(OperatorFixture.NS).withName("fg-1").delete(); // what the garbage collector does
    await().atMost(OperatorFixture.AT_MOST).until(() -> f.pod("fg-1") == null);
    f.holdsFor(Duration.ofSeconds(2), () -> f.podsEverCreated("fg"), p -> p.size() == 1);
    assertThat(f.get("fg").getMetadata().getResourceVersion()).as("nothing written for it").isEqualTo(before);
  }

  /**
   * api.md §3 step 5, "a run healthy for resetAfter": a run that was not Ready for longer than resetAfter does
   * not end its failure sequence the moment it becomes Ready, but resetAfter later.
   */
  @Test
  void resetAfterCountsFromWhenTheRunBecameReadyNotFromItsStart() {
    f.policy("plain", """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
        resetAfter: 2s
        """);
    f.kubelet.script("nr", Run.exit(1), Run.runForever());
    f.instance("nr", "plain");
    f.awaitInstance("nr", i -> at(i, 2, Phase.Running) && i.getStatus().attempt == 1);
    podReady("nr-2", false);
    f.awaitInstance("nr", i -> hasCondition(i, "Ready", "False", "PodNotReady"));
    // not Ready for longer than resetAfter: the sequence stays open
    f.holdsFor(Duration.ofSeconds(3), () -> f.get("nr").getStatus().attempt, a -> a == 1);
    podReady("nr-2", true);
    AgentInstance ready = f.awaitInstance("nr", i -> hasCondition(i, "Ready", "True", "Healthy"));
    java.time.Instant readyAt = java.time.Instant.parse(condition(ready, "Ready").lastTransitionTime);
    AgentInstance closed = f.awaitInstance("nr", i -> i.getStatus().attempt == 0);
    assertThat(java.time.Instant.parse(closed.getStatus().circuitBreaker.lastSuccessAt))
        .as("healthy for resetAfter since it became Ready").isAfterOrEqualTo(readyAt.plusSeconds(2));
    // Events are written after status, on a thread of their own
    await().atMost(OperatorFixture.AT_MOST).until(() -> f.events("nr").stream()
        .anyMatch(e -> "RestartSucceeded".equals(e.getReason())));
  }

  private void podReady(String pod, boolean ready) {
    f.client.pods().inNamespace(OperatorFixture.NS).withName(pod).editStatus(p -> {
      p.getStatus().getConditions().stream().filter(c -> "Ready".equals(c.getType()))
          .forEach(c -> c.setStatus(ready ? "True" : "False"));
      return p;
    });
  }

  @Test
  void aPodNothingEverTouchesFailsWhenTheStartupGraceRunsOut() {
    // a bare API server: no scheduler or kubelet changes the pod, so no event brings the operator back
    f.kubelet.close();
    f.policy("grace", """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
        heartbeat: {timeout: 30s, startupGrace: 2s}
        """);
    f.instance("idle", "grace");
    f.awaitInstance("idle", i -> at(i, 1, Phase.Starting));
    AgentInstance failed = f.awaitInstance("idle", i -> i.getStatus().lastFailure != null);
    assertThat(failed.getStatus().lastFailure.pod).isEqualTo("idle-1");
    assertThat(failed.getStatus().lastFailure.failureReason).isEqualTo("InitializationFailed");
    assertThat(failed.getStatus().attempt).isEqualTo(1);
    // and so does the next run's, whose status was not even written when its pod was made (api.md §12)
    AgentInstance again = f.awaitInstance("idle", i -> i.getStatus().attempt != null && i.getStatus().attempt == 2);
    // (once seen in CI: attempt 2 with idle-1 as the last failure; the whole story is in the message)
    assertThat(again.getStatus().lastFailure.pod).as(f.describe("idle") + "events: " + f.events("idle").stream()
        .map(e -> e.getReason() + ": " + e.getNote()).toList()).isEqualTo("idle-2");
    assertThat(f.podsEverCreated("idle")).startsWith("idle-1", "idle-2");
  }

  @Test
  void aRestartedPodThatNothingStartsIsShownStartingSoonAfterItIsMade() {
    f.policy("fast", "backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}");
    f.kubelet.script("slow", Run.exit(1), Run.runForever().startAfter(Duration.ofMinutes(5)));
    f.instance("slow", "fast");
    await().atMost(OperatorFixture.AT_MOST).until(() -> f.pod("slow-2") != null);
    // api.md §3.5: the next pod is created (phase Starting, then Running); a start is written with the
    // run's first sign, or after QuietStart.QUIET_START when its pod shows none
    AgentInstance starting = await().atMost(QuietStart.QUIET_START.plusSeconds(4))
        .until(() -> f.get("slow"), i -> at(i, 2, Phase.Starting));
    assertThat(starting.getStatus().currentPod).isEqualTo("slow-2");
    assertThat(starting.getStatus().lastRestart.pod).isEqualTo("slow-2");
    assertThat(f.pod("slow-2").getStatus().getPhase()).isEqualTo("Pending");
  }
}

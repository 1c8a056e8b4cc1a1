package dev.respawn.controller;

import static dev.respawn.controller.OperatorFixture.at;
import static dev.respawn.controller.OperatorFixture.condition;
import static dev.respawn.controller.OperatorFixture.hasCondition;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.api.v1alpha1.InterruptionClass;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.api.v1alpha1.StatusCondition;
import dev.respawn.api.v1alpha1.TerminalReason;
import dev.respawn.sandbox.Run;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * api.md §3 step 4, the branches that end a failure sequence or skip counting it (a, b, c, d, f, i) and
 * the built-in caps and classes of §4 (OOMKilled, eviction), through the Kubernetes API only.
 */
class FailureDecisionScenarioTest extends MockClusterScenario {
  static final Duration QUIET = Duration.ofMillis(700);

  /** No further pod appears for a while: the decision was final. */
  void noMorePodsThan(String instance, int count) {
    f.holdsFor(QUIET, () -> f.podsEverCreated(instance), created -> created.size() == count);
  }

  @Test
  void backoffNoneFailsTheInstanceWithPolicyNone() {
    f.policy("none", "backoff: {type: None}");
    f.kubelet.script("a-none", Run.exit(1, "Error", "network_timeout: upstream"));
    f.instance("a-none", "none");
    AgentInstance failed = f.awaitInstance("a-none", i -> i.getStatus().phase == Phase.Failed);
    assertThat(failed.getStatus().lastDecision.reasonCode).isEqualTo("policy_none");
    assertThat(failed.getStatus().lastDecision.action).isEqualTo("Fail");
    assertThat(failed.getStatus().restarts).isZero();
    assertThat(failed.getStatus().nextRestartAt).isNull();
    assertThat(condition(failed, "Escalated").status).isEqualTo("True");
    assertThat(condition(failed, "Ready").status).isEqualTo("False");
    assertThat(condition(failed, "Escalated").message).contains("a-none-1", "policy_none");
    noMorePodsThan("a-none", 1);
    assertThat(f.podsEverCreated("a-none")).containsExactly("a-none-1");
  }

  @Test
  void permanentMessageFailsWithContextAndChecklist() {
    f.policy("fast", "backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}");
    f.kubelet.script("b-perm", Run.exit(1, "Error", "syntax_error: unexpected token at line 3"));
    f.instance("b-perm", "fast");
    AgentInstance failed = f.awaitInstance("b-perm", i -> i.getStatus().phase == Phase.Failed);
    var st = failed.getStatus();
    assertThat(st.terminalReason).isEqualTo(TerminalReason.UnrecoverableError);
    assertThat(st.lastDecision.reasonCode).isEqualTo("non_retryable_failure");
    assertThat(st.lastFailure.failureClass).isEqualTo(InterruptionClass.ToolFailure);
    assertThat(st.lastFailure.retryable).isFalse();
    assertThat(st.lastFailure.exitCode).isEqualTo(1);
    assertThat(st.lastFailure.pod).isEqualTo("b-perm-1");
    StatusCondition escalated = condition(failed, "Escalated");
    assertThat(escalated.status).isEqualTo("True");
    assertThat(escalated.reason).isEqualTo("UnrecoverableError");
    // the last failure's context ...
    assertThat(escalated.message).contains("b-perm-1", "ToolFailure", "exit code 1",
        "syntax_error: unexpected token at line 3");
    // ... and the remediation checklist: what to inspect and how to continue
    assertThat(escalated.message).contains("kubectl logs b-perm-1", "respawn.dev/resume",
        "kubectl respawn resume b-perm --force");
    StatusCondition ready = condition(failed, "Ready");
    assertThat(ready.status).isEqualTo("False");
    assertThat(ready.message).contains("b-perm-1", "syntax_error", "kubectl logs b-perm-1");
    noMorePodsThan("b-perm", 1);
    // the finished pod is kept for kubectl logs
    assertThat(f.pod("b-perm-1")).isNotNull();
    f.awaitEvent("b-perm", e -> {
      assertThat(e.getReason()).isEqualTo("Escalated");
      assertThat(e.getType()).isEqualTo("Warning");
      assertThat(e.getNote()).contains("b-perm-1", "syntax_error", "kubectl logs b-perm-1", "respawn.dev/resume");
    });
  }

  @Test
  void podFailedWithoutTerminationStateEscalatesFailClosed() {
    f.policy("fast", "backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}");
    f.kubelet.script("c-unknown", Run.runForever());
    f.instance("c-unknown", "fast");
    f.awaitInstance("c-unknown", i -> at(i, 1, Phase.Running));
    // the pod fails with nothing usable: no container state, no reason, no message
    f.client.pods().inNamespace(OperatorFixture.NS).withName("c-unknown-1").editStatus(p -> {
      p.getStatus().setPhase("Failed");
      p.getStatus().setReason(null);
      p.getStatus().setMessage(null);
      p.getStatus().setContainerStatuses(List.of());
      return p;
    });
    AgentInstance escalated = f.awaitInstance("c-unknown", i -> i.getStatus().phase == Phase.Escalated);
    assertThat(escalated.getStatus().lastDecision.reasonCode).isEqualTo("resume_unknown_interruption_class");
    assertThat(escalated.getStatus().lastFailure.failureClass).isEqualTo(InterruptionClass.Unknown);
    assertThat(condition(escalated, "Escalated").status).isEqualTo("True");
    assertThat(condition(escalated, "Escalated").message).contains("c-unknown-1", "Unknown");
    noMorePodsThan("c-unknown", 1);
  }

  @Test
  void ignoreRuleRestartsAtOnceWithoutCountingAFailure() {
    // a one-hour backoff: a restart within the test proves the rule skipped it
    f.policy("ignore", """
        backoff: {type: Exponential, initialDelay: 1h, maxDelay: 1h}
        failureRules:
        - name: flaky-tool
          match: {exitCodes: [3]}
          action: Ignore
        """);
    f.kubelet.script("d-ignore", Run.exit(3, "Error", "flaky tool"), Run.runForever());
    f.instance("d-ignore", "ignore");
    AgentInstance running = f.awaitInstance("d-ignore", i -> at(i, 2, Phase.Running));
    var st = running.getStatus();
    assertThat(st.attempt).isZero();
    assertThat(st.restarts).isEqualTo(1);
    assertThat(st.circuitBreaker.failureCount).isZero();
    assertThat(st.circuitBreaker.state).isEqualTo(CircuitState.Closed);
    assertThat(st.lastRestart.kind).isEqualTo("Ignored");
    assertThat(st.lastRestart.pod).isEqualTo("d-ignore-2");
    assertThat(st.history).singleElement().satisfies(r -> {
      assertThat(r.outcome).isEqualTo("Ignored");
      assertThat(r.exitCode).isEqualTo(3);
    });
    assertThat(f.podsEverCreated("d-ignore")).containsExactly("d-ignore-1", "d-ignore-2");
    // no failure, so no Warning: the decision is told as the restart it schedules
    f.awaitEvent("d-ignore", e -> {
      assertThat(e.getReason()).isEqualTo("RestartScheduled");
      assertThat(e.getType()).isEqualTo("Normal");
      assertThat(e.getNote()).contains("ignored by rule flaky-tool");
    });
  }

  @Test
  void maxRetriesExhaustedEscalatesAfterExactlyMaxRetriesRestarts() {
    f.policy("two", """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
        maxRetries: 2
        """);
    f.kubelet.script("f-exhaust", Run.exit(1), Run.exit(1), Run.exit(1), Run.runForever());
    f.instance("f-exhaust", "two");
    AgentInstance escalated = f.awaitInstance("f-exhaust", i -> i.getStatus().phase == Phase.Escalated);
    var st = escalated.getStatus();
    assertThat(st.lastDecision.reasonCode).isEqualTo("retries_exhausted");
    assertThat(st.terminalReason).isEqualTo(TerminalReason.RestartLimitExceeded);
    assertThat(st.attempt).isEqualTo(3);
    assertThat(st.restarts).isEqualTo(2);
    assertThat(st.lastDecision.maxAttempts).isEqualTo(2);
    assertThat(condition(escalated, "Escalated").message).contains("f-exhaust-3", "retries_exhausted");
    noMorePodsThan("f-exhaust", 3);
    assertThat(f.podsEverCreated("f-exhaust")).containsExactly("f-exhaust-1", "f-exhaust-2", "f-exhaust-3");
    assertThat(f.kubelet.played()).filteredOn(p -> p.startsWith("f-exhaust-")).hasSize(3);
  }

  @Test
  void restartLimitWindowEscalates() {
    f.policy("window", """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
        maxRetries: 10
        restartLimit: {maxRestarts: 2, window: 1h}
        """);
    f.kubelet.script("i-window", Run.exit(1), Run.exit(1), Run.exit(1), Run.runForever());
    f.instance("i-window", "window");
    AgentInstance escalated = f.awaitInstance("i-window", i -> i.getStatus().phase == Phase.Escalated);
    var st = escalated.getStatus();
    assertThat(st.lastDecision.reasonCode).isEqualTo("restart_limit_exceeded");
    assertThat(st.terminalReason).isEqualTo(TerminalReason.RestartLimitExceeded);
    assertThat(st.restarts).isEqualTo(2);
    assertThat(st.recentRestarts).hasSize(2);
    assertThat(st.attempt).isEqualTo(3);
    assertThat(hasCondition(escalated, "Escalated", "True", "RestartLimitExceeded")).isTrue();
    noMorePodsThan("i-window", 3);
  }

  @Test
  void anExit42RefusedByAFullWindowEscalatesAndItsHistorySaysSo() {
    f.policy("win", """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
        restartLimit: {maxRestarts: 1, window: 1h}
        """);
    f.kubelet.script("w42", Run.exit(42, "Error", "reload"), Run.exit(42, "Error", "reload again"));
    f.instance("w42", "win");
    AgentInstance escalated = f.awaitInstance("w42", i -> i.getStatus().phase == Phase.Escalated);
    var st = escalated.getStatus();
    assertThat(st.lastDecision.reasonCode).isEqualTo("restart_limit_exceeded");
    assertThat(st.lastDecision.maxAttempts).as("no open sequence: the policy's maxRetries").isEqualTo(3);
    assertThat(st.history).extracting(r -> r.reasonCode).containsExactly("restart_requested", "restart_limit_exceeded");
    noMorePodsThan("w42", 2);
  }

  /** api.md §2: a finished pod is kept for kubectl logs until the next run has started, sidecars or not. */
  @Test
  void theSidecarPodOfAFailedRunIsKeptForLogsUntilAResumeStartsTheNextRun() {
    f.policy("fast", "backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}");
    f.kubelet.script("side", Run.runForever(), Run.runForever());
    f.instance("side", "fast", spec -> spec.template = new PodTemplateSpecBuilder().withNewSpec()
        .addNewContainer().withName("agent").withImage("registry.example/agents/coder:1.4").endContainer()
        .addNewContainer().withName("proxy").withImage("registry.example/proxy:1").endContainer()
        .endSpec().build());
    f.awaitInstance("side", i -> at(i, 1, Phase.Running));
    f.kubelet.terminateContainer("side-1", "agent", 1, "Error", "syntax_error: bad plan");
    AgentInstance failed = f.awaitInstance("side", i -> i.getStatus().phase == Phase.Failed);
    assertThat(condition(failed, "Escalated").message).contains("kubectl logs side-1");
    f.holdsFor(QUIET, () -> f.pod("side-1") != null, kept -> kept);
    f.annotate("side", "respawn.dev/resume", "r1");
    AgentInstance resumed = f.awaitInstance("side", i -> at(i, 2, Phase.Running));
    assertThat(resumed.getStatus().history).extracting(r -> r.outcome).containsExactly("Failure");
    await().atMost(OperatorFixture.AT_MOST).until(() -> f.pod("side-1") == null);
  }

  @Test
  void oomKilledIsCappedAtTwoRetries() {
    f.policy("five", """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
        maxRetries: 5
        """);
    f.kubelet.script("k-oom", Run.oomKilled(), Run.oomKilled(), Run.oomKilled(), Run.runForever());
    f.instance("k-oom", "five");
    AgentInstance escalated = f.awaitInstance("k-oom", i -> i.getStatus().phase == Phase.Escalated);
    var st = escalated.getStatus();
    assertThat(st.lastDecision.reasonCode).isEqualTo("retries_exhausted");
    assertThat(st.lastDecision.maxAttempts).isEqualTo(2);
    assertThat(st.restarts).isEqualTo(2);
    assertThat(st.lastFailure.failureClass).isEqualTo(InterruptionClass.ProcessCrash);
    assertThat(st.lastFailure.failureReason).isEqualTo("ResourceExhaustion");
    assertThat(st.lastFailure.reason).isEqualTo("OOMKilled");
    assertThat(st.lastFailure.exitCode).isEqualTo(137);
    noMorePodsThan("k-oom", 3);
  }

  @Test
  void evictionIsAContextResetAndRestarts() {
    f.policy("fast", "backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}");
    f.kubelet.script("k-evict", Run.evicted().after(Duration.ofMillis(100)), Run.runForever());
    f.instance("k-evict", "fast");
    AgentInstance running = f.awaitInstance("k-evict", i -> at(i, 2, Phase.Running));
    var st = running.getStatus();
    assertThat(st.lastFailure.failureClass).isEqualTo(InterruptionClass.ContextReset);
    assertThat(st.lastFailure.reason).isEqualTo("Evicted");
    assertThat(st.lastFailure.pod).isEqualTo("k-evict-1");
    assertThat(st.attempt).isEqualTo(1);
    assertThat(st.restarts).isEqualTo(1);
    assertThat(st.lastRestart.kind).isEqualTo("Failure");
    assertThat(f.podsEverCreated("k-evict")).containsExactly("k-evict-1", "k-evict-2");
  }

  /**
   * api.md §3 step 5: a pod that cannot start (ErrImagePull, ImagePullBackOff, ...) "becomes a failure only when
   * heartbeat.startupGrace runs out"; §1 failureRules[].match.reasons matches the reason the run ended with. A rule
   * written for image-pull errors must be able to catch that failure (and lastFailure.reason should say why).
   */
  @Test
  void aReasonsRuleMatchesAPodThatNeverPulledItsImage() {
    f.policy("img", """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
        heartbeat: {timeout: 30s, startupGrace: 1s}
        failureRules:
        - name: bad-image
          match: {reasons: [ImagePullBackOff]}
          action: Fail
        """);
    f.kubelet.script("img", Run.stuckPending("ImagePullBackOff", "Back-off pulling image \"registry.example/x\""),
        Run.runForever());
    f.instance("img", "img");
    AgentInstance failed = f.awaitInstance("img", i -> i.getStatus().lastFailure != null);
    var st = failed.getStatus();
    assertThat(st.lastFailure.failureReason).isEqualTo("InitializationFailed");
    assertThat(st.lastFailure.rule).as("the user's rule for image errors").isEqualTo("bad-image");
    assertThat(st.phase).isEqualTo(Phase.Failed);
    assertThat(st.lastDecision.reasonCode).isEqualTo("non_retryable_failure");
  }

  /** The same failure without a rule: lastFailure.reason (§2) names why the pod never started. */
  @Test
  void lastFailureReasonOfAPodThatNeverPulledItsImageNamesTheWaitingReason() {
    f.policy("img2", """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
        heartbeat: {timeout: 30s, startupGrace: 1s}
        """);
    f.kubelet.script("img2", Run.stuckPending("ErrImagePull", "rpc error: image not found"), Run.runForever());
    f.instance("img2", "img2");
    AgentInstance failed = f.awaitInstance("img2", i -> i.getStatus().lastFailure != null);
    assertThat(failed.getStatus().lastFailure.reason).as("lastFailure.reason of a pod stuck on ErrImagePull")
        .isEqualTo("ErrImagePull");
  }

  /**
   * api.md §4: "node lost" is ContextReset. A pod whose node is lost and whose phase the API reports as Unknown
   * (reason NodeLost) has ended; it must be classified ContextReset and retried.
   */
  @Test
  void aPodOnALostNodeInPhaseUnknownIsAContextReset() {
    f.policy("node", """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
        """);
    f.kubelet.script("node", Run.runForever(), Run.runForever());
    f.instance("node", "node");
    f.awaitInstance("node", i -> at(i, 1, Phase.Running));
    f.client.pods().inNamespace(OperatorFixture.NS).withName("node-1").editStatus(p -> {
      p.getStatus().setPhase("Unknown");
      p.getStatus().setReason("NodeLost");
      p.getStatus().setMessage("Node n1 which was running pod node-1 is unresponsive");
      return p;
    });
    AgentInstance after = await().atMost(Duration.ofSeconds(8)).pollInterval(OperatorFixture.POLL)
        .until(() -> f.get("node"), i -> i.getStatus().lastFailure != null || i.getStatus().run > 1);
    assertThat(after.getStatus().lastFailure).isNotNull();
    assertThat(after.getStatus().lastFailure.failureClass).isEqualTo(InterruptionClass.ContextReset);
  }
}

package dev.respawn.controller;

import static dev.respawn.controller.OperatorFixture.at;
import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.InterruptionClass;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.sandbox.Run;
import java.time.Duration;
import java.util.HashMap;
import org.junit.jupiter.api.Test;

/**
 * The singleton promise (never two live pods of one instance), pods that vanish, and failures counted
 * once however often they are reported. Every test class checks "never two live pods" when its fixture
 * closes; here it is the point of the test.
 */
class PodSafetyScenarioTest extends MockClusterScenario {
  @Test
  void aPodDeletedBySomeoneElseIsAContextResetAndRestarted() {
    f.policy("fast", "backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}");
    f.kubelet.script("vanish", Run.deletedBySomeoneElse().after(Duration.ofMillis(200)), Run.runForever());
    f.instance("vanish", "fast");
    AgentInstance running = f.awaitInstance("vanish", i -> at(i, 2, Phase.Running));
    var st = running.getStatus();
    assertThat(st.lastFailure.pod).isEqualTo("vanish-1");
    assertThat(st.lastFailure.failureClass).isEqualTo(InterruptionClass.ContextReset);
    assertThat(st.attempt).isEqualTo(1);
    assertThat(st.restarts).isEqualTo(1);
    assertThat(f.podsEverCreated("vanish")).containsExactly("vanish-1", "vanish-2");
    assertThat(f.history.violations()).isEmpty();
    assertThat(f.history.maxLive("vanish")).isEqualTo(1);
  }

  /**
   * A start whose status write waits for the run's first sign (api.md §12) lives only in its pod until then:
   * a pod deleted in that time is a run that started and vanished (ContextReset), not a start to make again.
   */
  @Test
  void aPodDeletedBeforeItsStartWasWrittenIsACountedRunNotAStartMadeAgain() {
    f.policy("slow", "backoff: {type: Linear, initialDelay: 100ms, maxDelay: 1s}\nmaxRetries: 5");
    f.kubelet.script("gone", Run.exit(1), Run.runForever().startAfter(Duration.ofSeconds(8)), Run.runForever());
    f.instance("gone", "slow");
    f.awaitInstance("gone", i -> i.getStatus() != null && i.getStatus().phase == Phase.Backoff);
    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> f.pod("gone-2") != null);
    AgentInstance deferred = f.get("gone");
    assertThat(deferred.getStatus().run).as("the start of run 2 is not written yet").isEqualTo(1);
    f.client.pods().inNamespace(OperatorFixture.NS).withName("gone-2").delete();
    AgentInstance running = f.awaitInstance("gone", i -> at(i, 3, Phase.Running));
    var st = running.getStatus();
    assertThat(f.podsEverCreated("gone")).containsExactly("gone-1", "gone-2", "gone-3");
    assertThat(st.lastFailure.pod).isEqualTo("gone-2");
    assertThat(st.lastFailure.failureClass).isEqualTo(InterruptionClass.ContextReset);
    assertThat(st.attempt).isEqualTo(2);
    assertThat(st.restarts).isEqualTo(2);
    assertThat(st.history).extracting(h -> h.pod).containsExactly("gone-1", "gone-2");
    assertThat(f.history.maxLive("gone")).isEqualTo(1);
    // status shows run 3: nothing of the start is kept (a reconcile still on the cached status of before the write
    // may note it once more; the next one, on the written status, drops it)
    org.awaitility.Awaitility.await().atMost(OperatorFixture.AT_MOST)
        .until(() -> f.operator.instanceReconciler().unwrittenStarts().size() == 0);
  }

  @Test
  void neverTwoLivePodsThroughManyKindsOfRestart() {
    f.policy("fast", """
        backoff: {type: Immediate}
        maxRetries: 20
        heartbeat: {timeout: 1s}
        circuitBreaker: {failureThreshold: 100}
        failureRules: # lifts the built-in caps (OOMKilled 2, Timeout 2)
        - name: keep-going
          match: {classes: [ToolFailure, ContextReset, ProcessCrash, Timeout]}
          action: Retry
          maxRetries: 20
        """);
    Duration hb = Duration.ofMillis(100);
    f.kubelet.script("busy",
        Run.exit(1).heartbeat(hb),
        Run.deletedBySomeoneElse().heartbeat(hb),
        Run.evicted().heartbeat(hb),
        Run.exit(42).heartbeat(hb),
        Run.oomKilled().after(Duration.ofMillis(50)).heartbeat(hb),
        Run.runForever(), // never renews: ended by the operator for a stale heartbeat
        Run.exit(1, "Error", "network_timeout").after(Duration.ofMillis(150)).heartbeat(hb),
        Run.runForever().heartbeat(hb), // ended by a manual restart
        Run.runForever().heartbeat(hb));
    f.instance("busy", "fast");
    f.awaitInstance("busy", i -> at(i, 8, Phase.Running));
    f.annotate("busy", AgentInstance.RESTART_ANNOTATION, "one-more");
    AgentInstance last = f.awaitInstance("busy", i -> at(i, 9, Phase.Running));
    assertThat(last.getStatus().restarts).isEqualTo(8);
    assertThat(f.podsEverCreated("busy")).hasSize(9);
    assertThat(f.history.violations()).isEmpty();
    assertThat(f.history.maxLive("busy")).isEqualTo(1);
  }

  /**
   * api.md §2: a pod is the instance's by its controller ownerReference, not by its labels. The watch selects on the
   * instance label, so a pod someone took the label off is read directly, and looked at again while it lives: its
   * end is still seen, not a Ready=True on a dead pod for ever.
   */
  @Test
  void aLivePodWhoseInstanceLabelWasRemovedIsStillSeenToEnd() {
    f.policy("fast", "backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}");
    f.kubelet.script("unlabelled", Run.runForever(), Run.runForever());
    f.instance("unlabelled", "fast");
    f.awaitInstance("unlabelled", i -> at(i, 1, Phase.Running));
    f.client.pods().inNamespace(OperatorFixture.NS).withName("unlabelled-1").edit(p -> {
      p.getMetadata().getLabels().remove(dev.respawn.api.v1alpha1.AgentInstance.INSTANCE_LABEL);
      return p;
    });
    toolCrashed("unlabelled-1");
    AgentInstance next = f.awaitInstance("unlabelled", i -> at(i, 2, Phase.Running));
    assertThat(next.getStatus().lastFailure.pod).isEqualTo("unlabelled-1");
    assertThat(next.getStatus().lastFailure.exitCode).isEqualTo(1);
    assertThat(next.getStatus().attempt).isEqualTo(1);
    assertThat(f.podsEverCreated("unlabelled")).containsExactly("unlabelled-1", "unlabelled-2");
  }

  /**
   * The same for a pod whose instance label someone changed to another instance's name: the watch still shows it,
   * but told its events to the label's instance only, so its owner never heard that the run ended (Ready=True on a
   * Failed pod). Its owner hears them by the ownerReference; the label's instance leaves it alone.
   */
  @Test
  void aPodRelabelledToAnotherInstanceIsStillSeenToEndByItsOwner() {
    f.policy("fast", "backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}");
    f.kubelet.script("relabelled", Run.runForever(), Run.runForever());
    f.kubelet.script("neighbour", Run.runForever());
    f.instance("relabelled", "fast");
    f.instance("neighbour", "fast");
    f.awaitInstance("relabelled", i -> at(i, 1, Phase.Running));
    f.awaitInstance("neighbour", i -> at(i, 1, Phase.Running));
    f.client.pods().inNamespace(OperatorFixture.NS).withName("relabelled-1").edit(p -> {
      p.getMetadata().getLabels().put(dev.respawn.api.v1alpha1.AgentInstance.INSTANCE_LABEL, "neighbour");
      return p;
    });
    toolCrashed("relabelled-1");
    AgentInstance next = f.awaitInstance("relabelled", i -> at(i, 2, Phase.Running));
    assertThat(next.getStatus().lastFailure.pod).isEqualTo("relabelled-1");
    assertThat(next.getStatus().attempt).isEqualTo(1);
    assertThat(f.podsEverCreated("relabelled")).containsExactly("relabelled-1", "relabelled-2");
    AgentInstance neighbour = f.client.resources(AgentInstance.class).inNamespace(OperatorFixture.NS)
        .withName("neighbour").get();
    assertThat(neighbour.getStatus().phase).isEqualTo(Phase.Running);
    assertThat(neighbour.getStatus().run).isEqualTo(1);
    assertThat(neighbour.getStatus().lastFailure).isNull();
  }

  /** The kubelet reports the pod's agent exited 1 ("tool crashed"), the pod Failed. */
  private void toolCrashed(String pod) {
    f.client.pods().inNamespace(OperatorFixture.NS).withName(pod).editStatus(p -> {
      p.getStatus().setPhase("Failed");
      p.getStatus().getContainerStatuses().get(0).setState(new io.fabric8.kubernetes.api.model.ContainerStateBuilder()
          .withNewTerminated().withExitCode(1).withReason("Error").withMessage("tool crashed")
          .withFinishedAt(java.time.Instant.now().toString()).endTerminated().build());
      return p;
    });
  }

  @Test
  void aFailureReportedAgainIsCountedOnce() {
    f.policy("hour", "backoff: {type: Exponential, initialDelay: 1h, maxDelay: 1h}");
    f.kubelet.script("once", Run.exit(1, "Error", "temporary_error: flaky"), Run.runForever());
    f.instance("once", "hour");
    AgentInstance first = f.awaitInstance("once", i -> i.getStatus().phase == Phase.Backoff);
    assertThat(first.getStatus().attempt).isEqualTo(1);

    // the failed pod is updated again and again: a label, a status rewrite, another status rewrite
    f.client.pods().inNamespace(OperatorFixture.NS).withName("once-1").edit(p -> {
      var labels = new HashMap<>(p.getMetadata().getLabels());
      labels.put("touched", "yes");
      p.getMetadata().setLabels(labels);
      return p;
    });
    for (String message : new String[] {"again", "and again"}) {
      f.client.pods().inNamespace(OperatorFixture.NS).withName("once-1").editStatus(p -> {
        p.getStatus().setMessage(message);
        p.getStatus().getContainerStatuses().get(0).getState().getTerminated()
            .setMessage("temporary_error: " + message);
        return p;
      });
    }
    AgentInstance after = f.holdsFor(Duration.ofMillis(700), () -> f.get("once"),
        i -> i.getStatus().phase == Phase.Backoff && i.getStatus().attempt == 1);
    var st = after.getStatus();
    assertThat(st.circuitBreaker.failureCount).isEqualTo(1);
    assertThat(st.history).hasSize(1);
    assertThat(st.lastFailure.message).isEqualTo("temporary_error: flaky");
    assertThat(st.lastDecision.at).isEqualTo(first.getStatus().lastDecision.at);
    assertThat(st.nextRestartAt).isEqualTo(first.getStatus().nextRestartAt);
    assertThat(f.podsEverCreated("once")).containsExactly("once-1");
  }
}

package dev.respawn.controller;

import static dev.respawn.controller.OperatorFixture.at;
import static dev.respawn.controller.OperatorFixture.hasCondition;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.sandbox.Run;
import dev.respawn.testsupport.RequestLog;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * What the operator writes to the API server (api.md §12), counted at the server by the operator's
 * User-Agent: nothing while nothing happens, nothing after its own restart over unchanged instances,
 * and few writes per restart.
 */
class ApiEconomyScenarioTest extends MockClusterScenario {
  static final String HEARTBEATS = """
      backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
      resetAfter: 30m
      heartbeat: {timeout: 1s}
      """;

  @Test
  void aHealthyInstanceWhoseLeaseIsRenewedCostsNoWriteOverManyTimeouts() {
    f.policy("hb", HEARTBEATS);
    f.kubelet.script("calm", Run.runForever().heartbeat(Duration.ofMillis(100)));
    f.instance("calm", "hb");
    f.awaitInstance("calm", i -> at(i, 1, Phase.Running) && hasCondition(i, "Ready", "True", "Healthy"));
    String version = f.get("calm").getMetadata().getResourceVersion();
    f.api.requests().clear();
    long before = f.decisions();
    // 35 renewals, three and a half heartbeat timeouts: the operator wakes at every expiry and writes nothing
    f.holdsFor(Duration.ofMillis(3500), f::operatorWrites, List::isEmpty);
    assertThat(f.decisions() - before).as("it kept looking (a wake-up at each expiry)").isGreaterThanOrEqualTo(2);
    assertThat(f.get("calm").getMetadata().getResourceVersion()).isEqualTo(version);
    assertThat(f.get("calm").getStatus().heartbeat.verdict.name()).isEqualTo("Healthy");
  }

  /**
   * The template's finalizer holds the finished pod of the run before once it is deleted (a log collector that has
   * not let it go): its deletion is asked once, not again at every wake-up of the running agent once the operator no
   * longer remembers it deleted the pod (30 s; the operator's clock is moved on here).
   */
  @Test
  void aFinishedPodHeldByTheTemplatesFinalizerIsDeletedOnce() {
    java.util.concurrent.atomic.AtomicReference<Duration> ahead = new java.util.concurrent.atomic.AtomicReference<>(
        Duration.ZERO);
    f.close();
    f = new OperatorFixture(OperatorSettings.defaults().withClock(() -> Instant.now().plus(ahead.get())));
    f.policy("hb", HEARTBEATS);
    f.kubelet.script("held", Run.exit(1).after(Duration.ofMillis(200)),
        Run.runForever().heartbeat(Duration.ofMillis(100)));
    f.instance("held", "hb", spec -> spec.template.setMetadata(new ObjectMetaBuilder()
        .withFinalizers("example.com/collect-logs").build()));
    f.awaitInstance("held", i -> at(i, 2, Phase.Running) && hasCondition(i, "Ready", "True", "Healthy"));
    await().atMost(Duration.ofSeconds(10)).until(() -> f.client.pods().inNamespace(OperatorFixture.NS)
        .withName("held-1").get().getMetadata().getDeletionTimestamp() != null);
    ahead.set(RecentDeletions.REMEMBERED.plusSeconds(1));
    // three and a half heartbeat timeouts: a wake-up at each
    f.holdsFor(Duration.ofMillis(3500), () -> f.client.pods().inNamespace(OperatorFixture.NS).withName("held-1")
        .get() != null, held -> held);
    assertThat(f.operatorWrites()).filteredOn(w -> "DELETE".equals(w.verb()) && w.path().endsWith("/pods/held-1"))
        .hasSize(1);
  }

  @Test
  void aRestartedOperatorWritesNothingForInstancesWhoseStateDidNotChange() {
    // a dozen agents renewing three times a second: the simulated kubelet shares two threads among them
    f.policy("hb", """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
        resetAfter: 30m
        heartbeat: {timeout: 3s}
        """);
    List<String> names = IntStream.range(0, 12).mapToObj(n -> "steady-" + n).toList();
    for (String name : names) {
      f.kubelet.script(name, Run.runForever().heartbeat(Duration.ofMillis(300)),
          Run.runForever().heartbeat(Duration.ofMillis(300)));
      f.instance(name, "hb");
    }
    for (String name : names) {
      f.awaitInstance(name, i -> at(i, 1, Phase.Running) && hasCondition(i, "Ready", "True", "Healthy"));
    }
    f.stopOperator();
    f.api.requests().clear();
    f.startOperator();
    // the new process reconciles all of them and writes nothing, past the heartbeat timeout it grants every live
    // run from its own start
    f.awaitDecisions(names.size());
    f.holdsFor(Duration.ofMillis(4000), f::operatorWrites, List::isEmpty);
    f.annotate("steady-0", AgentInstance.RESTART_ANNOTATION, "after-restart");
    f.awaitInstance("steady-0", i -> at(i, 2, Phase.Running) && hasCondition(i, "Ready", "True", "Healthy"));
    // what it wrote then was the restart of steady-0: its status, its pods, its Events (created by POST)
    List<RequestLog.Request> writes = f.operatorWrites();
    assertThat(writes).filteredOn(w -> !"POST".equals(w.verb()))
        .allSatisfy(w -> assertThat(w.path()).containsPattern("/steady-0(-[0-9]+)?(/status)?$"));
    assertThat(writes).filteredOn(w -> "POST".equals(w.verb())).hasSizeLessThanOrEqualTo(3);
  }

  @Test
  void aRestartedOperatorMakesUpNoHeartbeatForRunsThatNeverRenewed() {
    // long startup grace: an agent still starting (no heartbeat yet) and a pod still pending are not stale
    f.policy("slow", """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
        resetAfter: 30m
        heartbeat: {timeout: 2s, startupGrace: 10m}
        """);
    f.kubelet.script("silent", Run.runForever());
    f.kubelet.script("pending", Run.stuckPending("ImagePullBackOff", "pulling the image failed, retrying"));
    f.instance("silent", "slow");
    f.instance("pending", "slow");
    f.awaitInstance("silent", i -> at(i, 1, Phase.Running) && hasCondition(i, "Ready", "False", "StaleHeartbeat"));
    f.awaitInstance("pending", i -> hasCondition(i, "Ready", "False", "ImagePullBackOff"));
    // both runs older than the next process: pod times have whole seconds, a run counts from the second's end
    Instant started = Instant.parse(f.pod("silent-1").getStatus().getContainerStatuses().get(0).getState()
        .getRunning().getStartedAt()).plusSeconds(1);
    await().atMost(OperatorFixture.AT_MOST).until(() -> Instant.now().isAfter(started));
    f.stopOperator();
    f.api.requests().clear();
    f.startOperator();
    // more than the heartbeat timeout the new process grants: neither run is given a heartbeat it never made
    f.awaitDecisions(2);
    f.holdsFor(Duration.ofMillis(3000), f::operatorWrites, List::isEmpty);
    for (String name : List.of("silent", "pending")) {
      assertThat(f.get(name).getStatus().heartbeat).as(name).isNull();
    }
    assertThat(hasCondition(f.get("silent"), "Ready", "False", "StaleHeartbeat")).isTrue();
  }

  /**
   * Once run {@code run} of {@code name} is Running, the operator stops until the run's 2 s startup grace has
   * ended, and starts again: api.md §12, a restarted operator grants every live run a fresh heartbeat timeout
   * (5 s here), one that never renewed too, so its pod lives on past the new process's first look.
   */
  private void restartedAfterItsGrace(String name, int run) {
    AgentInstance running = f.awaitInstance(name, i -> at(i, run, Phase.Running));
    f.stopOperator();
    Instant graceEnd = Instant.parse(running.getStatus().runStartedAt).plusSeconds(2);
    await().atMost(OperatorFixture.AT_MOST).until(() -> Instant.now().isAfter(graceEnd.plusSeconds(1)));
    f.startOperator();
    f.holdsFor(Duration.ofMillis(2500), () -> f.pod(name + "-" + run) != null, alive -> alive);
  }

  @Test
  void aRestartedOperatorGrantsARunThatNeverRenewedAFullTimeoutFromItsStart() {
    f.policy("quick", """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
        heartbeat: {timeout: 5s, startupGrace: 2s}
        """);
    f.kubelet.script("mute", Run.runForever(), Run.runForever());
    f.instance("mute", "quick");
    restartedAfterItsGrace("mute", 1);
    AgentInstance ended = f.awaitInstance("mute", i -> i.getStatus().lastFailure != null);
    assertThat(ended.getStatus().lastFailure.pod).isEqualTo("mute-1");
    assertThat(ended.getStatus().lastFailure.message).contains("granted when this operator began to watch the run's heartbeat");
  }

  @Test
  void aLaterRunThatNeverRenewedGetsTheSameGrantThoughTheLeaseStillShowsTheLastRunsRenewal() {
    f.policy("quick", """
        backoff: {type: Immediate}
        heartbeat: {timeout: 5s, startupGrace: 2s}
        """);
    f.kubelet.script("second", Run.exit(1).after(Duration.ofMillis(1500)).heartbeat(Duration.ofMillis(300)),
        Run.runForever());
    f.instance("second", "quick");
    // the Lease's renewTime and holder are run 1's: run 2 never renewed, and is granted a full timeout all the same
    restartedAfterItsGrace("second", 2);
    AgentInstance ended = f.awaitInstance("second", i -> i.getStatus().lastFailure != null
        && "second-2".equals(i.getStatus().lastFailure.pod));
    assertThat(ended.getStatus().lastFailure.message).contains("granted when this operator began to watch the run's heartbeat");
  }

  @Test
  void oneRestartCostsAtMostSixWritesEventsIncluded() {
    f.policy("plain", "backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}\nresetAfter: 30m");
    // as a real kubelet does, the next run's pod shows ContainerCreating before it runs: no news, no write
    f.kubelet.script("once", Run.exit(1).after(Duration.ofMillis(500)),
        Run.runForever().startAfter(Duration.ofMillis(500)));
    f.instance("once", "plain");
    f.awaitInstance("once", i -> at(i, 1, Phase.Running) && hasCondition(i, "Ready", "True", "Healthy"));
    f.api.requests().clear();
    // the failure, the backoff, the next run running, the finished pod deleted
    f.awaitInstance("once", i -> at(i, 2, Phase.Running) && hasCondition(i, "Ready", "True", "Healthy"));
    await().atMost(OperatorFixture.AT_MOST).until(() -> f.pod("once-1") == null);
    await().atMost(OperatorFixture.AT_MOST).until(() -> f.events("once").size() >= 2);
    f.holdsFor(Duration.ofMillis(500), () -> f.operatorWrites().size(), n -> n <= 6);
    List<RequestLog.Request> writes = f.operatorWrites();
    assertThat(writes).as("writes of one restart: %s", writes).hasSizeLessThanOrEqualTo(6);
    assertThat(writes).filteredOn(w -> !w.resource().startsWith("events")).extracting(RequestLog.Request::key)
        .containsExactlyInAnyOrder("PATCH agentinstances.respawn.dev/status", "POST pods",
            "PATCH agentinstances.respawn.dev/status", "DELETE pods");
    // the start's status was written only once the run ran: its exact time travelled with the pod
    var st = f.get("once").getStatus();
    assertThat(f.pod("once-2").getMetadata().getAnnotations())
        .containsEntry(AgentInstance.STARTED_AT_ANNOTATION, st.lastRestart.startedAt);
    assertThat(java.time.Instant.parse(st.lastRestart.startedAt))
        .isAfterOrEqualTo(java.time.Instant.parse(st.lastDecision.at).plusMillis(100));
  }

  @Test
  void withHeartbeatsAnImmediateRestartCostsFourWritesAndOneEvent() {
    f.policy("now", "backoff: {type: Immediate}\nresetAfter: 30m\nheartbeat: {timeout: 10s}");
    f.kubelet.script("quick", Run.exit(1).after(Duration.ofMillis(1500)).heartbeat(Duration.ofMillis(100)),
        Run.runForever().heartbeat(Duration.ofMillis(100)).startAfter(Duration.ofMillis(300)));
    f.instance("quick", "now");
    f.awaitInstance("quick", i -> at(i, 1, Phase.Running) && hasCondition(i, "Ready", "True", "Healthy"));
    f.api.requests().clear();
    f.awaitInstance("quick", i -> at(i, 2, Phase.Running) && hasCondition(i, "Ready", "True", "Healthy"));
    await().atMost(OperatorFixture.AT_MOST).until(() -> f.pod("quick-1") == null);
    f.holdsFor(Duration.ofMillis(500), () -> f.operatorWrites().size(), n -> n <= 5);
    // the failure and its restart (Starting), the pod, the new run Running and Ready, the finished pod deleted
    assertThat(f.operatorWrites()).filteredOn(w -> !w.resource().startsWith("events"))
        .extracting(RequestLog.Request::key).containsExactlyInAnyOrder("PATCH agentinstances.respawn.dev/status",
            "POST pods", "PATCH agentinstances.respawn.dev/status", "DELETE pods");
    assertThat(f.operatorWrites()).filteredOn(w -> w.resource().startsWith("events")).hasSize(1);
  }

  @Test
  void withHeartbeatsTheNewRunIsWrittenOnceRunningAndReady() {
    f.policy("hb", HEARTBEATS);
    f.kubelet.script("beating", Run.exit(1).after(Duration.ofMillis(1500)).heartbeat(Duration.ofMillis(100)),
        Run.runForever().heartbeat(Duration.ofMillis(100)));
    f.instance("beating", "hb");
    f.awaitInstance("beating", i -> at(i, 1, Phase.Running) && hasCondition(i, "Ready", "True", "Healthy"));
    f.api.requests().clear();
    f.awaitInstance("beating", i -> at(i, 2, Phase.Running) && hasCondition(i, "Ready", "True", "Healthy"));
    await().atMost(OperatorFixture.AT_MOST).until(() -> f.pod("beating-1") == null);
    f.holdsFor(Duration.ofMillis(500), () -> f.operatorWrites().size(), n -> n <= 6);
    // the failure, the pod, the new run once it runs and its agent renewed (Running and Ready in one write), the
    // finished pod deleted; an Event for each of the two decisions (the failure's, the start's)
    assertThat(f.operatorWrites()).filteredOn(w -> !w.resource().startsWith("events"))
        .extracting(RequestLog.Request::key).containsExactlyInAnyOrder("PATCH agentinstances.respawn.dev/status",
            "POST pods", "PATCH agentinstances.respawn.dev/status", "DELETE pods");
    assertThat(f.operatorWrites()).hasSizeLessThanOrEqualTo(6);
  }

  @Test
  void nothingIsKeptInMemoryOfDeletedInstances() {
    f.policy("hb", HEARTBEATS);
    List<String> names = IntStream.range(0, 6).mapToObj(n -> "churn-" + n).toList();
    for (String name : names) {
      f.kubelet.script(name, Run.runForever().heartbeat(Duration.ofMillis(200)),
          Run.runForever().heartbeat(Duration.ofMillis(200)));
      f.instance(name, "hb");
    }
    for (String name : names) {
      f.awaitInstance(name, i -> at(i, 1, Phase.Running) && hasCondition(i, "Ready", "True", "Healthy"));
    }
    f.annotate("churn-0", AgentInstance.RESTART_ANNOTATION, "an-event");
    f.awaitInstance("churn-0", i -> at(i, 2, Phase.Running) && hasCondition(i, "Ready", "True", "Healthy"));
    await().atMost(OperatorFixture.AT_MOST).until(() -> f.events.remembered() > 0);
    var renewals = f.operator.instanceReconciler().renewals();
    assertThat(renewals.size()).isEqualTo(names.size());
    assertThat(f.metrics.instancesTracked()).isEqualTo(names.size());
    var wakeUps = f.operator.instanceReconciler().wakeUps();
    // each healthy run waits for its heartbeat deadline: one wake-up each, one task each in the timer's queue
    // (awaited: one may be firing right now, before its reconcile sets the next)
    await().atMost(OperatorFixture.AT_MOST).untilAsserted(() ->
        assertThat(wakeUps.sizes()).containsExactly(names.size(), names.size()));
    f.kubelet.stopHeartbeats();
    for (String name : names) {
      f.client.resources(AgentInstance.class).inNamespace(OperatorFixture.NS).withName(name).delete();
    }
    await().atMost(OperatorFixture.AT_MOST).untilAsserted(() -> {
      assertThat(renewals.size()).isZero();
      assertThat(f.metrics.instancesTracked()).isZero();
      assertThat(f.events.remembered()).isZero();
      // not even a cancelled task waits in the queue until its time (java.util.Timer keeps those)
      assertThat(wakeUps.sizes()).containsExactly(0, 0);
    });
  }

  @Test
  void coalescedEventRepeatsAreWrittenWithinThirtySeconds() {
    AtomicInteger flushes = new AtomicInteger();
    f.observer = new DecisionSink() {
      @Override
      public void decided(AgentInstance instance, dev.respawn.policy.Decision decision,
          io.fabric8.kubernetes.api.model.Pod pod) {}

      @Override
      public void policyRefused(AgentInstance instance, Refusal reason, String message, java.time.Instant at) {}

      @Override
      public void flushPending() {
        flushes.incrementAndGet();
      }
    };
    await().atMost(Duration.ofSeconds(30)).until(() -> flushes.get() >= 1);
  }
}

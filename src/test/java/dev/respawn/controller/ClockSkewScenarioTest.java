package dev.respawn.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.sandbox.Heartbeat;
import dev.respawn.sandbox.Run;
import dev.respawn.sandbox.SimulatedKubelet;
import io.fabric8.kubernetes.api.model.Pod;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Clock skew audit, through the Kubernetes API: timestamps written by a kubelet or the API server whose clock
 * differs from the operator's.
 */
class ClockSkewScenarioTest {

  private static boolean waitingToStart(Pod p) {
    return p != null && p.getStatus() != null && "Pending".equals(p.getStatus().getPhase())
        && p.getStatus().getContainerStatuses() != null && !p.getStatus().getContainerStatuses().isEmpty();
  }

  /**
   * The instance records no failure and stays on its first run for the whole period (its first run recorded first:
   * an instance the operator never looked at would pass).
   */
  private static void noFailureFor(OperatorFixture f, String name, Duration period) {
    f.awaitInstance(name, i -> i.getStatus().run != null && i.getStatus().run >= 1);
    await().during(period).atMost(period.plusSeconds(2)).pollInterval(Duration.ofMillis(50)).untilAsserted(() -> {
      AgentInstance i = f.get(name);
      boolean clean = i != null && i.getStatus() != null && i.getStatus().lastFailure == null
          && Integer.valueOf(1).equals(i.getStatus().run);
      assertThat(clean).as("no failure expected yet; %s", f.describe(name)).isTrue();
    });
  }

  /**
   * A node whose clock is 2 minutes behind: the kubelet's running.startedAt reads 2 minutes in the past. Counted
   * from it, a 20 s startupGrace would be over the moment the operator sees the pod run; counted from when the
   * operator saw it running, the agent that renews 3 s after its start is well within it.
   */
  @Test
  void aNodeClockTwoMinutesBehindDoesNotEndAnAgentThatIsStillWithinItsStartupGrace() {
    try (OperatorFixture f = new OperatorFixture()) {
      f.policy("hb", """
          backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
          heartbeat: {timeout: 5s, startupGrace: 20s}
          """);
      f.kubelet.script("slow", Run.stuckPending("ContainerCreating", ""));
      f.instance("slow", "hb");
      await().atMost(OperatorFixture.AT_MOST).until(() -> f.pod("slow-1"), ClockSkewScenarioTest::waitingToStart);
      try (SimulatedKubelet node = new SimulatedKubelet(f.api.newClient(), OperatorFixture.NS,
          () -> Instant.now().minus(Duration.ofMinutes(2)))) {
        node.startRunning("slow-1"); // the node's kubelet starts the container, by its own clock
        // the agent loads for 3 s before its first renewal: within its 20 s grace, nothing may end it
        noFailureFor(f, "slow", Duration.ofSeconds(3));
        Heartbeat hb = f.kubelet.renewEvery(Duration.ofMillis(300), "slow", "slow-1", "Healthy");
        try {
          AgentInstance ready = f.awaitInstance("slow", i -> OperatorFixture.hasCondition(i, "Ready", "True", "Healthy"));
          assertThat(ready.getStatus().run).isEqualTo(1);
          assertThat(ready.getStatus().lastFailure).isNull();
        } finally {
          hb.stop();
        }
      }
    }
  }

  /**
   * The operator's clock 2 minutes ahead of the API server: counted from metadata.creationTimestamp (the API
   * server's clock), a first pod pending for a second with 60 s of grace would fail as InitializationFailed at the
   * operator's first look. Every pod carries respawn.dev/started-at, the operator's own time of its start.
   */
  @Test
  void anOperatorClockTwoMinutesAheadOfTheApiServerDoesNotFailAFirstPodAtOnceWhileItIsPending() {
    OperatorSettings ahead = OperatorSettings.defaults().withClock(() -> Instant.now().plus(Duration.ofMinutes(2)));
    try (OperatorFixture f = new OperatorFixture(ahead)) {
      f.policy("grace", """
          backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
          heartbeat: {timeout: 30s, startupGrace: 60s}
          """);
      f.kubelet.script("first", Run.stuckPending("ContainerCreating", ""), Run.stuckPending("ContainerCreating", ""),
          Run.stuckPending("ContainerCreating", ""));
      f.instance("first", "grace");
      await().atMost(OperatorFixture.AT_MOST).until(() -> f.pod("first-1"), ClockSkewScenarioTest::waitingToStart);
      // pulling its image, 60 s of grace: nothing may end it within a few seconds
      noFailureFor(f, "first", Duration.ofSeconds(3));
    }
  }

  /**
   * The operator's own wall clock is stepped forward by 2 minutes (ntpd steps large offsets; a VM resumed from a
   * pause or a live migration jumps too). Kept as wall-clock times, every renewal seen before the step would look
   * 2 minutes old, and any reconcile before the agent's next renewal would end a healthy run as stale; kept as
   * monotonic ages, nothing changes (as Go's time.Now() with its monotonic reading spares the node lifecycle
   * controller).
   */
  @Test
  void aForwardStepOfTheOperatorsOwnClockDoesNotEndAHealthyRun() {
    AtomicReference<Duration> step = new AtomicReference<>(Duration.ZERO);
    OperatorSettings stepping = OperatorSettings.defaults().withClock(() -> Instant.now().plus(step.get()));
    try (OperatorFixture f = new OperatorFixture(stepping)) {
      f.policy("hb", """
          backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
          heartbeat: {timeout: 30s}
          """);
      f.kubelet.script("steady", Run.runForever().heartbeat(Duration.ofSeconds(2)),
          Run.runForever().heartbeat(Duration.ofSeconds(2)), Run.runForever().heartbeat(Duration.ofSeconds(2)));
      f.instance("steady", "hb");
      f.awaitInstance("steady", i -> OperatorFixture.at(i, 1, Phase.Running)
          && OperatorFixture.hasCondition(i, "Ready", "True", "Healthy"));
      step.set(Duration.ofMinutes(2));
      long looked = f.decisions();
      // anything that makes the operator look at the instance: here the pod is touched (a label, the kubelet)
      f.client.pods().inNamespace(OperatorFixture.NS).withName("steady-1").edit(p -> {
        var a = new HashMap<String, String>(p.getMetadata().getAnnotations() == null ? java.util.Map.of()
            : p.getMetadata().getAnnotations());
        a.put("example.com/touched", "yes");
        p.getMetadata().setAnnotations(a);
        return p;
      });
      // the agent renews every 2 s, as it always did: its run must go on
      noFailureFor(f, "steady", Duration.ofSeconds(3));
      assertThat(f.decisions()).as("the operator looked after the step").isGreaterThan(looked);
    }
  }

  /**
   * A node whose clock is 2 minutes ahead, and the run's Lease deleted by hand after the agent renewed: the run keeps
   * the last renewal the operator saw its pod make. That renewal counts when it was seen after the operator made
   * the pod (its own clock), whatever the kubelet's startedAt says; the run stays Ready until its timeout.
   */
  @Test
  void aRunOnANodeAheadKeepsItsLastRenewalWhenItsLeaseIsDeleted() {
    try (OperatorFixture f = new OperatorFixture()) {
      f.policy("hb", """
          backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
          heartbeat: {timeout: 20s}
          """);
      f.kubelet.script("ahead", Run.stuckPending("ContainerCreating", ""));
      f.instance("ahead", "hb");
      await().atMost(OperatorFixture.AT_MOST).until(() -> f.pod("ahead-1"), ClockSkewScenarioTest::waitingToStart);
      try (SimulatedKubelet node = new SimulatedKubelet(f.api.newClient(), OperatorFixture.NS,
          () -> Instant.now().plus(Duration.ofMinutes(2)))) {
        node.startRunning("ahead-1");
        Heartbeat hb = f.kubelet.renewEvery(Duration.ofMillis(300), "ahead", "ahead-1", "Healthy");
        f.awaitInstance("ahead", i -> OperatorFixture.hasCondition(i, "Ready", "True", "Healthy"));
        hb.stop();
        f.client.leases().inNamespace(OperatorFixture.NS).withName("ahead").delete();
        f.holdsFor(Duration.ofSeconds(2), () -> f.get("ahead"),
            i -> OperatorFixture.hasCondition(i, "Ready", "True", "Healthy"));
      }
    }
  }
}

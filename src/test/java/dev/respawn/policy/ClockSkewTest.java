package dev.respawn.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.api.v1alpha1.HealthVerdict;
import dev.respawn.api.v1alpha1.Phase;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Clock skew audit: the operator's clock, the API server's, each node's kubelet clock and each agent's clock
 * differ. These tests feed the core timestamps written by another clock than the operator's.
 */
class ClockSkewTest {

  /**
   * The kubelet's container running.startedAt is the node's clock. A node 2 minutes behind ours makes a pod that
   * just started look 2 minutes old: counted from it, a startupGrace of 90 s would be over before the agent could
   * renew. The grace counts from when the operator saw the run running.
   */
  @Test
  void aNodeClockTwoMinutesBehindDoesNotEndAStartingRunAtOnce() {
    AgentSim s = new AgentSim(AgentSim.policy(Specs.heartbeat(Specs.retries(new AgentRestartPolicySpec(), 5), "60s",
        "90s")));
    s.reconcile(); // the first pod is created, pending
    s.advance(Duration.ofSeconds(2));
    // the kubelet reports it running: startedAt by the node's clock, 2 minutes behind ours
    Instant nodeNow = s.now.minus(Duration.ofMinutes(2));
    s.pod = new PodView(s.pod.name(), s.pod.uid(), PodView.Stage.RUNNING, s.pod.createdAt(), nodeNow, null, null,
        true);
    Decision d = s.reconcile();
    assertThat(d.deletePod()).as("a run 2 s old is within its 90 s startup grace").isFalse();
    assertThat(s.state.phase).isEqualTo(Phase.Running);
    assertThat(s.state.lastFailure).isNull();
  }

  /**
   * The other direction: a node 10 minutes ahead makes running.startedAt 10 minutes in our future; counted from
   * it, an agent that never renews would be given startupGrace + 10 minutes (11 min instead of 60 s).
   */
  @Test
  void aNodeClockTenMinutesAheadDoesNotStretchTheStartupGraceOfAnAgentThatNeverRenews() {
    AgentSim s = new AgentSim(AgentSim.policy(Specs.heartbeat(Specs.retries(new AgentRestartPolicySpec(), 5), "60s",
        "60s")));
    s.reconcile();
    s.advance(Duration.ofSeconds(2));
    Instant nodeNow = s.now.plus(Duration.ofMinutes(10));
    s.pod = new PodView(s.pod.name(), s.pod.uid(), PodView.Stage.RUNNING, s.pod.createdAt(), nodeNow, null, null,
        true);
    assertThat(s.reconcile().deletePod()).isFalse();
    s.advance(Duration.ofSeconds(62)); // 62 s after it was seen running, never renewed
    assertThat(s.reconcile().deletePod()).as("startupGrace 60 s has run out").isTrue();
  }

  /**
   * A restart's start waits to be written until its agent's first renewal (Running and Ready in one write), 3 s after
   * the pod's start at most. With a node clock ahead, the pod's start is clamped to now at every look, so "3 s after
   * the start" moved on with every look (shown Starting meanwhile), and the grace counted from when it ended (8 s
   * late): the run is shown Running at once, its start now.
   */
  @Test
  void aNodeClockAheadShowsARestartedRunRunningAtOnceAndStretchesNoGrace() {
    AgentSim s = new AgentSim(AgentSim.policy(Specs.heartbeat(Specs.spec(), "30s", "2m"))).started();
    InstanceState waiting = s.failedAndRestartUnwritten();
    s.advance(Duration.ofSeconds(1));
    Instant seenRunning = s.now;
    s.pod = new PodView(s.pod.name(), s.pod.uid(), PodView.Stage.RUNNING, s.pod.createdAt(),
        s.now.plus(Duration.ofMinutes(10)), null, null, true);
    Decision shown = s.reconcile();
    assertThat(shown.deferStatus()).as("shown Running, waiting for the first heartbeat").isFalse();
    assertThat(shown.state().run).isEqualTo(2);
    assertThat(shown.state().phase).isEqualTo(Phase.Running);
    assertThat(shown.state().runStartedAt).as("its grace counts from when it was seen running").isEqualTo(seenRunning);
    // a node less than a second ahead waits for the first renewal as any: the kubelet stamps whole seconds (read as
    // the latest instant a stamp can mean), so a start it stamps may lie up to a second in the future
    s.advance(Duration.ofMillis(700));
    for (long aheadMillis : new long[] {0, 300, 999}) {
      s.state = waiting;
      Instant stamp = s.now.plusMillis(aheadMillis).truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
      s.pod = new PodView(s.pod.name(), s.pod.uid(), PodView.Stage.RUNNING, s.pod.createdAt(),
          stamp.plusSeconds(1).minusNanos(1), null, null, true);
      assertThat(s.reconcile().deferStatus()).as("%d ms ahead: running, its agent has not renewed yet", aheadMillis)
          .isTrue();
    }
  }

  /**
   * A restarted operator must not read the agent's renewTime (the agent's clock) against its own resetAfter point:
   * a renewal made BEFORE resetAfter ran out, by an agent clock 2 minutes ahead, would count as heard after it,
   * and the failure sequence of an agent that hung would close (attempt 0). Only a renewal seen changing counts.
   */
  @Test
  void anAgentClockTwoMinutesAheadDoesNotDefeatTheRestartedOperatorsResetAfterGuard() {
    AgentSim s = new AgentSim(AgentSim.policy(Specs.heartbeat(Specs.backoff("Linear", "1s", 1.0, "10s"), "60s",
        null))).started();
    s.heartbeat(HealthVerdict.Healthy);
    s.exit(1);
    s.restartAndRun();
    s.heartbeat(HealthVerdict.Healthy);
    s.reconcile(); // Ready, healthy from now; resetAfter (60 s) runs out at now + 60 s
    s.advance(Duration.ofSeconds(10));
    // the agent's last renewal, by its clock 2 minutes ahead of ours; then it hangs
    Instant lastRenewalByAgentClock = s.now.plus(Duration.ofMinutes(2));
    s.heartbeat(HealthVerdict.Healthy);
    s.advance(Duration.ofSeconds(51)); // past resetAfter, within the timeout
    // a new operator process first sees that renewTime now
    s.lease = new LeaseView(lastRenewalByAgentClock, s.now, HealthVerdict.Healthy, null, null, null, null, null, true);
    s.reconcile();
    assertThat(s.state.attempt).as("the agent was last heard 51 s ago, before resetAfter ran out").isEqualTo(1);
  }

  /**
   * A status restored from a cluster whose clock ran ahead (or this operator's clock stepped back) holds restart
   * times in the future: each counts as now, so it leaves the restartLimit window one window from now, not one window
   * after that future time (hours of refused restarts).
   */
  @Test
  void restartTimesInTheFutureCountAsNowAndLeaveTheWindowOneWindowLater() {
    AgentSim s = new AgentSim(AgentSim.policy(Specs.window(Specs.spec(), 3, "1h"))).started();
    s.state.recentRestarts = List.of(s.now.plus(Duration.ofMinutes(200)), s.now.plus(Duration.ofMinutes(190)),
        s.now.plus(Duration.ofMinutes(180)));
    Instant restored = s.now;
    s.reconcile();
    assertThat(s.state.recentRestarts).as("none later than now").allMatch(t -> !t.isAfter(restored));
    s.advance(Duration.ofMinutes(61));
    s.exit(1);
    assertThat(s.state.phase).as("an hour later the window has room again").isEqualTo(Phase.Backoff);
  }

  /** The circuit breaker's failure times too: a restored time in the future counts as a failure now. */
  @Test
  void failureTimesInTheFutureCountAsNow() {
    AgentSim s = new AgentSim(AgentSim.policy(Specs.spec())).started();
    s.state.circuit = new CircuitSnapshot(CircuitState.Closed, List.of(s.now.plus(Duration.ofHours(3))), 0, null,
        null, null, null);
    s.reconcile();
    assertThat(s.state.circuit.failureTimes()).containsExactly(s.now);
  }
}

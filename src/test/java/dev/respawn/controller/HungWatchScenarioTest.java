package dev.respawn.controller;

import static dev.respawn.controller.OperatorFixture.at;
import static dev.respawn.controller.OperatorFixture.hasCondition;
import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.InterruptionClass;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.sandbox.Run;
import dev.respawn.testsupport.ApiFaults;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.fabric8.mockwebserver.http.WebSocketListener;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * A watch that hangs (a proxy that dropped the connection without a reset: the operator's informer waits for events
 * that never come) while the agents run and renew: the operator reads the pod and the Lease from the API server
 * before it ends a run, so it ends none that runs and renews, and still ends one that stopped.
 */
class HungWatchScenarioTest extends MockClusterScenario {

  /** Whether the request is a watch of {@code resource} (a plural) by the operator. */
  private static boolean operatorsWatch(RecordedRequest r, String resource) {
    return OperatorFixture.OPERATOR_AGENT.equals(r.getHeader("User-Agent")) && r.getPath().contains("/" + resource)
        && r.getPath().contains("watch=true");
  }

  /**
   * From now on every watch of {@code resource} the operator opens is taken and never says a word; the open ones are
   * closed.
   */
  private void hangWatches(String resource) {
    f.api.faults(new ApiFaults() {
      @Override
      public MockResponse after(RecordedRequest request, MockResponse handled) {
        return operatorsWatch(request, resource) ? new MockResponse().withWebSocketUpgrade(new WebSocketListener() {})
            : handled;
      }
    });
    assertThat(f.api.dropWatches(r -> operatorsWatch(r, resource))).as("the operator's watch of " + resource)
        .isPositive();
  }

  private void hangLeaseWatches() {
    hangWatches("leases");
  }

  private long operatorsLeaseReads(String name) {
    return f.api.requests().matching(r -> "GET".equals(r.verb()) && OperatorFixture.OPERATOR_AGENT.equals(r.userAgent())
        && r.path().endsWith("/leases/" + name)).size();
  }

  private long statusWrites(String name) {
    return f.operatorWrites().stream().filter(w -> w.path().contains("/agentinstances/" + name + "/status")).count();
  }

  private void heartbeating(String name) {
    f.policy("hb", """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
        heartbeat: {timeout: 2s, startupGrace: 1s}
        """);
    f.kubelet.script(name, Run.runForever().heartbeat(Duration.ofMillis(200)),
        Run.runForever().heartbeat(Duration.ofMillis(200)));
    f.instance(name, "hb");
    f.awaitInstance(name, i -> at(i, 1, Phase.Running) && hasCondition(i, "Ready", "True", "Healthy"));
  }

  @Test
  void anAgentThatRenewsIsNotEndedWhileTheLeaseWatchHangs() {
    heartbeating("renews");
    hangLeaseWatches();
    long writesBefore = statusWrites("renews");
    // three timeouts of renewals the watch never delivers: the run lives on, Ready all along
    f.holdsFor(Duration.ofSeconds(6), () -> f.get("renews"),
        i -> at(i, 1, Phase.Running) && hasCondition(i, "Ready", "True", "Healthy"));
    assertThat(f.podsEverCreated("renews")).containsExactly("renews-1");
    assertThat(operatorsLeaseReads("renews")).as("the Lease read at each timeout the watch showed no renewal in")
        .isBetween(2L, 6L);
    assertThat(statusWrites("renews")).as("a renewal read is no change: nothing is written")
        .isEqualTo(writesBefore);
  }

  @Test
  void anAgentThatStopsRenewingIsEndedAllTheSameWhileTheLeaseWatchHangs() {
    heartbeating("stops");
    hangLeaseWatches();
    f.kubelet.stopHeartbeats();
    Instant stopped = Instant.now();
    AgentInstance next = f.awaitInstance("stops", i -> i.getStatus().run != null && i.getStatus().run >= 2
        && i.getStatus().lastFailure != null);
    assertThat(next.getStatus().lastFailure.pod).isEqualTo("stops-1");
    assertThat(next.getStatus().lastFailure.failureClass).isEqualTo(InterruptionClass.Timeout);
    assertThat(next.getStatus().lastFailure.failureReason).isEqualTo("HealthCheckFailed");
    // a timeout after the last renewal (at most one period, 200 ms, before the stop), not sooner
    assertThat(Instant.parse(next.getStatus().lastFailure.at)).isAfterOrEqualTo(stopped.plusMillis(2000 - 200 - 100));
    assertThat(operatorsLeaseReads("stops")).as("the stale verdict was checked with the API server").isPositive();
  }

  @Test
  void aPodThePodWatchNeverShowedRunningIsNotEndedAsNeverStarted() {
    f.policy("hb", """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
        heartbeat: {timeout: 2s, startupGrace: 1s}
        """);
    hangWatches("pods");
    f.kubelet.script("unseen", Run.runForever().heartbeat(Duration.ofMillis(200)), Run.runForever());
    f.instance("unseen", "hb");
    // the watch never tells the pod runs: past its startup grace, its pod is read, and the run lives on
    f.awaitInstance("unseen", i -> at(i, 1, Phase.Running) && hasCondition(i, "Ready", "True", "Healthy"));
    f.holdsFor(Duration.ofSeconds(4), () -> f.get("unseen"),
        i -> at(i, 1, Phase.Running) && hasCondition(i, "Ready", "True", "Healthy"));
    assertThat(f.podsEverCreated("unseen")).containsExactly("unseen-1");
    assertThat(f.api.requests().matching(r -> "GET".equals(r.verb())
        && OperatorFixture.OPERATOR_AGENT.equals(r.userAgent()) && r.path().endsWith("/pods/unseen-1")))
        .as("the pod read before the run would have been ended").isNotEmpty();
  }

  /**
   * The pod watch hangs and the pod ends (exit 2, a message §4 does not retry): the agent stops renewing, so the run is
   * judged stale a timeout later; the pod read then shows how it ended, and that is what is decided on.
   */
  @Test
  void aPodThatEndedUnseenIsJudgedByHowItEndedOnceItsHeartbeatStops() {
    heartbeating("ended");
    hangWatches("pods");
    f.kubelet.terminate("ended-1", 2, "Error", "invalid_configuration: model name missing");
    AgentInstance after = f.awaitInstance("ended", i -> i.getStatus().lastFailure != null);
    assertThat(after.getStatus().lastFailure.failureClass).isEqualTo(InterruptionClass.ToolFailure);
    assertThat(after.getStatus().lastFailure.exitCode).isEqualTo(2);
    assertThat(after.getStatus().phase).as("invalid_configuration is not retried").isEqualTo(Phase.Failed);
  }

  /** The pod watch hangs and someone deletes the pod: found gone when read, it is a context reset, as with the watch. */
  @Test
  void aPodDeletedUnseenIsAContextResetAsWithTheWatch() {
    heartbeating("gone");
    hangWatches("pods");
    assertThat(f.kubelet.deleteBySomeoneElse("gone-1")).isTrue();
    AgentInstance after = f.awaitInstance("gone", i -> i.getStatus().lastFailure != null);
    assertThat(after.getStatus().lastFailure.failureClass).as(after.getStatus().lastFailure.failureReason)
        .isEqualTo(InterruptionClass.ContextReset);
  }

  /** The pod watch hangs and the pod fails: the next run is made and kept, the watch showing neither. */
  @Test
  void theNextRunIsMadeAndKeptWhileThePodWatchHangs() {
    heartbeating("next");
    hangWatches("pods");
    f.kubelet.terminate("next-1", 1, "Error", "temporary_error: tool crashed");
    // the next run's pod the watch shows Pending past its startup grace is read before it would be ended
    f.awaitInstance("next", i -> at(i, 2, Phase.Running) && hasCondition(i, "Ready", "True", "Healthy"));
    f.holdsFor(Duration.ofSeconds(4), () -> f.get("next"),
        i -> at(i, 2, Phase.Running) && hasCondition(i, "Ready", "True", "Healthy"));
    assertThat(f.podsEverCreated("next")).containsExactly("next-1", "next-2");
    assertThat(f.get("next").getStatus().lastFailure.exitCode).isEqualTo(1);
  }

  /**
   * Watches the API server (or a proxy) ends again and again: each is made again at the informer's last
   * resourceVersion (on this mock a re-watch sends every object as ADDED again). Two failures and a healthy run
   * come out as without the drops, each decision told once, and an instance at rest costs no write.
   */
  @Test
  void watchesDroppedAgainAndAgainLoseAndRepeatNothing() {
    f.policy("drop", """
        backoff: {type: Exponential, initialDelay: 300ms, maxDelay: 1s}
        maxRetries: 5
        heartbeat: {timeout: 2s}
        resetAfter: 10m
        """);
    java.util.concurrent.ScheduledExecutorService dropper =
        java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
    java.util.concurrent.atomic.AtomicInteger dropped = new java.util.concurrent.atomic.AtomicInteger();
    try {
      dropper.scheduleAtFixedRate(() -> dropped.addAndGet(f.api.dropWatches(r -> OperatorFixture.OPERATOR_AGENT
          .equals(r.getHeader("User-Agent")))), 0, 300, java.util.concurrent.TimeUnit.MILLISECONDS);
      f.kubelet.script("storm", Run.exit(1).after(Duration.ofMillis(500)), Run.exit(1).after(Duration.ofMillis(500)),
          Run.runForever().heartbeat(Duration.ofMillis(100)));
      f.instance("storm", "drop");
      AgentInstance done = f.awaitInstance("storm", i -> at(i, 3, Phase.Running)
          && hasCondition(i, "Ready", "True", "Healthy"));
      assertThat(done.getStatus().restarts).isEqualTo(2);
      assertThat(done.getStatus().attempt).isEqualTo(2);
      // at rest for three timeouts while the watches keep being made again: no write, no new run
      long writes = f.operatorWrites().size();
      f.holdsFor(Duration.ofSeconds(6), () -> f.get("storm"), i -> at(i, 3, Phase.Running)
          && hasCondition(i, "Ready", "True", "Healthy"));
      assertThat(f.operatorWrites()).as("operator writes at rest while its watches are dropped").hasSize((int) writes);
      assertThat(dropped.get()).as("watches dropped").isGreaterThan(10);
    } finally {
      dropper.shutdownNow();
    }
    assertThat(f.podsEverCreated("storm")).containsExactly("storm-1", "storm-2", "storm-3");
    java.util.Map<String, Long> events = new java.util.TreeMap<>();
    f.events("storm").forEach(e -> events.merge(e.getReason(), e.getSeries() == null ? 1L
        : (long) e.getSeries().getCount(), Long::sum));
    assertThat(events).as("one Event per decision").containsEntry("RestartFailed", 2L)
        .containsEntry("RestartStarted", 2L);
  }
}

package dev.respawn.policy;

import static dev.respawn.policy.EvaluatorFixture.reasons;
import static dev.respawn.policy.EvaluatorFixture.restartedByHand;
import static dev.respawn.policy.EvaluatorFixture.sim;
import static dev.respawn.policy.Specs.backoff;
import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.api.v1alpha1.Phase;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * api.md §3 step 3 and §6: an agent's restart request (exit code 42) and a restart by hand restart at once, not as a
 * failure; each request id is acted on once.
 */
class RestartRequestTest {
  @Test
  void step3ExitCode42RestartsAtOnceWithoutCountingAFailure() {
    AgentSim s = sim(Specs.window(Specs.spec(), 10, "1h")).started();
    Decision d = s.exit(42, "Error", "Load new GitConfig implementation");
    assertThat(d.start()).hasValueSatisfying(p -> assertThat(p.podName()).isEqualTo("coder-2"));
    assertThat(s.state.attempt).isZero();
    assertThat(s.state.circuit.failureTimes()).isEmpty();
    assertThat(s.state.restarts).isEqualTo(1);
    assertThat(s.state.recentRestarts).containsExactly(s.now);
    assertThat(s.state.lastRestart.kind()).isEqualTo(RestartKind.RestartRequest);
    assertThat(s.state.lastRestart.reason()).isEqualTo("Load new GitConfig implementation");
    assertThat(s.state.lastRestart.previousPod()).isEqualTo("coder-1");
    assertThat(s.state.lastRestart.pod()).isEqualTo("coder-2");
    assertThat(s.state.lastDecision.reasonCode()).isEqualTo(dev.respawn.policy.ReasonCode.RESTART_REQUESTED);
    assertThat(reasons(d)).contains("RestartRequested", "RestartStarted");
  }

  @Test
  void theRestartExitCodeIsConfigurable() {
    AgentSim s = sim(restartCode(3)).started();
    s.exit(3);
    assertThat(s.state.attempt).isZero();
    assertThat(s.state.run).isEqualTo(2);
    s.running();
    s.exit(42);
    assertThat(s.state.attempt).isEqualTo(1); // 42 is an ordinary failure now
  }

  private AgentRestartPolicySpec restartCode(int code) {
    AgentRestartPolicySpec spec = Specs.spec();
    spec.restartRequestExitCode = code;
    return spec;
  }

  @Test
  void aManualRestartEndsTheLiveRunOnceAndIsRecorded() {
    AgentSim s = sim(Specs.spec()).started();
    s.restartRequest = new Request("r-1", "load new tools");
    Decision d = s.reconcile();
    assertThat(d.deletePod()).isTrue();
    assertThat(s.state.handledRequests.get(dev.respawn.api.v1alpha1.OperatorRequest.RESTART)).isEqualTo("r-1");
    assertThat(s.state.lastRestart.requestId()).isEqualTo("r-1");
    assertThat(s.state.lastRestart.kind()).isEqualTo(RestartKind.Manual);
    assertThat(s.state.attempt).isZero();
    // the pod is gone (the simulation deletes at once): the next reconcile starts run 2
    Decision next = s.reconcile();
    assertThat(next.start()).hasValueSatisfying(p -> assertThat(p.run()).isEqualTo(2));
    s.running();
    // the annotation stays (GitOps): the same id is not acted on again
    assertThat(s.reconcile().deletePod()).isFalse();
    assertThat(s.state.run).isEqualTo(2);
  }

  /** §2 history: a live run ended by a restart request is in history as restarted, not as a failure. */
  @Test
  void aRunEndedByARestartRequestIsInHistoryAsRestarted() {
    AgentSim s = sim(Specs.spec()).started();
    s.restartRequest = new Request("r-1", null);
    s.reconcile();
    assertThat(s.state.history).last().satisfies(h -> {
      assertThat(h.pod()).isEqualTo("coder-1");
      assertThat(h.outcome()).isEqualTo(RunOutcome.Restarted);
      assertThat(h.reasonCode()).isEqualTo(ReasonCode.MANUAL_RESTART);
    });
    assertThat(s.state.attempt).isZero();
    assertThat(s.state.lastRestart.reason()).isEqualTo("restart requested");
  }

  /** A restart request seen with the run's failure: the failure is counted, the request skips its wait. */
  @Test
  void aRestartRequestThatArrivesWithAFailureSkipsTheFailuresWait() {
    AgentSim s = sim(Specs.spec()).started();
    s.restartRequest = new Request("r-1", null);
    Decision d = s.exit(1);
    assertThat(s.state.attempt).as("the failure counts").isEqualTo(1);
    assertThat(d.start()).as("restart now").hasValueSatisfying(p -> assertThat(p.run()).isEqualTo(2));
    assertThat(s.state.lastDecision.reasonCode()).isEqualTo(ReasonCode.MANUAL_RESTART);
    assertThat(s.state.history).last().extracting(InstanceState.RunInfo::outcome).isEqualTo(RunOutcome.Failure);

    AgentSim sidecars = sim(Specs.spec()).started();
    sidecars.restartRequest = new Request("r-1", null);
    Decision ended = sidecars.exitWhileSidecarsRun(1, "boom");
    assertThat(sidecars.state.attempt).as("an ending seen while sidecars run counts too").isEqualTo(1);
    assertThat(sidecars.state.history).last().extracting(InstanceState.RunInfo::outcome)
        .isEqualTo(RunOutcome.Failure);
    assertThat(ended.deletions()).as("its sidecars are ended").extracting(PodDeletion::name).containsExactly("coder-1");
    assertThat(sidecars.state.nextRestartAt).as("restart now, once the pod is gone").isEqualTo(sidecars.now);
  }

  /**
   * api.md §6, "restart now: ends a live run": asked for while the next run's pod runs but its start is not in
   * status yet (the write waits for its first sign), the request ends that run; it is not the restart that
   * started it.
   */
  @Test
  void aRestartRequestWhileANewRunsStartIsUnwrittenEndsThatRun() {
    AgentSim s = sim(Specs.window(backoff("Linear", "1s", 1.0, "10s"), 10, "1h")).started();
    s.exit(1);
    InstanceState shown = s.state.copy(); // Backoff, as status shows it
    assertThat(s.restartStillPending().deferStatus()).isTrue();
    s.state = shown; // the deferred write: status still shows the Backoff while coder-2 exists
    s.restartRequest = new Request("end-this-run", null);

    Decision d = s.evaluator.decide(s.policy, s.state, s.sighting(null), s.now, s.random);
    assertThat(d.state().run).as("the start made before is taken up").isEqualTo(2);
    assertThat(d.deletePod()).as("and the run it started is ended").isTrue();
    assertThat(d.deletions()).singleElement().satisfies(x -> assertThat(x.name()).isEqualTo("coder-2"));
    assertThat(d.startsExisting()).as("no pod made: its replacement comes once it is gone").isTrue();
    assertThat(d.start()).hasValueSatisfying(p -> assertThat(p.podName()).isEqualTo("coder-2"));
    assertThat(d.state().lastRestart.kind()).isEqualTo(RestartKind.Manual);
    assertThat(d.state().lastRestart.requestId()).isEqualTo("end-this-run");
    assertThat(d.state().lastRestart.previousPod()).isEqualTo("coder-2");
    assertThat(d.state().restarts).as("the failure's restart, then the request's").isEqualTo(1);
  }

  /**
   * The same request when the unwritten start's run has failed already: that failure is decided first (the
   * request does not end a run that is over), and the instance goes on: a start, or a wake-up for one.
   */
  @Test
  void aRestartRequestAfterAnUnwrittenStartsRunFailedLeavesNoStuckWait() {
    AgentSim s = sim(Specs.window(backoff("Linear", "10s", 1.0, "60s"), 10, "1h")).started();
    s.exit(1);
    InstanceState shown = s.state.copy();
    assertThat(s.restartStillPending().deferStatus()).isTrue();
    s.advance(Duration.ofSeconds(1));
    s.exit(1); // coder-2 fails before any reconcile saw it run
    s.state = shown;
    s.restartRequest = new Request("now-please", null);
    s.advance(Duration.ofMillis(10));

    Decision d = s.evaluator.decide(s.policy, s.state, s.sighting(null), s.now, s.random);
    assertThat(d.state().run).isEqualTo(2);
    assertThat(d.state().attempt).isEqualTo(2);
    assertThat(d.state().handledRequests.get(dev.respawn.api.v1alpha1.OperatorRequest.RESTART)).isEqualTo("now-please");
    assertThat(d.state().phase).isEqualTo(Phase.Backoff);
    assertThat(d.wakeAt()).as("woken for the next start").contains(d.state().nextRestartAt);
    assertThat(d.state().nextRestartAt).isAfter(s.now);
  }

  /**
   * The operator that acted on a request deleted the pod, then stopped before its status write: the next one sees
   * the pod gone and the request still new. That is the request's restart, once, not a failure (api.md §6).
   */
  @Test
  void aPodGoneWhileARestartRequestWaitsIsThatRestartNotAFailure() {
    AgentSim s = sim(Specs.spec()).started();
    s.restartRequest = new Request("r-1", "load new tools");
    Decision d = s.end(EndingKind.DELETED, "Deleted");
    assertThat(d.state().attempt).isZero();
    assertThat(d.state().lastFailure).isNull();
    assertThat(d.state().circuit.failureTimes()).isEmpty();
    assertThat(d.state().history).last().satisfies(h -> {
      assertThat(h.outcome()).isEqualTo(RunOutcome.Restarted);
      assertThat(h.reasonCode()).isEqualTo(ReasonCode.MANUAL_RESTART);
    });
    assertThat(d.state().lastRestart.kind()).isEqualTo(RestartKind.Manual);
    assertThat(d.state().lastRestart.requestId()).isEqualTo("r-1");
    assertThat(d.state().lastRestart.previousPod()).isEqualTo("coder-1");
    assertThat(d.start()).hasValueSatisfying(p -> assertThat(p.run()).isEqualTo(2));
    assertThat(d.state().restarts).isEqualTo(1);
  }

  /** With restartLimit's window full the request is refused, so a pod gone then went for another reason. */
  @Test
  void aPodGoneWhileARefusedRestartRequestWaitsIsAFailure() {
    AgentSim s = sim(Specs.window(Specs.spec(), 1, "1h")).started();
    s.restartRequest = new Request("r-1", null);
    assertThat(s.reconcile().deletePod()).isTrue();
    s.reconcile();
    s.running();
    s.restartRequest = new Request("r-2", null);
    Decision d = s.end(EndingKind.DELETED, "Deleted");
    assertThat(d.state().attempt).isEqualTo(1);
    assertThat(d.state().lastFailure).isNotNull();
    assertThat(d.state().history).last().extracting(InstanceState.RunInfo::outcome).isEqualTo(RunOutcome.Failure);
  }

  @Test
  void anEarlierRequestIdSetAgainIsNotActedOnAgain() {
    AgentSim s = sim(Specs.spec()).started();
    restartedByHand(s, "a", "b");
    assertThat(s.state.run).isEqualTo(3);
    // a GitOps revert puts "a" back: it was acted on already
    s.restartRequest = new Request("a", null);
    assertThat(s.reconcile().deletePod()).isFalse();
    assertThat(s.state.run).isEqualTo(3);
    assertThat(s.state.handledRequests.get(dev.respawn.api.v1alpha1.OperatorRequest.RESTART)).isEqualTo("b");
    assertThat(s.state.earlierRequests.get(dev.respawn.api.v1alpha1.OperatorRequest.RESTART)).containsExactly("a");
  }

  @Test
  void onlyTheLastTenEarlierRequestIdsAreRemembered() {
    InstanceState st = new InstanceState();
    for (int i = 0; i <= Bounds.EARLIER_REQUESTS + 1; i++) {
      st.handle(dev.respawn.api.v1alpha1.OperatorRequest.RESUME, "r" + i);
    }
    assertThat(st.earlierRequests.get(dev.respawn.api.v1alpha1.OperatorRequest.RESUME))
        .hasSize(Bounds.EARLIER_REQUESTS).startsWith("r1").endsWith("r10").doesNotContain("r0", "r11");
    assertThat(st.handled(dev.respawn.api.v1alpha1.OperatorRequest.RESUME, "r0")).isFalse();
    assertThat(st.handled(dev.respawn.api.v1alpha1.OperatorRequest.RESUME, "r5")).isTrue();
    assertThat(st.handled(dev.respawn.api.v1alpha1.OperatorRequest.RESUME, "r11")).isTrue();
  }

  @Test
  void aManualRestartSkipsABackoffWait() {
    AgentSim s = sim(Specs.spec()).started();
    s.exit(1);
    assertThat(s.state.phase).isEqualTo(Phase.Backoff);
    s.restartRequest = new Request("skip", null);
    assertThat(s.reconcile().start()).isPresent();
  }

  @Test
  void aManualRestartOfALiveRunIsAFreshStart() {
    AgentSim s = sim(Specs.spec()).started();
    s.checkpoint("ckpt-17", "in_progress", true, true);
    s.restartRequest = new Request("r-2", null);
    s.reconcile();
    assertThat(s.reconcile().start()).hasValueSatisfying(p -> assertThat(p.resumeCheckpoint()).isEmpty());
  }

  @Test
  void aManualRestartIsRefusedInATerminalPhase() {
    AgentSim s = sim(Specs.spec()).started();
    s.exit(2, "Error", "syntax_error");
    s.restartRequest = new Request("r-9", null);
    Decision d = s.reconcile();
    assertThat(d.start()).isEmpty();
    assertThat(d.notices()).anySatisfy(n -> {
      assertThat(n.type()).isEqualTo(EventType.Warning);
      assertThat(n.message()).contains("refused").contains("respawn.dev/resume");
    });
    assertThat(s.state.handledRequests.get(dev.respawn.api.v1alpha1.OperatorRequest.RESTART)).isEqualTo("r-9");
  }
}

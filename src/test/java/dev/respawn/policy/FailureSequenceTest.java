package dev.respawn.policy;

import static dev.respawn.policy.EvaluatorFixture.sim;
import static dev.respawn.policy.Specs.backoff;
import static dev.respawn.policy.Specs.retries;
import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.api.v1alpha1.HealthVerdict;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.policy.Decision.Notice;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * api.md §3 step 5 and §2: a failure sequence, from the failure that begins it to the run healthy for resetAfter that
 * ends it, and the maxAttempts that lastDecision shows within it and after it.
 */
class FailureSequenceTest {
  /** §2: firstFailureAt is "when the current failure sequence began", not when its latest failure was. */
  @Test
  void firstFailureAtStaysAtTheFailureThatBeganTheSequence() {
    AgentSim s = sim(retries(Specs.spec(), 5)).started();
    Instant first = s.now;
    s.exit(1);
    assertThat(s.state.firstFailureAt).isEqualTo(first);
    s.restartAndRun();
    s.advance(Duration.ofSeconds(10));
    s.exit(1);
    assertThat(s.state.attempt).isEqualTo(2);
    assertThat(s.state.firstFailureAt).isEqualTo(first);
  }

  @Test
  void failsTwiceThenRecoversOnTheThirdRun() {
    AgentSim s = sim(Specs.spec()).started();
    s.exit(1, "Error", "network_timeout");
    s.restartAndRun();
    s.exit(1, "Error", "network_timeout");
    s.restartAndRun();
    assertThat(s.state.run).isEqualTo(3);
    assertThat(s.state.attempt).isEqualTo(2);
    Decision waiting = s.reconcile();
    assertThat(waiting.wakeAt()).contains(s.state.runStartedAt.plus(Duration.ofSeconds(60)));
    s.now = s.state.runStartedAt.plus(Duration.ofSeconds(60));
    Decision healed = s.reconcile();
    assertThat(s.state.phase).isEqualTo(Phase.Running);
    assertThat(s.state.attempt).isZero();
    assertThat(s.state.circuit.state()).isEqualTo(CircuitState.Closed);
    assertThat(s.state.circuit.lastSuccessAt()).isEqualTo(s.now);
    assertThat(healed.notices()).filteredOn(n -> n.reason() == dev.respawn.policy.EventReason.RestartSucceeded).singleElement()
        .extracting(Notice::message).isEqualTo("[RST] Restart succeeded for coder on attempt 2");
    assertThat(s.state.restarts).isEqualTo(2);
  }

  /**
   * A restarted operator grants a live run a full timeout from its first look, but a grant is not a renewal:
   * an agent that last renewed before resetAfter ran out does not end its failure sequence by it.
   */
  @Test
  void anOperatorsGrantAfterItsRestartIsNotAHeartbeatHeardAfterResetAfter() {
    AgentSim s = sim(Specs.heartbeat(backoff("Linear", "1s", 1.0, "10s"), "60s", null)).started();
    s.heartbeat(HealthVerdict.Healthy);
    s.exit(1);
    s.restartAndRun();
    s.heartbeat(HealthVerdict.Healthy);
    s.reconcile(); // the first renewal's reconcile (a new holder): Ready, and healthy from now
    s.advance(Duration.ofSeconds(10));
    s.heartbeat(HealthVerdict.Healthy); // the agent's last renewal, then it hangs
    Instant lastRenewal = s.now;
    s.advance(Duration.ofSeconds(51)); // past resetAfter (the default 60 s of run time), within the timeout
    // a new operator process: it first sees that renewTime now
    s.lease = new LeaseView(lastRenewal, s.now, HealthVerdict.Healthy, null, null, null, null, null, true);
    s.reconcile();
    assertThat(s.state.attempt).as("the failure sequence stays open").isEqualTo(1);

    s.advance(Duration.ofSeconds(5));
    s.heartbeat(HealthVerdict.Healthy); // a renewal it hears
    s.reconcile();
    assertThat(s.state.attempt).as("closed by a renewal heard after resetAfter").isZero();
  }

  /**
   * An agent whose clock is an hour behind ours renews, Healthy, and is seen renewing: it is heard when it is
   * seen, and its failure sequence closes after resetAfter like any other's (its renewTime is never compared
   * with our clock).
   */
  @Test
  void anAgentWhoseClockIsBehindOursEndsItsFailureSequenceAfterResetAfter() {
    AgentSim s = sim(Specs.heartbeat(retries(Specs.spec(), 5), "60s", null)).started();
    s.exit(1);
    s.restartAndRun();
    assertThat(s.state.attempt).isEqualTo(1);
    for (int i = 0; i < 6; i++) {
      s.leaseHolder = s.pod.name();
      s.lease = new LeaseView(s.now.minus(Duration.ofHours(1)), s.now, HealthVerdict.Healthy, null, null, null,
          null, null);
      Decision d = s.reconcile();
      assertThat(d.liveness().ready()).isTrue();
      s.advance(Duration.ofSeconds(20));
    }
    assertThat(s.state.phase).isEqualTo(Phase.Running);
    assertThat(s.state.attempt).as("Ready and renewing for 2 minutes, resetAfter 60 s").isZero();
  }

  /** Suspended or done in an open failure sequence: lastDecision keeps the sequence's maxAttempts (not 0). */
  @Test
  void aStopInAnOpenSequenceKeepsItsMaxAttempts() {
    AgentSim s = sim(Specs.spec()).started(); // maxRetries 3
    s.end(EndingKind.TERMINATED, "OOMKilled"); // capped at 2 retries
    assertThat(s.state.lastDecision.maxAttempts()).isEqualTo(2);
    s.restartAndRun();
    s.suspend = true;
    s.reconcile();
    assertThat(s.state.phase).isEqualTo(Phase.Suspended);
    assertThat(s.state.lastDecision.maxAttempts()).as("the OOM cap of the open sequence").isEqualTo(2);
    AgentSim done = sim(Specs.spec()).started();
    done.exit(1);
    done.restartAndRun();
    done.exit(0);
    assertThat(done.state.phase).isEqualTo(Phase.Succeeded);
    assertThat(done.state.lastDecision.maxAttempts()).isEqualTo(3);
  }

  @Test
  void aRequestedRestartInsideAFailureSequenceIsNoFinalAttemptAndShowsTheSequencesMax() {
    AgentSim s = sim(Specs.spec()).started(); // maxRetries 3
    s.exit(1);
    s.restartAndRun();
    s.exit(42);
    assertThat(s.state.lastDecision.reasonCode()).isEqualTo(ReasonCode.RESTART_REQUESTED);
    assertThat(s.state.lastDecision.attempt()).isEqualTo(1);
    assertThat(s.state.lastDecision.maxAttempts()).isEqualTo(3);
    assertThat(s.state.lastDecision.finalAttempt()).isFalse();
    s.running(); // exit 42 restarts at once: the next run's pod exists
    s.restartRequest = new Request("r-1", null);
    s.reconcile();
    assertThat(s.state.lastDecision.reasonCode()).isEqualTo(ReasonCode.MANUAL_RESTART);
    assertThat(s.state.lastDecision.maxAttempts()).isEqualTo(3);
    assertThat(s.state.lastDecision.finalAttempt()).isFalse();
  }

  /**
   * §2 lastDecision.maxAttempts: a restart decided after the failure sequence ended counts against the policy's
   * maxRetries again, not the cap of the sequence that is over (OOMKilled: 2).
   */
  @Test
  void aRestartAfterTheSequenceEndedReportsThePolicysMaxRetries() {
    AgentSim s = sim(Specs.spec()).started(); // maxRetries 3, resetAfter 60s
    s.end(EndingKind.TERMINATED, "OOMKilled");
    assertThat(s.state.lastDecision.maxAttempts()).isEqualTo(2);
    s.restartAndRun();
    s.advance(Duration.ofSeconds(61));
    s.reconcile();
    assertThat(s.state.attempt).isZero();
    s.restartRequest = new Request("r-1", null);
    s.reconcile();
    assertThat(s.state.lastDecision.reasonCode()).isEqualTo(ReasonCode.MANUAL_RESTART);
    assertThat(s.state.lastDecision.maxAttempts()).isEqualTo(3);
  }
}

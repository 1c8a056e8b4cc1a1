package dev.respawn.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.api.v1alpha1.HealthVerdict;
import dev.respawn.api.v1alpha1.InterruptionClass;
import dev.respawn.api.v1alpha1.Phase;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** Heartbeats and the fail-closed liveness gate (api.md §5), through the entry point. */
class LivenessGateTest {
  static AgentSim withHeartbeat(String timeout, String grace) {
    return new AgentSim(AgentSim.policy(Specs.heartbeat(Specs.retries(new AgentRestartPolicySpec(), 5), timeout,
        grace)));
  }

  @Test
  void aFreshHealthyHeartbeatIsReadyAndTheOperatorWakesAtItsExpiry() {
    AgentSim s = withHeartbeat("60s", null).started();
    s.advance(Duration.ofSeconds(10));
    s.heartbeat(HealthVerdict.Healthy);
    Decision d = s.reconcile();
    assertThat(d.liveness().ready()).isTrue();
    assertThat(d.liveness().reason()).isEqualTo("Healthy");
    assertThat(d.wakeAt()).contains(s.now.plusSeconds(60).plusMillis(1));
    assertThat(s.state.heartbeat.verdict()).isEqualTo(HealthVerdict.Healthy);
  }

  @Test
  void noHeartbeatYetIsNotReadyButNotEndedWithinTheGrace() {
    AgentSim s = withHeartbeat("60s", "120s").started();
    s.advance(Duration.ofSeconds(90));
    Decision d = s.reconcile();
    assertThat(d.liveness().ready()).isFalse();
    assertThat(d.liveness().reason()).isEqualTo("StaleHeartbeat");
    assertThat(d.deletePod()).isFalse();
    s.advance(Duration.ofSeconds(31));
    Decision stale = s.reconcile();
    assertThat(stale.deletePod()).isTrue();
    assertThat(stale.notices()).extracting(Decision.Notice::reason).contains(dev.respawn.policy.EventReason.HeartbeatStale);
    assertThat(s.state.lastFailure.interruptionClass()).isEqualTo(InterruptionClass.Timeout);
    assertThat(s.state.lastFailure.failureReason()).isEqualTo("HealthCheckFailed");
  }

  @Test
  void aRunOlderThanTheOperatorProcessThatNeverRenewedGetsAFullTimeoutFromTheProcesssFirstLook() {
    AgentSim s = withHeartbeat("60s", "120s").started();
    s.advance(Duration.ofSeconds(90));
    s.reconcile();
    // the operator restarts; its first look comes after the startup grace ended (130 s after the start)
    s.advance(Duration.ofSeconds(40));
    Instant looked = s.now;
    s.lease = LeaseView.lookedAt(null, looked);
    Decision first = s.reconcile();
    assertThat(first.deletePod()).as("api.md §12: a restarted operator grants every live run a fresh timeout")
        .isFalse();
    assertThat(first.liveness().ready()).as("a made-up heartbeat would turn it Ready").isFalse();
    assertThat(first.liveness().message()).startsWith("waiting for the first heartbeat");
    assertThat(first.wakeAt()).contains(looked.plusSeconds(60).plusMillis(1));
    s.advance(Duration.ofSeconds(60));
    assertThat(s.reconcile().deletePod()).as("at the end of that timeout, exactly").isFalse();
    s.advance(Duration.ofMillis(1));
    Decision stale = s.reconcile();
    assertThat(stale.deletePod()).isTrue();
    assertThat(s.state.lastFailure.message()).contains("granted when this operator began to watch the run's heartbeat");
  }

  @Test
  void aFirstLookWithinTheStartupGraceKeepsTheLongerGrace() {
    AgentSim s = withHeartbeat("10s", "120s").started();
    Instant started = s.now;
    s.advance(Duration.ofSeconds(30));
    s.lease = LeaseView.lookedAt(null, s.now);
    Decision first = s.reconcile();
    assertThat(first.wakeAt()).contains(started.plusSeconds(120).plusMillis(1));
    s.now = started.plusSeconds(120).plusMillis(1);
    assertThat(s.reconcile().deletePod()).isTrue();
    assertThat(s.state.lastFailure.message()).contains("no heartbeat within the startup grace")
        .doesNotContain("granted");
  }

  @Test
  void stalenessIsJudgedByWhenTheOperatorSawRenewTimeChangeNotByTheAgentsClock() {
    AgentSim s = withHeartbeat("60s", null).started();
    // the agent's clock runs an hour ahead: its renewTime is in our future
    Instant skewed = s.now.plus(Duration.ofHours(1));
    s.lease = new LeaseView(skewed, null, HealthVerdict.Healthy, null, null, null, null, null);
    s.advance(Duration.ofSeconds(5));
    Decision fresh = s.reconcile();
    assertThat(fresh.wakeAt()).as("fresh for one timeout from when the operator saw it")
        .contains(s.now.plusSeconds(60).plusMillis(1));
    // no renewal since: the same renewTime 61 s later is stale, however far in the future it claims to be
    s.advance(Duration.ofSeconds(61));
    assertThat(s.reconcile().deletePod()).isTrue();
  }

  @Test
  void aRenewalThatChangesRenewTimeKeepsTheRunAlive() {
    AgentSim s = withHeartbeat("60s", null).started();
    for (int i = 0; i < 10; i++) {
      s.advance(Duration.ofSeconds(50));
      s.heartbeat(HealthVerdict.Healthy);
      assertThat(s.reconcile().deletePod()).isFalse();
    }
    assertThat(s.state.phase).isEqualTo(Phase.Running);
  }

  @Test
  void crashedAndStalledVerdictsEndTheRun() {
    AgentSim crashed = withHeartbeat("60s", null).started();
    crashed.heartbeat(HealthVerdict.Crashed);
    assertThat(crashed.reconcile().deletePod()).isTrue();
    assertThat(crashed.state.lastFailure.interruptionClass()).isEqualTo(InterruptionClass.ProcessCrash);

    AgentSim stalled = withHeartbeat("60s", null).started();
    stalled.heartbeat(HealthVerdict.Stalled);
    Decision d = stalled.reconcile();
    assertThat(d.deletePod()).isTrue();
    assertThat(stalled.state.lastFailure.interruptionClass()).isEqualTo(InterruptionClass.Timeout);
    assertThat(d.liveness().reason()).isEqualTo("UnhealthyVerdict");
  }

  @Test
  void betweenRunsReadyKeepsTheDenialThatEndedTheRunSoThePodsGoingChangesNothing() {
    AgentSim stalled = withHeartbeat("60s", null).started();
    stalled.heartbeat(HealthVerdict.Stalled);
    Decision ended = stalled.reconcile();
    assertThat(stalled.state.phase).isEqualTo(Phase.Backoff);
    assertThat(ended.liveness().reason()).isEqualTo("UnhealthyVerdict");
    assertThat(ended.liveness().message()).contains("Stalled", "next run at " + stalled.state.nextRestartAt);
    assertThat(stalled.reconcile().liveness()).as("the pod gone: same Ready, no status write").isEqualTo(ended.liveness());

    AgentSim stale = withHeartbeat("60s", null).started();
    stale.advance(Duration.ofSeconds(61));
    Decision staleEnd = stale.reconcile();
    assertThat(staleEnd.liveness().reason()).isEqualTo("StaleHeartbeat");
    assertThat(stale.reconcile().liveness()).isEqualTo(staleEnd.liveness());

    // the next run renews: its verdict is its own; a later plain exit waits as PodNotRunning
    stale.restartAndRun();
    stale.heartbeat(HealthVerdict.Healthy);
    stale.reconcile();
    Decision exited = stale.exit(1);
    assertThat(exited.liveness().reason()).isEqualTo("PodNotRunning");
    assertThat(stale.reconcile().liveness()).isEqualTo(exited.liveness());
  }

  @Test
  void aStalledRunThatEscalatesShowsTheTerminalDenialInItsFirstWrite() {
    AgentSim s = new AgentSim(AgentSim.policy(Specs.heartbeat(Specs.retries(new AgentRestartPolicySpec(), 0), "60s",
        null))).started();
    s.heartbeat(HealthVerdict.Stalled);
    Decision d = s.reconcile();
    assertThat(s.state.phase).isEqualTo(Phase.Escalated);
    assertThat(d.liveness().reason()).isEqualTo("RestartLimitExceeded");
    // the operator deletes the stalled pod to end the run: its logs go with it, so the checklist sends one to its
    // Events, not to kubectl logs (on-call tester)
    assertThat(d.deletions()).extracting(PodDeletion::why).containsExactly(PodDeletion.Why.END_RUN);
    assertThat(s.state.lastFailure.podDeleted()).isTrue();
    String pod = s.state.lastFailure.pod();
    assertThat(d.liveness().message()).contains("Inspect: pod " + pod + " was deleted to end the run, its logs with it",
        "--field-selector involvedObject.name=" + pod, "respawn.dev/resume").doesNotContain("kubectl logs");
    assertThat(s.reconcile().liveness()).isEqualTo(d.liveness());
  }

  /** A run that ends by itself keeps its pod for kubectl logs, and the checklist points there. */
  @Test
  void aRunThatExitedAndEscalatesIsInspectedWithKubectlLogs() {
    AgentSim s = new AgentSim(AgentSim.policy(Specs.retries(new AgentRestartPolicySpec(), 0))).started();
    Decision d = s.exit(1);
    assertThat(s.state.phase).isEqualTo(Phase.Escalated);
    assertThat(s.state.lastFailure.podDeleted()).isFalse();
    assertThat(d.deletions()).isEmpty();
    assertThat(d.liveness().message()).contains("Inspect: kubectl logs " + s.state.lastFailure.pod())
        .doesNotContain("was deleted");
  }

  @Test
  void anAmbiguousVerdictIsNotReadyButKeepsRunning() {
    AgentSim s = withHeartbeat("60s", null).started();
    s.heartbeat(HealthVerdict.Ambiguous);
    Decision d = s.reconcile();
    assertThat(d.liveness().ready()).isFalse();
    assertThat(d.liveness().reason()).isEqualTo("AmbiguousState");
    assertThat(d.deletePod()).isFalse();
  }

  @Test
  void withoutAHeartbeatTimeoutReadyFollowsThePod() {
    AgentSim s = new AgentSim(AgentSim.policy(new AgentRestartPolicySpec())).started();
    assertThat(s.last.liveness().ready()).isTrue();
    s.pod = new PodView(s.pod.name(), s.pod.uid(), PodView.Stage.RUNNING, s.pod.createdAt(), s.pod.startedAt(), null,
        null, false);
    Decision d = s.reconcile();
    assertThat(d.liveness().ready()).isFalse();
    assertThat(d.liveness().reason()).isEqualTo("PodNotReady");
    s.advance(Duration.ofDays(1));
    assertThat(s.reconcile().deletePod()).isFalse(); // no heartbeats required: never stale
  }

  /**
   * A condition's reason is an identifier (metav1.Condition; a CRD with that rule would refuse the whole status
   * write otherwise): a runtime's free text as a waiting reason is shown in the message instead.
   */
  @Test
  void aWaitingReasonThatIsNoIdentifierIsShownInTheMessage() {
    AgentSim s = withHeartbeat("60s", "120s");
    s.reconcile();
    s.pod = new PodView(s.pod.name(), s.pod.uid(), PodView.Stage.PENDING, s.now, null, "Image pull failed: 401",
        "unauthorized", false);
    s.advance(Duration.ofSeconds(30));
    Decision waiting = s.reconcile();
    assertThat(waiting.liveness().reason()).isEqualTo(LivenessGate.CONTAINER_WAITING);
    assertThat(waiting.liveness().message()).isEqualTo("waiting: Image pull failed: 401: unauthorized");
    s.pod = new PodView(s.pod.name(), s.pod.uid(), PodView.Stage.PENDING, s.now, null, "Err:Pull_2", null, false);
    assertThat(s.reconcile().liveness().reason()).as("an identifier is kept").isEqualTo("Err:Pull_2");
    s.pod = new PodView(s.pod.name(), s.pod.uid(), PodView.Stage.PENDING, s.now, null, "X".repeat(1025), null,
        false);
    assertThat(s.reconcile().liveness().reason()).as("too long").isEqualTo(LivenessGate.CONTAINER_WAITING);
  }

  @Test
  void aPodThatCannotStartShowsItsReasonAndFailsWhenTheGraceRunsOut() {
    AgentSim s = withHeartbeat("60s", "120s");
    s.reconcile();
    s.pod = new PodView(s.pod.name(), s.pod.uid(), PodView.Stage.PENDING, s.now, null, "ErrImagePull",
        "pull access denied", false);
    s.advance(Duration.ofSeconds(30));
    Decision waiting = s.reconcile();
    assertThat(waiting.liveness().reason()).isEqualTo("ErrImagePull");
    assertThat(waiting.liveness().message()).isEqualTo("pull access denied");
    assertThat(waiting.wakeAt()).contains(s.pod.createdAt().plusSeconds(120));
    s.advance(Duration.ofSeconds(90));
    Decision failed = s.reconcile();
    assertThat(failed.deletePod()).isTrue();
    assertThat(s.state.lastFailure.failureReason()).isEqualTo("InitializationFailed");
    assertThat(s.state.phase).isEqualTo(Phase.Backoff);
  }

  @Test
  void aPendingPodWithoutAnyGraceWaitsLikeKubernetesDoes() {
    AgentSim s = new AgentSim(AgentSim.policy(new AgentRestartPolicySpec()));
    s.reconcile();
    s.advance(Duration.ofHours(3));
    Decision d = s.reconcile();
    assertThat(d.deletePod()).isFalse();
    assertThat(s.state.phase).isEqualTo(Phase.Starting);
  }

  @Test
  void terminalPhasesAreNeverReady() {
    AgentSim s = new AgentSim(AgentSim.policy(new AgentRestartPolicySpec())).started();
    s.exit(2, "Error", "invalid_configuration");
    assertThat(s.last.liveness().ready()).isFalse();
    assertThat(s.last.liveness().reason()).isEqualTo("RestartLimitExceeded");
  }

  @Test
  void detailIsTruncatedOnAUtf8Boundary() {
    AgentSim s = withHeartbeat("60s", null).started();
    s.lease = new LeaseView(s.now, s.now, HealthVerdict.Healthy, "ü".repeat(1000), null, null, null, null);
    s.reconcile();
    assertThat(s.state.heartbeat.detail().getBytes(java.nio.charset.StandardCharsets.UTF_8)).hasSize(512);
  }

  @Test
  void anAgentThatRenewedOnceAndHungNeverEndsItsFailureSequence() {
    AgentSim s = withHeartbeat("60s", "120s").started();
    s.exit(1);
    s.restartAndRun();
    s.heartbeat(HealthVerdict.Healthy); // one renewal, then the agent hangs
    s.advance(Duration.ofSeconds(60)); // resetAfter (60s) passes while the heartbeat is still fresh
    Decision atResetAfter = s.reconcile();
    assertThat(s.state.attempt).as("no heartbeat since resetAfter began: not proven healthy").isEqualTo(1);
    assertThat(atResetAfter.notices()).extracting(Decision.Notice::reason).doesNotContain(dev.respawn.policy.EventReason.RestartSucceeded);
    s.advance(Duration.ofSeconds(60)); // the heartbeat is 120 s old, but the pod is within startupGrace
    assertThat(s.reconcile().deletePod()).as("fresh: within startupGrace of the pod's start").isFalse();
    s.advance(Duration.ofMillis(1));
    Decision stale = s.reconcile();
    assertThat(stale.deletePod()).isTrue();
    assertThat(s.state.attempt).isEqualTo(2);
  }

  @Test
  void aHeartbeatAfterResetAfterEndsTheFailureSequence() {
    AgentSim s = withHeartbeat("60s", "120s").started();
    s.exit(1);
    s.restartAndRun();
    s.heartbeat(HealthVerdict.Healthy);
    s.reconcile(); // the first renewal's reconcile (a new holder): Ready, and healthy from now
    s.advance(Duration.ofSeconds(61));
    s.heartbeat(HealthVerdict.Healthy);
    s.reconcile();
    assertThat(s.state.attempt).isZero();
  }

  /** api.md §3 step 5: healthy for resetAfter counts from the Healthy verdict, not from the run's start. */
  @Test
  void anAmbiguousStretchDoesNotCountAsHealthyTime() {
    AgentSim s = withHeartbeat("60s", "120s").started();
    s.exit(1);
    s.restartAndRun();
    for (int i = 0; i < 4; i++) { // Ambiguous for 75 s, renewing every 25 s: alive, not healthy
      s.heartbeat(HealthVerdict.Ambiguous);
      s.reconcile();
      s.advance(Duration.ofSeconds(25));
    }
    s.heartbeat(HealthVerdict.Healthy);
    s.reconcile();
    assertThat(s.state.attempt).as("Healthy only now").isEqualTo(1);
    Instant healthyFrom = s.now;
    s.advance(Duration.ofSeconds(40));
    s.heartbeat(HealthVerdict.Healthy);
    s.reconcile();
    assertThat(s.state.attempt).as("healthy for 40 s of a 60 s resetAfter").isEqualTo(1);
    s.advance(Duration.ofSeconds(20));
    s.heartbeat(HealthVerdict.Healthy);
    s.reconcile();
    assertThat(s.state.attempt).isZero();
    assertThat(s.state.circuit.lastSuccessAt()).isEqualTo(healthyFrom.plusSeconds(60));
  }

  @Test
  void pastResetAfterTheOperatorLooksAgainWhenTheNextRenewalIsDueNotATimeoutLater() {
    AgentSim s = withHeartbeat("60s", "120s").started();
    s.exit(1);
    s.restartAndRun();
    s.heartbeat(HealthVerdict.Healthy);
    s.reconcile(); // the first renewal's reconcile (a new holder): Ready, and healthy from now
    s.advance(Duration.ofSeconds(50));
    s.heartbeat(HealthVerdict.Healthy); // renewals every 50 s: the last one before resetAfter ends
    s.advance(Duration.ofSeconds(10));
    Decision atResetAfter = s.reconcile();
    assertThat(s.state.attempt).as("no renewal seen since resetAfter began").isEqualTo(1);
    // a renewal wakes nothing by itself: the operator looks again a third of the timeout later, not only at the
    // expiry check 60 s after the last renewal
    assertThat(atResetAfter.wakeAt()).contains(s.now.plusSeconds(20));
    s.advance(Duration.ofSeconds(15));
    s.heartbeat(HealthVerdict.Healthy);
    s.advance(Duration.ofSeconds(5));
    s.wake();
    assertThat(s.state.attempt).isZero();
  }

  @Test
  void stalledAndCrashedVerdictsEndTheRunEvenWithoutAHeartbeatTimeout() {
    AgentSim s = new AgentSim(AgentSim.policy(new AgentRestartPolicySpec())).started();
    s.heartbeat(HealthVerdict.Crashed);
    assertThat(s.reconcile().deletePod()).isTrue();
    assertThat(s.state.lastFailure.interruptionClass()).isEqualTo(InterruptionClass.ProcessCrash);
  }

  /**
   * §2 / §12: status.heartbeat "changes when the verdict or detail changes, never per renewal": since stays at the
   * verdict's first sighting across renewals; a new detail is shown with the same since; a new verdict moves since.
   */
  @Test
  void statusHeartbeatChangesWithTheVerdictOrDetailNeverPerRenewal() {
    AgentSim s = withHeartbeat("60s", "120s").started();
    s.heartbeat(HealthVerdict.Healthy);
    s.reconcile();
    Instant healthySince = s.now;
    assertThat(s.state.heartbeat.verdict()).isEqualTo(HealthVerdict.Healthy);
    assertThat(s.state.heartbeat.since()).isEqualTo(healthySince);
    s.advance(Duration.ofSeconds(20));
    s.heartbeat(HealthVerdict.Healthy);
    s.reconcile();
    assertThat(s.state.heartbeat.since()).as("a renewal changes nothing").isEqualTo(healthySince);
    s.advance(Duration.ofSeconds(20));
    s.leaseHolder = s.pod.name();
    s.lease = new LeaseView(s.now, s.now, HealthVerdict.Healthy, "step 3 of 5", null, null, null, null);
    s.reconcile();
    assertThat(s.state.heartbeat.detail()).isEqualTo("step 3 of 5");
    assertThat(s.state.heartbeat.since()).as("the verdict did not change").isEqualTo(healthySince);
    s.advance(Duration.ofSeconds(20));
    s.lease = new LeaseView(s.now, s.now, HealthVerdict.Ambiguous, "step 3 of 5", null, null, null, null);
    s.reconcile();
    assertThat(s.state.heartbeat.verdict()).isEqualTo(HealthVerdict.Ambiguous);
    assertThat(s.state.heartbeat.since()).isEqualTo(s.now);
  }

  /**
   * README (Heartbeat Lease): a Lease deleted during a run leaves the run its last renewal, "its verdict and detail
   * too": status.heartbeat does not change because the Lease is gone.
   */
  @Test
  void aLeaseDeletedDuringARunLeavesStatusHeartbeatAsItWas() {
    AgentSim s = withHeartbeat("60s", "120s").started();
    s.leaseHolder = s.pod.name();
    s.lease = new LeaseView(s.now, s.now, HealthVerdict.Healthy, "working", null, null, null, null);
    s.reconcile();
    InstanceState.HeartbeatInfo shown = s.state.heartbeat;
    assertThat(shown.verdict()).isEqualTo(HealthVerdict.Healthy);
    s.advance(Duration.ofSeconds(10));
    s.lease = null;
    s.reconcile();
    assertThat(s.state.heartbeat).isEqualTo(shown);
  }

  /** §5: fresh "within startupGrace of the pod's start": a pod slow to start (an image pull) keeps its whole grace. */
  @Test
  void theStartupGraceCountsFromThePodsStartNotItsCreation() {
    AgentSim s = withHeartbeat("30s", "60s");
    s.reconcile();
    Instant created = s.pod.createdAt();
    s.now = created.plusSeconds(50); // 50 s pulling the image
    s.running();
    s.now = created.plusSeconds(100); // 100 s after creation, 50 s after the start: within the grace
    Decision d = s.reconcile();
    assertThat(d.deletePod()).isFalse();
    assertThat(d.liveness().reason()).isEqualTo(LivenessGate.STALE);
    s.now = created.plusSeconds(111);
    assertThat(s.reconcile().deletePod()).as("stale past the start's grace").isTrue();
  }

  /** README: a run ended by a stale heartbeat shows heartbeat.verdict Stale "with why in detail". */
  @Test
  void aStaleRunSaysWhyInItsHeartbeatDetail() {
    AgentSim never = withHeartbeat("60s", "120s").started();
    never.advance(Duration.ofSeconds(121));
    assertThat(never.reconcile().deletePod()).isTrue();
    assertThat(never.state.heartbeat.verdict()).isEqualTo(HealthVerdict.Stale);
    assertThat(never.state.heartbeat.detail()).contains("no heartbeat within the startup grace");
    AgentSim stopped = withHeartbeat("60s", "120s").started();
    stopped.heartbeat(HealthVerdict.Healthy);
    Instant heard = stopped.now;
    stopped.reconcile();
    stopped.advance(Duration.ofSeconds(200));
    assertThat(stopped.reconcile().deletePod()).isTrue();
    assertThat(stopped.state.heartbeat.verdict()).isEqualTo(HealthVerdict.Stale);
    assertThat(stopped.state.heartbeat.detail()).contains("no heartbeat change seen since " + heard, "timeout 1m0s");
  }

  /** §5 respawn.dev/detail: the agent's words come with its verdict, into Ready's message and the failure's. */
  @Test
  void theAgentsDetailComesWithItsVerdict() {
    AgentSim s = withHeartbeat("60s", "120s").started();
    s.leaseHolder = s.pod.name();
    s.lease = new LeaseView(s.now, s.now, HealthVerdict.Healthy, "editing main.py", null, null, null, null);
    assertThat(s.reconcile().liveness().message()).isEqualTo("heartbeat fresh: editing main.py");
    s.advance(Duration.ofSeconds(5));
    s.lease = new LeaseView(s.now, s.now, HealthVerdict.Stalled, "tool call hung", null, null, null, null);
    assertThat(s.reconcile().deletePod()).isTrue();
    assertThat(s.state.lastFailure.message()).isEqualTo("the agent reported Stalled: tool call hung");
  }

  /**
   * §5 Ready between runs: after a run that the agent's Stalled verdict ended, Ready=False says UnhealthyVerdict (with
   * the agent's words) until the next run starts, not merely PodNotRunning.
   */
  @Test
  void betweenRunsReadyKeepsTheVerdictThatEndedTheLastRun() {
    AgentSim s = withHeartbeat("60s", "120s").started();
    s.advance(Duration.ofSeconds(5));
    s.leaseHolder = s.pod.name();
    s.lease = new LeaseView(s.now, s.now, HealthVerdict.Stalled, "tool call hung", null, null, null, null);
    Decision ended = s.reconcile();
    assertThat(s.state.phase).isEqualTo(Phase.Backoff);
    assertThat(ended.liveness().reason()).isEqualTo(LivenessGate.UNHEALTHY_VERDICT);
    assertThat(ended.liveness().message()).contains("Stalled: tool call hung", "next run at " + s.state.nextRestartAt);
  }
}

package dev.respawn.policy;

import static dev.respawn.policy.EvaluatorFixture.reasons;
import static dev.respawn.policy.EvaluatorFixture.sim;
import static dev.respawn.policy.Specs.retries;
import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.HealthVerdict;
import dev.respawn.api.v1alpha1.Phase;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * A run through the one entry point, from its start to its end: the pods it makes, takes up, keeps for logs and
 * deletes, each ending decided once, and decisions that depend on their inputs alone.
 */
class RunLifecycleTest {
  @Test
  void theFirstReconcileStartsRunOne() {
    AgentSim s = sim(Specs.spec());
    Decision d = s.reconcile();
    assertThat(d.start()).hasValueSatisfying(p -> {
      assertThat(p.run()).isEqualTo(1);
      assertThat(p.podName()).isEqualTo("coder-1");
      assertThat(p.attempt()).isZero();
      assertThat(p.resumeCheckpoint()).isEmpty();
    });
    assertThat(s.state.phase).isEqualTo(Phase.Starting);
    assertThat(s.state.restarts).isZero();
    assertThat(reasons(d)).doesNotContain("RestartStarted");
    s.running();
    assertThat(s.state.phase).isEqualTo(Phase.Running);
    assertThat(s.state.runStartedAt).isEqualTo(s.now);
    assertThat(s.last.liveness().ready()).isTrue();
  }

  @Test
  void runsThatEndBeforeRunningLeaveOnlyTheLastFinishedPod() {
    AgentSim s = sim(retries(Specs.spec(), 5));
    s.reconcile(); // coder-1 created, never seen running
    for (int run = 1; run <= 4; run++) {
      s.exit(1);
      if (run < 4) {
        s.restartStillPending();
      }
    }
    // every run started (it ran and ended): the pod before it was deleted, the last one kept for logs
    assertThat(s.decisions.stream().flatMap(d -> d.deletions().stream()).map(PodDeletion::name))
        .containsExactly("coder-1", "coder-2", "coder-3");
    assertThat(s.state.currentPod).isEqualTo("coder-4");
  }

  @Test
  void aRunThatEndedBeforeItWasSeenRunningStartedWithItsPod() {
    AgentSim s = sim(Specs.spec());
    s.reconcile(); // coder-1 created, never seen running
    Instant podStart = s.now.plusSeconds(2);
    s.advance(Duration.ofSeconds(5));
    s.pod = new PodView(s.pod.name(), s.pod.uid(), PodView.Stage.RUNNING, s.pod.createdAt(), podStart, null, null,
        false);
    s.exit(1); // reported only once it ended
    assertThat(s.state.history).last().extracting(InstanceState.RunInfo::startedAt).isEqualTo(podStart);
    s.restartStillPending(); // coder-2 created at nextRestartAt, never seen running
    Instant made = s.state.lastRestart.startedAt();
    s.advance(Duration.ofSeconds(1));
    s.end(EndingKind.DELETED, null); // its pod gone: only its start is known
    assertThat(s.state.history).last().satisfies(r -> {
      assertThat(r.pod()).isEqualTo("coder-2");
      assertThat(r.startedAt()).isEqualTo(made);
    });
  }

  /**
   * A decision that ends the live run is written to status before its pod is deleted: when the operator stopped in
   * between, the next decision sees the run recorded as ended and its pod still running. It deletes the pod again,
   * and decides nothing else (the run is no live run to take up, nor an ending to decide anew).
   */
  @Test
  void aRunRecordedAsEndedWhosePodStillRunsIsDeletedAndNothingElse() {
    for (boolean suspend : new boolean[] {false, true}) {
      AgentSim s = sim(Specs.spec()).started();
      s.suspend = suspend;
      s.restartRequest = suspend ? null : new Request("r1", null);
      Sighting podStillRunning = s.sighting(null);
      Decision ended = s.reconcile();
      assertThat(ended.deletePod()).as("suspend %s", suspend).isTrue();

      Decision again = s.evaluator.decide(s.policy, ended.state(), podStillRunning, s.now.plusSeconds(1), s.random);

      assertThat(again.deletePod()).as("suspend %s", suspend).isTrue();
      assertThat(again.start()).isEmpty();
      assertThat(again.notices()).isEmpty();
      assertThat(again.state()).as("suspend %s", suspend).isEqualTo(ended.state());
    }
  }

  /** §2: "A finished pod is kept for kubectl logs until the next run of the same instance has started". */
  @Test
  void aFinishedPodIsKeptForLogsUntilTheNextRunRuns() {
    AgentSim s = sim(Specs.spec()).started();
    s.exit(1);
    Decision created = s.restartStillPending(); // coder-2 created, not running yet
    assertThat(created.deletions()).isEmpty();
    s.advance(Duration.ofSeconds(1));
    assertThat(s.reconcile().deletions()).as("coder-2 still pending").isEmpty();
    Decision running = s.running();
    assertThat(running.deletions()).extracting(PodDeletion::name).containsExactly("coder-1");
    assertThat(running.deletions()).extracting(PodDeletion::why).containsExactly(PodDeletion.Why.FINISHED_EARLIER_RUN);
  }

  @Test
  void aSidecarPodOfARunThatEndedTheInstanceIsKeptForLogsUntilAResumeStartsTheNextRun() {
    AgentSim s = sim(Specs.spec()).started();
    Decision failed = s.exitWhileSidecarsRun(1, "syntax_error: bad plan");
    assertThat(s.state.phase).isEqualTo(Phase.Failed);
    assertThat(failed.deletions()).as("no next run follows: kept for kubectl logs").isEmpty();
    assertThat(s.reconcile().deletions()).isEmpty();
    s.resumeRequest = new Request("r-1", null);
    Decision resumed = s.reconcile();
    assertThat(resumed.deletions()).extracting(PodDeletion::name, PodDeletion::why)
        .containsExactly(org.assertj.core.groups.Tuple.tuple("coder-1", PodDeletion.Why.ENDED_BUT_LIVE));
    assertThat(resumed.start()).as("never two live pods").isEmpty();
    assertThat(s.reconcile().start()).hasValueSatisfying(p -> assertThat(p.podName()).isEqualTo("coder-2"));
  }

  @Test
  void aSidecarPodOfACleanExitIsKeptForLogs() {
    AgentSim s = sim(Specs.spec()).started();
    Decision succeeded = s.exitWhileSidecarsRun(0, null);
    assertThat(s.state.phase).isEqualTo(Phase.Succeeded);
    assertThat(succeeded.deletions()).isEmpty();
  }

  @Test
  void aSidecarPodOfARunThatIsRestartedIsDeletedAtOnce() {
    AgentSim s = sim(Specs.spec()).started();
    Decision failed = s.exitWhileSidecarsRun(1, "network_timeout: upstream");
    assertThat(s.state.phase).isEqualTo(Phase.Backoff);
    assertThat(failed.deletions()).extracting(PodDeletion::why).containsExactly(PodDeletion.Why.ENDED_BUT_LIVE);
  }

  /**
   * §2: "The operator adopts, ends or deletes only pods whose controller ownerReference is the instance's UID: a pod
   * that merely carries the labels is never touched" (not even one named as the next run and labelled with it).
   */
  @Test
  void aPodThatMerelyCarriesTheLabelsIsNeverAdoptedNorDeleted() {
    AgentSim s = sim(Specs.spec()).started();
    s.exit(1);
    s.now = s.state.nextRestartAt;
    PodView foreign = new PodView("coder-2", "foreign-uid", PodView.Stage.RUNNING, s.now.minusSeconds(1),
        s.now.minusSeconds(1), null, null, true);
    Sighting seen = s.sighting(null).withPod(new PodFacts(foreign, 2, "someone-else", java.util.Optional.empty()));
    Decision d = s.evaluator.decide(s.policy, s.state, seen, s.now, s.random);
    assertThat(d.startsExisting()).as("not adopted as run 2").isFalse();
    assertThat(d.deletions()).extracting(PodDeletion::uid).doesNotContain("foreign-uid");
    assertThat(d.state().phase).isNotEqualTo(Phase.Running);
  }

  @Test
  void eachEndingIsCountedOnceHoweverOftenItIsReported() {
    AgentSim s = sim(Specs.spec()).started();
    RunEnding e = new RunEnding("coder-1", s.pod.uid(), EndingKind.TERMINATED, 1, "Error", null, s.now);
    s.reconcile(e);
    InstanceState after = s.state;
    Decision again = s.reconcile(e);
    assertThat(again.state()).isEqualTo(after);
    assertThat(again.notices()).isEmpty();
    assertThat(s.state.attempt).isEqualTo(1);
  }

  @Test
  void endingsOfOtherPodsAreIgnored() {
    AgentSim s = sim(Specs.spec()).started();
    Decision d = s.reconcile(new RunEnding("coder-0", "other", EndingKind.TERMINATED, 1, "Error", null, s.now));
    assertThat(d.state().attempt).isZero();
    assertThat(d.state().phase).isEqualTo(Phase.Running);
  }

  @Test
  void theGivenStateIsNeverChanged() {
    AgentSim s = sim(Specs.spec()).started();
    InstanceState before = s.state;
    InstanceState copy = before.copy();
    s.exit(1);
    assertThat(before).isEqualTo(copy);
    assertThat(s.state).isNotSameAs(before);
  }

  /**
   * README (Heartbeat): "a Stalled or Crashed verdict stays shown" after the run it ended, also once the next run has
   * started, until a run renews again; a Healthy verdict is not carried over to a run that has not renewed yet.
   */
  @Test
  void aStalledVerdictStaysShownAcrossTheNextStartAHealthyOneDoesNot() {
    AgentSim stalled = sim(Specs.heartbeat(retries(Specs.spec(), 5), "60s", "120s")).started();
    stalled.heartbeat(HealthVerdict.Stalled);
    assertThat(stalled.reconcile().deletePod()).isTrue();
    stalled.restartStillPending();
    assertThat(stalled.state.heartbeat.verdict()).isEqualTo(HealthVerdict.Stalled);
    AgentSim healthy = sim(Specs.heartbeat(retries(Specs.spec(), 5), "60s", "120s")).started();
    healthy.heartbeat(HealthVerdict.Healthy);
    healthy.reconcile();
    healthy.exit(1);
    assertThat(healthy.state.heartbeat.verdict()).isEqualTo(HealthVerdict.Healthy);
    healthy.restartStillPending();
    assertThat(healthy.state.heartbeat).isNull();
  }
}

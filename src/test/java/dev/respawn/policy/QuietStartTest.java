package dev.respawn.policy;

import static dev.respawn.policy.EvaluatorFixture.sim;
import static dev.respawn.policy.Specs.backoff;
import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.InterruptionClass;
import dev.respawn.api.v1alpha1.Phase;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * api.md §5 and §12: when a new run's start is written to status: with the run's first sign or after the quiet start at
 * the latest, with heartbeats Running and Ready in one write; its startup grace counts from the pod's start.
 */
class QuietStartTest {
  @Test
  void aFreshStartWakesAtTheEndOfItsStartupGraceWithoutWaitingForThePodToChange() {
    AgentSim s = sim(Specs.heartbeat(Specs.spec(), "30s", "2m"));
    Decision first = s.reconcile();
    assertThat(first.start()).isPresent();
    assertThat(first.wakeAt()).as("a pod nothing touches still fails on time")
        .contains(s.now.plus(Duration.ofMinutes(2)).plusSeconds(1));
  }

  @Test
  void aStartIsWrittenWithTheRunsFirstSignOrAfterTheQuietStartAtTheLatest() {
    AgentSim s = sim(Specs.spec()).started();
    s.exit(1);
    InstanceState waiting = s.state.copy();
    s.now = s.state.nextRestartAt;
    Decision start = s.reconcile();
    assertThat(start.start()).isPresent();
    assertThat(start.deferStatus()).as("api.md §12: no write of its own for a start").isTrue();
    assertThat(start.wakeAt()).contains(s.now.plus(QuietStart.QUIET_START));
    s.state = waiting; // what status still says: the start was not written
    s.advance(QuietStart.QUIET_START.minusSeconds(1));
    Decision quiet = s.reconcile();
    assertThat(quiet.start()).as("the pod exists").hasValueSatisfying(p -> assertThat(p.run()).isEqualTo(2));
    assertThat(quiet.startsExisting()).isTrue();
    assertThat(quiet.deferStatus()).as("its pod still shows no sign, within the quiet start").isTrue();
    s.state = waiting;
    s.advance(Duration.ofSeconds(1));
    Decision shown = s.reconcile();
    assertThat(shown.deferStatus()).as("a pod that nothing starts for so long is news").isFalse();
    assertThat(shown.state().phase).isEqualTo(Phase.Starting);
    assertThat(shown.state().run).isEqualTo(2);
    assertThat(shown.state().currentPod).isEqualTo("coder-2");
  }

  @Test
  void withHeartbeatsARestartIsWrittenOnceItsAgentRenewsRunningAndReadyInOneWrite() {
    AgentSim s = sim(Specs.heartbeat(Specs.spec(), "30s", "2m")).started();
    s.heartbeat(dev.respawn.api.v1alpha1.HealthVerdict.Healthy);
    s.reconcile();
    s.exit(1);
    InstanceState waiting = s.state.copy();
    s.now = s.state.nextRestartAt;
    assertThat(s.reconcile().deferStatus()).isTrue();
    s.state = waiting; // what status still says: the start was not written
    s.advance(Duration.ofSeconds(2));
    Decision running = s.running();
    assertThat(running.startsExisting()).isTrue();
    assertThat(running.state().phase).isEqualTo(Phase.Running);
    assertThat(running.deferStatus()).as("running, but its agent has not renewed yet: not Ready").isTrue();
    assertThat(running.wakeAt()).contains(s.now.plus(QuietStart.FIRST_RENEWAL));
    s.state = waiting;
    s.advance(Duration.ofSeconds(1));
    s.heartbeat(dev.respawn.api.v1alpha1.HealthVerdict.Healthy);
    Decision ready = s.reconcile();
    assertThat(ready.deferStatus()).as("Running and Ready: one write").isFalse();
    assertThat(ready.state().phase).isEqualTo(Phase.Running);
    assertThat(ready.state().run).isEqualTo(2);
    assertThat(ready.liveness().ready()).isTrue();
  }

  @Test
  void withHeartbeatsAPodThatRunsJustBeforeTheQuietStartEndsStillWaitsForItsAgentsFirstRenewal() {
    AgentSim s = sim(Specs.heartbeat(Specs.spec(), "30s", "2m")).started();
    InstanceState waiting = s.failedAndRestartUnwritten();
    Instant made = s.now;
    s.now = made.plus(QuietStart.QUIET_START).minusSeconds(1);
    Decision running = s.running();
    assertThat(running.deferStatus()).as("it runs, within the quiet start").isTrue();
    assertThat(running.wakeAt()).contains(s.now.plus(QuietStart.FIRST_RENEWAL));
    s.state = waiting;
    s.now = made.plus(QuietStart.QUIET_START).plusSeconds(1);
    assertThat(s.reconcile().deferStatus())
        .as("past the quiet start, but its agent still has time to renew: Running and Ready stay one write")
        .isTrue();
    s.state = waiting;
    s.heartbeat(dev.respawn.api.v1alpha1.HealthVerdict.Healthy);
    Decision ready = s.reconcile();
    assertThat(ready.deferStatus()).isFalse();
    assertThat(ready.state().run).isEqualTo(2);
    assertThat(ready.liveness().ready()).isTrue();
  }

  @Test
  void withHeartbeatsARunThatDoesNotRenewSoonAfterItsStartIsShownRunningAndWaitingForIt() {
    AgentSim s = sim(Specs.heartbeat(Specs.spec(), "30s", "2m")).started();
    s.exit(1);
    InstanceState waiting = s.state.copy();
    s.now = s.state.nextRestartAt;
    s.reconcile();
    s.state = waiting;
    s.advance(Duration.ofSeconds(1));
    assertThat(s.running().deferStatus()).isTrue();
    Instant started = s.now;
    s.state = waiting;
    s.now = started.plus(QuietStart.FIRST_RENEWAL).minusMillis(1);
    assertThat(s.reconcile().deferStatus()).isTrue();
    s.state = waiting;
    s.now = started.plus(QuietStart.FIRST_RENEWAL);
    Decision shown = s.reconcile();
    assertThat(shown.deferStatus()).isFalse();
    assertThat(shown.state().phase).isEqualTo(Phase.Running);
    assertThat(shown.liveness().ready()).isFalse();
    assertThat(shown.liveness().reason()).isEqualTo(LivenessGate.STALE);
    assertThat(shown.liveness().message()).startsWith("waiting for the first heartbeat");
  }

  @Test
  void theStartupGraceCountsFromThePodsStartNotFromTheLaterWriteThatShowsItRunning() {
    // api.md §5: fresh "within startupGrace of the pod's start"; the status write waits for a first renewal
    // (half the grace here, 2.5 s), and that wait must not stretch the grace
    AgentSim s = sim(Specs.heartbeat(Specs.spec(), "30s", "5s")).started();
    InstanceState waiting = s.failedAndRestartUnwritten();
    s.advance(Duration.ofSeconds(1));
    Instant started = s.now;
    assertThat(s.running().deferStatus()).isTrue();
    s.state = waiting;
    s.now = started.plus(Duration.ofMillis(2500));
    Decision shown = s.reconcile();
    assertThat(shown.deferStatus()).isFalse();
    assertThat(shown.state().phase).isEqualTo(Phase.Running);
    assertThat(shown.state().runStartedAt).isEqualTo(started);
    s.state = shown.state();
    s.now = started.plus(Duration.ofSeconds(5)).minusMillis(1);
    assertThat(s.reconcile().state().run).as("within the grace").isEqualTo(2);
    assertThat(s.state.phase).isEqualTo(Phase.Running);
    s.now = started.plus(Duration.ofSeconds(5)).plusMillis(1);
    Decision stale = s.reconcile();
    assertThat(stale.state().lastFailure).isNotNull();
    assertThat(stale.state().lastFailure.pod()).isEqualTo(shown.state().currentPod);
    assertThat(stale.state().lastFailure.interruptionClass()).isEqualTo(InterruptionClass.Timeout);
  }

  @Test
  void aNodeClockBehindShortensTheGraceByTheFirstRenewalsWaitAtMost() {
    AgentSim s = sim(Specs.heartbeat(Specs.spec(), "30s", "10s")).started();
    InstanceState waiting = s.failedAndRestartUnwritten();
    s.advance(Duration.ofSeconds(20)); // a slow image pull, then the kubelet stamps its start a minute early
    s.running();
    s.pod = new PodView(s.pod.name(), s.pod.uid(), PodView.Stage.RUNNING, s.pod.createdAt(),
        s.now.minusSeconds(60), null, null, true);
    s.state = waiting;
    Decision shown = s.reconcile();
    assertThat(shown.state().phase).isEqualTo(Phase.Running);
    assertThat(shown.state().runStartedAt).isEqualTo(s.now.minus(QuietStart.FIRST_RENEWAL));
  }

  @Test
  void withHeartbeatsAnImmediateRestartsRunIsWrittenRunningAndReadyInOneWrite() {
    AgentSim s = sim(Specs.heartbeat(backoff("Immediate", "1s", 2.0, "10s"), "30s", "2m"))
        .started();
    Decision failed = s.exit(1);
    assertThat(failed.start()).as("the failure and its Immediate restart: one decision, one write").isPresent();
    assertThat(failed.deferStatus()).isFalse();
    InstanceState starting = s.state.copy();
    assertThat(starting.phase).isEqualTo(Phase.Starting);
    s.advance(Duration.ofSeconds(1));
    Decision running = s.running();
    assertThat(running.state().phase).isEqualTo(Phase.Running);
    assertThat(running.deferStatus()).as("running, its agent has not renewed yet").isTrue();
    assertThat(running.wakeAt()).as("a few seconds for the first renewal")
        .contains(s.now.plus(QuietStart.FIRST_RENEWAL));
    s.state = starting; // not written
    s.advance(Duration.ofSeconds(1));
    s.heartbeat(dev.respawn.api.v1alpha1.HealthVerdict.Healthy);
    Decision ready = s.reconcile();
    assertThat(ready.deferStatus()).isFalse();
    assertThat(ready.state().phase).isEqualTo(Phase.Running);
    assertThat(ready.liveness().ready()).isTrue();
  }

  @Test
  void aRunThatDoesNotRenewIsShownRunningHalfItsStartupGraceAfterItsStartWellBeforeItEndsStale() {
    AgentSim s = sim(Specs.heartbeat(backoff("Immediate", "1s", 2.0, "10s"), "30s", "4s"))
        .started();
    s.exit(1);
    InstanceState starting = s.state.copy();
    Decision running = s.running(); // the pod starts now
    Instant started = s.now;
    assertThat(running.deferStatus()).isTrue();
    assertThat(running.wakeAt()).contains(started.plusSeconds(2));
    s.state = starting;
    s.now = started.plusSeconds(2);
    Decision shown = s.reconcile();
    assertThat(shown.deferStatus()).isFalse();
    assertThat(shown.state().phase).isEqualTo(Phase.Running);
    assertThat(shown.liveness().reason()).isEqualTo(LivenessGate.STALE);
  }

  @Test
  void withoutHeartbeatsARunIsWrittenAsSoonAsItRuns() {
    AgentSim s = sim(backoff("Immediate", "1s", 2.0, "10s")).started();
    s.exit(1);
    s.advance(Duration.ofSeconds(1));
    Decision running = s.running();
    assertThat(running.state().phase).isEqualTo(Phase.Running);
    assertThat(running.deferStatus()).isFalse();
  }
}

package dev.respawn.policy;

import static dev.respawn.policy.Fleet.OUTAGE;
import static dev.respawn.policy.Fleet.modelApiPolicy;
import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.policy.Fleet.Member;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * api.md §11 over a small fleet in virtual time: a blamed failure skips step i while it waits, but its release, a
 * restart by hand or the dependency leaving the policy never restarts it past restartLimit's maxRestarts.
 */
class FleetRestartLimitTest {
  /**
   * restartLimit is a "sliding window over ALL restarts, of every kind" (§1): a failure blamed on an Open dependency
   * skips step i, and its release later must not restart the instance past maxRestarts (it escalates instead).
   */
  @Test
  void aWaitingInstanceReleasedWithItsRestartLimitWindowFullDoesNotRestartPastMaxRestarts() {
    Fleet f = new Fleet(modelApiPolicy("restartLimit: {maxRestarts: 2, window: 1h}\n",
        "failureThreshold: 1\nopenDuration: 30s\n"), "a", "control");
    f.startAll();
    // two restarts each (the agent asks for them: exit 42): the window is full
    for (int i = 0; i < 2; i++) {
      f.now = f.now.plusSeconds(5);
      for (String n : List.of("a", "control")) {
        f.exit(n, 42);
        f.running(n);
      }
    }
    assertThat(f.m("a").state.restarts).isEqualTo(2);
    f.settle();
    // control: an ordinary failure with the window full escalates (step i)
    f.now = f.now.plusSeconds(5);
    f.fail("control", "disk full");
    assertThat(f.m("control").state.phase).isEqualTo(Phase.Escalated);
    assertThat(f.m("control").last.reasonCode()).isEqualTo(ReasonCode.RESTART_LIMIT_EXCEEDED);
    // a: its failure is blamed on model-api and opens it: it waits, then is the probe
    f.fail("a", OUTAGE);
    assertThat(f.m("a").state.phase).isEqualTo(Phase.CircuitOpen);
    f.settle();
    f.runUntil(f.now.plus(Duration.ofMinutes(5)));
    Member a = f.m("a");
    assertThat(a.state.restarts).as("restarts of a within restartLimit.window 1h (pods created at %s, phase %s)",
        a.podsCreated, a.state.phase).isLessThanOrEqualTo(2);
  }

  /** Instance a, restarted once (exit 42) under maxRestarts 1, now waits for model-api that its failure opened. */
  static Fleet waitingWithItsWindowFull() {
    Fleet f = new Fleet(modelApiPolicy("restartLimit: {maxRestarts: 1, window: 1h}\n",
        "failureThreshold: 1\nopenDuration: 30s\n"), "a");
    f.startAll();
    f.now = f.now.plusSeconds(5);
    f.exit("a", 42);
    f.running("a"); // one restart: the window is full
    f.now = f.now.plusSeconds(5);
    f.fail("a", OUTAGE); // opens model-api: a waits (its failure skipped step i)
    assertThat(f.m("a").state.phase).isEqualTo(Phase.CircuitOpen);
    return f;
  }

  /** The same when the wait ends because the dependency left the policy: the window is still full. */
  @Test
  void aWaitEndedByTheDependencyLeavingThePolicyDoesNotRestartPastMaxRestarts() {
    Fleet f = waitingWithItsWindowFull();
    Member a = f.m("a");
    f.policy = Fleet.policyOf("restartLimit: {maxRestarts: 1, window: 1h}\n"); // no dependencies any more
    Decision d = f.reconcile("a");
    assertThat(d.start()).as("no restart past maxRestarts").isEmpty();
    assertThat(a.state.phase).isEqualTo(Phase.Escalated);
    assertThat(d.reasonCode()).isEqualTo(ReasonCode.RESTART_LIMIT_EXCEEDED);
  }

  /**
   * A restart by hand of an instance waiting for a shared dependency with its restartLimit window full is refused
   * (its blamed failure skipped step i): it waits as before, and never restarts past maxRestarts.
   */
  @Test
  void aRestartByHandOfADependencyWaitDoesNotRestartPastMaxRestarts() {
    Fleet f = waitingWithItsWindowFull();
    Member a = f.m("a");
    f.settle();
    assertThat(a.state.phase).isEqualTo(Phase.CircuitOpen);
    f.now = f.now.plusSeconds(5);
    a.restart = new Request("r-1", null); // kubectl respawn restart a
    Decision d = f.reconcile("a");
    assertThat(a.state.restarts).as("restarts within restartLimit.window 1h (maxRestarts 1); pods created at %s",
        a.podsCreated).isLessThanOrEqualTo(1);
  }

  /**
   * §11 + README: a waiter's turn with its restart window full escalates it (restart_limit_exceeded), as any other
   * restart would, and lastDecision says so.
   */
  @Test
  void aWaiterWhoseTurnComesWithItsWindowFullIsEscalatedWithThatCode() {
    Fleet f = waitingWithItsWindowFull();
    f.settle();
    f.runUntil(f.now.plus(Duration.ofMinutes(2)));
    Member a = f.m("a");
    assertThat(a.state.phase).isEqualTo(Phase.Escalated);
    assertThat(a.state.lastDecision.reasonCode()).isEqualTo(ReasonCode.RESTART_LIMIT_EXCEEDED);
    assertThat(a.state.lastDecision.action()).isEqualTo(DecisionAction.Escalate);
  }
}

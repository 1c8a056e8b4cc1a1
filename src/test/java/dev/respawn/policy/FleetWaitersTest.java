package dev.respawn.policy;

import static dev.respawn.policy.Fleet.OUTAGE;
import static dev.respawn.policy.Fleet.T0;
import static dev.respawn.policy.Fleet.modelApiPolicy;
import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.api.v1alpha1.TerminalReason;
import dev.respawn.policy.Fleet.Member;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * api.md §11 over a small fleet in virtual time: while the circuit is Open every instance blamed on it waits until
 * halfOpenAt, also one suspended meanwhile or under its own open circuit breaker, and its turn comes also when the
 * circuit's writer steps late.
 */
class FleetWaitersTest {
  /**
   * api.md §11 "Open: every instance blamed on it waits": also one whose counted blamed failure (the dependency was
   * still Closed) opened its own circuit breaker; it does not restart into the outage at its own trial time.
   */
  @Test
  void anInstanceWhoseOwnCircuitIsOpenAndWhoseFailureWasBlamedWaitsForTheOpenDependencyToo() {
    Fleet f = new Fleet(modelApiPolicy("maxRetries: 5\n"
        + "circuitBreaker: {failureThreshold: 1, window: 10m, openDuration: 5s}\n",
        "failureThreshold: 3\nwindow: 1m\nopenDuration: 30s\n"), "a", "b", "c");
    f.startAll();
    f.now = T0.plusSeconds(10);
    f.fail("a", OUTAGE); // dependency still Closed: counted, and its own circuit (threshold 1) opens
    assertThat(f.m("a").state.phase).isEqualTo(Phase.CircuitOpen);
    assertThat(f.m("a").state.lastFailure.dependency()).isEqualTo("model-api");
    f.settle();
    f.now = T0.plusSeconds(11);
    f.fail("b", OUTAGE);
    f.settle();
    f.now = T0.plusSeconds(12);
    f.fail("c", OUTAGE); // the third distinct instance: the shared circuit opens
    f.settle();
    DependencyCircuit open = f.circuit("model-api");
    assertThat(open.state()).isEqualTo(CircuitState.Open);
    Instant halfOpenAt = open.halfOpenAt();
    assertThat(halfOpenAt).isEqualTo(T0.plusSeconds(42));
    // a's own trial time (T0+15s) comes long before the dependency's halfOpenAt (T0+42s)
    f.runUntil(T0.plusSeconds(20));
    assertThat(f.circuit("model-api").state()).isEqualTo(CircuitState.Open);
    for (String name : List.of("a", "b", "c")) {
      Member m = f.m(name);
      assertThat(m.podsCreated).as("%s: no restart into the outage before halfOpenAt (pods created at %s)", name,
          m.podsCreated).hasSize(1);
      assertThat(m.state.waitingFor).as("%s: status.waitingFor", name).isEqualTo("model-api");
      assertThat(m.state.nextRestartAt).as("%s: nextRestartAt = halfOpenAt", name).isEqualTo(halfOpenAt);
    }
  }

  /**
   * A circuit its one writer first steps openDuration or more after the failures that opened it (the operator was
   * away, a queued step) still goes HalfOpen, and its waiter restarts: no Open forever.
   */
  @Test
  void aCircuitOpenedLateStillGoesHalfOpenAndItsWaiterRestarts() {
    Fleet f = new Fleet(modelApiPolicy("", "failureThreshold: 1\nopenDuration: 30s\n"), "a");
    f.startAll();
    f.now = T0.plusSeconds(10);
    Decision waits = f.fail("a", OUTAGE); // this very failure opens it: d2, waits until T0+40s
    assertThat(waits.reasonCode()).isEqualTo(ReasonCode.DEPENDENCY_CIRCUIT_OPEN);
    assertThat(f.m("a").state.nextRestartAt).isEqualTo(T0.plusSeconds(40));
    // the operator is away for 40 s (within window, past openDuration); the new process's policy reconciler steps
    // the circuit first
    f.now = T0.plusSeconds(50);
    FleetCircuits.Result late = f.step();
    f.reconcile("a"); // the new process's first look at the instance
    f.settle(); // and whatever that triggers
    f.runUntil(T0.plusSeconds(600));
    assertThat(f.m("a").podsCreated).as("a's restart (due at T0+40s; circuit %s, step wake-up %s, a's wake-up %s)",
        f.circuit("model-api"), late.wakeAt(), f.m("a").last.wakeAt()).hasSize(2);
  }

  /**
   * A waiting instance suspended and unsuspended while the dependency is still Open waits again in its place: it does
   * not restart into the outage ahead of the probes (§11: every instance blamed on it waits).
   */
  @Test
  void aWaitingInstanceSuspendedAndUnsuspendedWhileTheDependencyIsOpenKeepsWaiting() {
    Fleet f = new Fleet(modelApiPolicy("", "failureThreshold: 1\nopenDuration: 30s\n"), "a");
    f.startAll();
    f.now = T0.plusSeconds(10);
    f.fail("a", OUTAGE);
    f.settle();
    assertThat(f.circuit("model-api").state()).isEqualTo(CircuitState.Open);
    Instant halfOpenAt = f.circuit("model-api").halfOpenAt();
    f.now = T0.plusSeconds(15);
    f.m("a").suspend = true;
    f.edited("a");
    assertThat(f.m("a").state.phase).isEqualTo(Phase.Suspended);
    f.now = T0.plusSeconds(20);
    f.m("a").suspend = false;
    f.edited("a");
    assertThat(f.circuit("model-api").state()).as("nothing probed it yet").isEqualTo(CircuitState.Open);
    assertThat(f.m("a").podsCreated).as("a restarted while model-api is Open (halfOpenAt %s), pods created at %s",
        halfOpenAt, f.m("a").podsCreated).hasSize(1);
  }

  /**
   * §11 and README: an agent suspended while it waits and unsuspended while the circuit is still Open "waits again, in
   * its place": status says so (dependency_circuit_open) and the restart it waits for is the unsuspend's.
   */
  @Test
  void anUnsuspendWhileTheDependencyIsOpenIsRecordedAsAWaitForIt() {
    Fleet f = new Fleet(modelApiPolicy("", "failureThreshold: 1\nopenDuration: 30s\n"), "a");
    f.startAll();
    f.now = T0.plusSeconds(10);
    f.fail("a", OUTAGE);
    f.settle();
    f.now = T0.plusSeconds(15);
    f.m("a").suspend = true;
    f.edited("a");
    f.now = T0.plusSeconds(20);
    f.m("a").suspend = false;
    f.edited("a");
    InstanceState a = f.m("a").state;
    assertThat(a.phase).isEqualTo(Phase.CircuitOpen);
    assertThat(a.waitingFor).isEqualTo("model-api");
    assertThat(a.lastDecision.reasonCode()).isEqualTo(ReasonCode.DEPENDENCY_CIRCUIT_OPEN);
    assertThat(a.lastRestart.kind()).isEqualTo(RestartKind.Unsuspend);
  }

  /**
   * §3 d2 comes before h: under resume.mode Require, a blamed failure without an eligible checkpoint waits for the
   * dependency like any other (not counted, in the fleet's waiters); its turn would be a fresh restart, which §7
   * refuses: it is Escalated with the resume code then, and never restarted.
   */
  @Test
  void underRequireABlamedFailureWithoutACheckpointWaitsAndItsTurnEscalatesIt() {
    Fleet f = new Fleet(modelApiPolicy("resume: {mode: Require}\n", "failureThreshold: 1\nopenDuration: 30s\n"),
        "a");
    f.startAll();
    f.now = T0.plusSeconds(10);
    Decision d = f.fail("a", OUTAGE);
    assertThat(d.reasonCode()).isEqualTo(ReasonCode.DEPENDENCY_CIRCUIT_OPEN);
    assertThat(f.m("a").state.phase).isEqualTo(Phase.CircuitOpen);
    assertThat(f.m("a").state.waitingFor).isEqualTo("model-api");
    assertThat(f.m("a").state.attempt).as("not counted").isZero();
    assertThat(f.m("a").state.resume.reasonCode()).isEqualTo(ReasonCode.RESUME_MISSING_CHECKPOINT);

    f.settle();
    f.runUntil(T0.plusSeconds(600));
    Member a = f.m("a");
    assertThat(a.state.phase).isEqualTo(Phase.Escalated);
    assertThat(a.state.lastDecision.reasonCode()).isEqualTo(ReasonCode.RESUME_MISSING_CHECKPOINT);
    assertThat(a.state.lastDecision.action()).isEqualTo(DecisionAction.Escalate);
    assertThat(a.state.terminalReason).isEqualTo(TerminalReason.UnrecoverableError);
    assertThat(a.podsCreated).as("never restarted fresh").hasSize(1);
  }
}

package dev.respawn.policy;

import static dev.respawn.policy.Fleet.OUTAGE;
import static dev.respawn.policy.Fleet.T0;
import static dev.respawn.policy.Fleet.modelApiPolicy;
import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.policy.Fleet.Member;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * api.md §11 over a small fleet in virtual time: in HalfOpen the probes run; only a probe run healthy for resetAfter
 * closes the circuit and only a probe run's blamed failure reopens it, not an instance that merely failed meanwhile nor
 * a probe run of an earlier round.
 */
class FleetProbesTest {
  /** README: "A probe keeps waitingFor while it probes (until its run was healthy for resetAfter, or failed)". */
  @Test
  void aProbeKeepsWaitingForWhileItProbes() {
    Fleet f = new Fleet(modelApiPolicy("", "failureThreshold: 1\nopenDuration: 30s\n"), "a");
    f.startAll();
    f.now = T0.plusSeconds(10);
    f.fail("a", OUTAGE);
    f.settle();
    f.runUntil(T0.plusSeconds(41));
    assertThat(f.circuit("model-api").state()).isEqualTo(CircuitState.HalfOpen);
    assertThat(f.m("a").podsCreated).as("a probes").hasSize(2);
    assertThat(f.m("a").state.waitingFor).isEqualTo("model-api");
    f.running("a");
    assertThat(f.m("a").state.waitingFor).isEqualTo("model-api");
  }

  /**
   * An instance that ran through the outage and fails, blamed, while the circuit is HalfOpen (its one probe slot
   * taken) waits for the probe's outcome: status shows no nextRestartAt that would pass without a restart.
   */
  @Test
  void anInstanceBlamedDuringHalfOpenShowsNoRestartTimeThatPassesWithoutARestart() {
    Fleet f = new Fleet(modelApiPolicy("resetAfter: 60s\n",
        "failureThreshold: 2\nopenDuration: 30s\nprobes: 1\n"), "a", "b", "x");
    f.startAll();
    f.now = T0.plusSeconds(10);
    f.fail("a", OUTAGE); // counted (Closed)
    f.settle();
    f.now = T0.plusSeconds(11);
    f.fail("b", OUTAGE); // opens it: b waits; a is held
    f.settle();
    Instant halfOpenAt = f.circuit("model-api").halfOpenAt();
    assertThat(halfOpenAt).isEqualTo(T0.plusSeconds(41));
    f.runUntil(halfOpenAt);
    assertThat(f.circuit("model-api").state()).isEqualTo(CircuitState.HalfOpen);
    assertThat(f.circuit("model-api").probes()).containsExactly("a");
    assertThat(f.m("a").podsCreated).hasSize(2); // the probe run goes on (healthy for resetAfter at the earliest +60s)
    f.now = T0.plusSeconds(46);
    f.fail("x", OUTAGE); // x ran all along; it meets the outage now
    f.settle();
    assertThat(f.m("x").state.waitingFor).isEqualTo("model-api");
    Instant shown = f.m("x").state.nextRestartAt;
    f.runUntil(T0.plusSeconds(90));
    assertThat(f.circuit("model-api").state()).as("the probe still proves itself").isEqualTo(CircuitState.HalfOpen);
    Member x = f.m("x");
    assertThat(x.podsCreated).hasSize(1);
    assertThat(x.state.nextRestartAt == null || x.state.nextRestartAt.isAfter(f.now)).as("x's status.nextRestartAt "
        + "is %s at %s (shown since its failure; b, also waiting, shows %s)", x.state.nextRestartAt, f.now,
        f.m("b").state.nextRestartAt).isTrue();
  }

  /**
   * With a probe slot free, such an instance may be chosen as a probe: then it runs its probe run, and its failure of
   * a run that was none does not reopen the circuit as "probe failed again" while the real probe still runs.
   */
  @Test
  void anInstanceBlamedDuringHalfOpenIsNotListedAsAProbeItNeverRunsNorReopensTheCircuitAsOne() {
    Fleet f = new Fleet(modelApiPolicy("resetAfter: 60s\n",
        "failureThreshold: 1\nopenDuration: 30s\nprobes: 2\n"), "a", "x", "y");
    f.startAll();
    f.now = T0.plusSeconds(10);
    f.fail("a", OUTAGE); // opens it
    f.settle();
    f.runUntil(T0.plusSeconds(40));
    assertThat(f.circuit("model-api").probes()).containsExactly("a");
    f.running("a"); // the probe runs
    f.settle();
    f.now = T0.plusSeconds(45);
    f.fail("x", OUTAGE); // x ran all along; it meets the outage now
    f.settle();
    DependencyCircuit afterX = f.circuit("model-api");
    f.now = T0.plusSeconds(46);
    f.m("y").suspend = true; // an unrelated change: the policy reconciler steps again
    f.edited("y");
    DependencyCircuit later = f.circuit("model-api");
    assertThat(afterX.probes().contains("x") && f.m("x").podsCreated.size() == 1).as("x listed as a probe (%s) "
        + "without a probe run (pods created at %s, nextRestartAt %s)", afterX.probes(), f.m("x").podsCreated,
        f.m("x").state.nextRestartAt).isFalse();
    assertThat(later.state()).as("after x's failure: %s; one step later: %s", afterX, later)
        .isEqualTo(CircuitState.HalfOpen);
    assertThat(later.trips()).isEqualTo(1);
  }

  /**
   * A probe whose run goes on when another probe reopens the circuit stays a probe; when its run then fails, blamed,
   * in the next HalfOpen, that is a probe's failure: the circuit reopens, and the probe is not restarted into it.
   */
  @Test
  void aProbeCarriedIntoTheNextHalfOpenThatFailsReopensTheCircuit() {
    Fleet f = new Fleet(modelApiPolicy("resetAfter: 600s\n",
        "failureThreshold: 1\nopenDuration: 30s\nprobes: 2\n"), "a", "b");
    f.startAll();
    f.now = T0.plusSeconds(10);
    f.fail("a", OUTAGE); // opens it (trip 1), halfOpenAt T0+40
    f.settle();
    f.now = T0.plusSeconds(11);
    f.fail("b", OUTAGE); // waits too
    f.settle();
    f.runUntil(T0.plusSeconds(40));
    assertThat(f.circuit("model-api").state()).isEqualTo(CircuitState.HalfOpen);
    assertThat(f.circuit("model-api").probes()).containsExactlyInAnyOrder("a", "b");
    f.running("a");
    f.running("b");
    f.settle();
    f.now = T0.plusSeconds(50);
    f.fail("b", OUTAGE); // probe b fails again: reopens (trip 2), a's run goes on, a stays probe
    f.settle();
    DependencyCircuit reopened = f.circuit("model-api");
    assertThat(reopened.state()).isEqualTo(CircuitState.Open);
    assertThat(reopened.trips()).isEqualTo(2);
    assertThat(reopened.probes()).containsExactly("a");
    f.runUntil(T0.plusSeconds(80)); // HalfOpen again, a carried, b the other probe
    assertThat(f.circuit("model-api").state()).isEqualTo(CircuitState.HalfOpen);
    assertThat(f.circuit("model-api").probes()).containsExactlyInAnyOrder("a", "b");
    int aPods = f.m("a").podsCreated.size();
    f.now = T0.plusSeconds(85);
    f.fail("a", OUTAGE); // probe a's run (started T0+40) fails, blamed, during HalfOpen round 2
    f.settle();
    f.runUntil(T0.plusSeconds(100));
    DependencyCircuit after = f.circuit("model-api");
    assertThat(after.state()).as("probe a failed, blamed, during HalfOpen: the circuit reopens; circuit %s; a's pods "
        + "created at %s", after, f.m("a").podsCreated).isEqualTo(CircuitState.Open);
    assertThat(f.m("a").podsCreated).as("a restarted into the outage").hasSize(aPods);
  }

  /**
   * An instance whose ordinary failure during HalfOpen restarted it, and whose new run then fails blamed, ran no probe
   * run: chosen as a probe afterwards, it runs one (its failure is no failed probe's), and the circuit does not trip.
   */
  @Test
  void aWaiterChosenAsProbeAfterItsBlamedFailureDoesNotReopenTheCircuitAsAFailedProbe() {
    Fleet f = new Fleet(modelApiPolicy("resetAfter: 600s\n",
        "failureThreshold: 1\nopenDuration: 30s\nprobes: 2\n"), "a", "x");
    f.startAll();
    f.now = T0.plusSeconds(10);
    f.fail("a", OUTAGE); // opens it, halfOpenAt T0+40
    f.settle();
    f.runUntil(T0.plusSeconds(40));
    assertThat(f.circuit("model-api").state()).isEqualTo(CircuitState.HalfOpen);
    assertThat(f.circuit("model-api").probes()).containsExactly("a");
    f.running("a");
    f.settle();
    f.now = T0.plusSeconds(41);
    f.fail("x", "disk full"); // not blamed: an ordinary Backoff (2 s)
    f.settle();
    f.runUntil(T0.plusSeconds(43));
    assertThat(f.m("x").podsCreated).hasSize(2);
    f.running("x"); // x's new run starts after halfOpenAt
    f.settle();
    f.now = T0.plusSeconds(45);
    f.fail("x", OUTAGE); // blamed during HalfOpen; x is no probe (yet)
    f.settle();
    f.runUntil(T0.plusSeconds(120));
    DependencyCircuit c = f.circuit("model-api");
    assertThat(c.probes().contains("x") && f.m("x").podsCreated.size() == 2).as("x listed as a probe (%s) without "
        + "a probe run for over a minute (pods created at %s, nextRestartAt %s); circuit %s", c.probes(),
        f.m("x").podsCreated, f.m("x").state.nextRestartAt, c).isFalse();
    assertThat(c.trips()).isEqualTo(1);
    assertThat(c.state()).isEqualTo(CircuitState.HalfOpen);
  }

  /**
   * A probe whose run goes on when its round closes the circuit (another probe proved healthy) keeps waiting for
   * nothing of the next outage: its failure in a later HalfOpen, not as one of that round's probes, is no failed
   * probe (it does not reopen the circuit while the real probe runs).
   */
  @Test
  void aProbeRunThatOutlivedItsRoundIsNoFailedProbeOfTheNextOne() {
    Fleet f = new Fleet(modelApiPolicy("resetAfter: 60s\n",
        "failureThreshold: 1\nopenDuration: 30s\nprobes: 2\n"), "a", "b", "w", "y");
    f.startAll();
    f.now = T0.plusSeconds(10);
    f.fail("a", OUTAGE); // opens it (trip 1), halfOpenAt T0+40
    f.settle();
    f.now = T0.plusSeconds(11);
    f.fail("b", OUTAGE);
    f.settle();
    f.runUntil(T0.plusSeconds(40));
    assertThat(f.circuit("model-api").probes()).containsExactlyInAnyOrder("a", "b");
    f.running("a");
    f.settle();
    f.now = T0.plusSeconds(90);
    f.running("b"); // b's probe run is up later: healthy at T0+150 at the earliest
    f.settle();
    f.runUntil(T0.plusSeconds(100)); // a healthy for resetAfter: Closed
    assertThat(f.circuit("model-api").state()).isEqualTo(CircuitState.Closed);
    f.now = T0.plusSeconds(101);
    f.fail("w", OUTAGE); // opens it again (trip 2), halfOpenAt T0+131
    f.settle();
    f.runUntil(T0.plusSeconds(131));
    assertThat(f.circuit("model-api").state()).isEqualTo(CircuitState.HalfOpen);
    assertThat(f.circuit("model-api").probes()).containsExactly("w");
    f.running("w");
    f.settle();
    int bPods = f.m("b").podsCreated.size();
    f.now = T0.plusSeconds(135);
    f.fail("b", OUTAGE); // b ran all along (its run was a probe of round 1, which closed): it meets the outage now
    f.settle();
    DependencyCircuit afterB = f.circuit("model-api");
    f.now = T0.plusSeconds(136);
    f.m("y").suspend = true; // an unrelated change: the policy reconciler steps again
    f.edited("y");
    DependencyCircuit later = f.circuit("model-api");
    assertThat(later.state()).as("probe w still runs; b's failure was no probe run of this HalfOpen: %s", later)
        .isEqualTo(CircuitState.HalfOpen);
    assertThat(later.trips()).isEqualTo(2);
  }

  /**
   * A probe carried over while the circuit is Open whose run restarts (exit 42) is a probe still: its new run, seen
   * running before the circuit's next step, is not taken for one healthy for resetAfter (the circuit stays open).
   */
  @Test
  void aCarriedProbeRestartedDuringOpenIsNoHealthyProbe() {
    Fleet f = new Fleet(modelApiPolicy("resetAfter: 600s\n",
        "failureThreshold: 1\nopenDuration: 30s\nprobes: 2\n"), "a", "b");
    f.startAll();
    f.now = T0.plusSeconds(10);
    f.fail("a", OUTAGE);
    f.settle();
    f.now = T0.plusSeconds(11);
    f.fail("b", OUTAGE);
    f.settle();
    f.runUntil(T0.plusSeconds(40));
    f.running("a");
    f.running("b");
    f.settle();
    f.now = T0.plusSeconds(50);
    f.fail("b", OUTAGE); // reopens; a carried
    f.settle();
    assertThat(f.circuit("model-api").probes()).containsExactly("a");
    f.now = T0.plusSeconds(55);
    Member a = f.m("a");
    f.exit("a", 42); // the agent asks for a restart: a new run starts at once, while Open
    f.now = T0.plusSeconds(56);
    f.running("a"); // up before the policy reconciler's queued step runs
    f.settle();
    f.runUntil(T0.plusSeconds(90));
    DependencyCircuit c = f.circuit("model-api");
    assertThat(c.state()).as("a's new run is 35 s old (resetAfter 600s): nothing was healthy for resetAfter")
        .isNotEqualTo(CircuitState.Closed);
  }
}

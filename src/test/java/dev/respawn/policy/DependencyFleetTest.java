package dev.respawn.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.api.v1alpha1.TerminalReason;
import dev.respawn.simulate.SimulatedPods;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * api.md §11 (shared dependencies) in the decision core, over a small fleet in virtual time: the instances and the
 * circuits are driven as the two reconcilers drive them (each only when the other side changed, or at its own
 * wake-up; neither has a periodic resync).
 */
class DependencyFleetTest {
  static final Instant T0 = Instant.parse("2026-11-24T10:00:00Z");
  static final String OUTAGE = "upstream model API answered HTTP 503";

  /**
   * A policy with a 2 s backoff and one shared dependency, model-api, blamed for {@link #OUTAGE}: {@code top} adds
   * policy settings (YAML lines), {@code dependency} the dependency's own.
   */
  static String modelApiPolicy(String top, String dependency) {
    return "backoff: {type: Exponential, initialDelay: 2s, maxDelay: 2s}\n" + top
        + "dependencies:\n- name: model-api\n  match: {messageContains: [\"HTTP 503\"]}\n" + dependency.indent(2);
  }

  /** One instance of the fleet: its pods, its status, its last decision. */
  static final class Member {
    final String name;
    final SimulatedPods pods;
    InstanceState state = new InstanceState();
    boolean suspend;
    Request restart;
    Decision last;
    final List<Instant> podsCreated = new ArrayList<>();

    Member(String name) {
      this.name = name;
      this.pods = new SimulatedPods("agents", name);
    }
  }

  /** Instances of one policy and the policy's shared circuits, driven like the two reconcilers drive them. */
  static final class Fleet {
    RestartPolicy policy;
    final RestartEvaluator evaluator = RestartEvaluator.builtIn();
    final SplittableRandom random = new SplittableRandom(7);
    final Map<String, Member> members = new LinkedHashMap<>();
    Map<String, DependencyCircuit> circuits = new HashMap<>();
    FleetCircuits.Result lastStep;
    Instant now = T0;

    Fleet(String yaml, String... names) {
      this.policy = policyOf(yaml);
      for (String n : names) {
        members.put(n, new Member(n));
      }
    }

    static RestartPolicy policyOf(String yaml) {
      return AgentSim.policy(io.fabric8.kubernetes.client.utils.Serialization.unmarshal(yaml,
          AgentRestartPolicySpec.class));
    }

    Member m(String name) {
      return members.get(name);
    }

    /** What the policy reconciler listens to of an instance (DependencyDecisions.facts). */
    static List<String> facts(Member m) {
      InstanceState st = m.state;
      String blamed = st.lastFailure == null || st.lastFailure.dependency() == null ? ""
          : st.lastFailure.dependency() + "@" + st.lastFailure.at();
      String waiting = st.waitingFor == null ? "" : st.waitingFor + "/" + st.phase;
      return List.of(blamed, waiting, String.valueOf(m.suspend));
    }

    /** What the instance reconciler listens to of the policy's circuits (DependencyDecisions.decisions). */
    List<String> decisions() {
      List<String> out = new ArrayList<>();
      circuits.values().stream().sorted(java.util.Comparator.comparing(DependencyCircuit::name)).forEach(c -> out.add(
          c.name() + "|" + c.state() + "|" + c.halfOpenAt() + "|" + c.closedAt() + "|" + c.probes() + "|"
              + c.releaseOrder()));
      return out;
    }

    private final java.util.Set<String> pending = new java.util.LinkedHashSet<>();
    private boolean stepPending;

    /** One reconcile of the instance; the policy reconciler is told when the instance's facts changed. */
    Decision reconcile(String name) {
      Member m = m(name);
      List<String> before = facts(m);
      Decision d = evaluator.decide(policy, m.state, m.pods.sighting(m.suspend,
          dev.respawn.testsupport.Requests.of(m.restart, null)).withDependencies(circuits), now, random);
      m.pods.apply(d, now);
      m.state = d.state();
      m.last = d;
      d.start().filter(x -> !d.startsExisting()).ifPresent(x -> m.podsCreated.add(now));
      if (!facts(m).equals(before)) {
        stepPending = true;
      }
      return d;
    }

    /** The current pod runs. */
    Decision running(String name) {
      Member m = m(name);
      PodView p = m.pods.pod(m.state.currentPod).orElseThrow();
      m.pods.update(new PodView(p.name(), p.uid(), PodView.Stage.RUNNING, p.createdAt(), now, null, null, true), null);
      return reconcile(name);
    }

    /** The agent exits with this code (42: it asks for its restart) and no message. */
    Decision exit(String name, int code) {
      Member m = m(name);
      PodView p = m.pods.pod(m.state.currentPod).orElseThrow();
      m.pods.update(new PodView(p.name(), p.uid(), PodView.Stage.FINISHED, p.createdAt(), p.startedAt(), null, null,
          false), new RunEnding(p.name(), p.uid(), EndingKind.TERMINATED, code, "Error", null, now));
      return reconcile(name);
    }

    /** The agent exits 1 with this message. */
    Decision fail(String name, String message) {
      Member m = m(name);
      PodView p = m.pods.pod(m.state.currentPod).orElseThrow();
      m.pods.update(new PodView(p.name(), p.uid(), PodView.Stage.FINISHED, p.createdAt(), p.startedAt(), null, null,
          false), new RunEnding(p.name(), p.uid(), EndingKind.TERMINATED, 1, "Error", message, now));
      return reconcile(name);
    }

    /** The policy reconciler: one step of the shared circuits; the instances are told when a decision changed. */
    FleetCircuits.Result step() {
      List<String> before = decisions();
      List<FleetCircuits.Member> fleet = new ArrayList<>();
      members.values().forEach(m -> fleet.add(new FleetCircuits.Member(m.name, m.state, m.suspend)));
      lastStep = FleetCircuits.step(policy, circuits, fleet, now);
      Map<String, DependencyCircuit> next = new HashMap<>();
      lastStep.circuits().forEach(c -> next.put(c.name(), c));
      circuits = next;
      stepPending = false;
      if (!decisions().equals(before)) {
        pending.addAll(members.keySet());
      }
      return lastStep;
    }

    DependencyCircuit circuit(String dependency) {
      return circuits.getOrDefault(dependency, DependencyCircuit.closed(dependency));
    }

    /** Runs the reconciles the changes so far trigger (and only those), until nothing more is triggered. */
    void settle() {
      for (int guard = 0; guard < 1000 && (stepPending || !pending.isEmpty()); guard++) {
        if (!pending.isEmpty()) {
          String next = pending.iterator().next();
          pending.remove(next);
          reconcile(next);
        } else {
          step();
        }
      }
    }

    /** A spec edit of the instance (suspend): it is reconciled, and the policy sees the suspended flag. */
    void edited(String name) {
      stepPending = true;
      pending.add(name);
      settle();
    }

    void startAll() {
      members.keySet().forEach(this::reconcile);
      members.keySet().forEach(this::running);
      settle();
    }

    /**
     * Lets virtual time pass up to {@code until}, as the operator would: a reconciler runs only when a decision or
     * the circuit step asked to wake then, or when the other side's change triggers it (no periodic resync: both
     * reconcilers have none).
     */
    void runUntil(Instant until) {
      for (int guard = 0; guard < 10_000; guard++) {
        Instant next = lastStep == null ? null : lastStep.wakeAt().orElse(null);
        for (Member m : members.values()) {
          Optional<Instant> w = m.last == null ? Optional.empty() : m.last.wakeAt();
          if (w.isPresent() && (next == null || w.get().isBefore(next))) {
            next = w.get();
          }
        }
        if (next == null || next.isAfter(until)) {
          now = until;
          return;
        }
        now = next.isAfter(now) ? next : now;
        final Instant at = now;
        if (lastStep != null && lastStep.wakeAt().filter(t -> !t.isAfter(at)).isPresent()) {
          stepPending = true;
          lastStep = new FleetCircuits.Result(lastStep.circuits(), lastStep.transitions(), Optional.empty());
        }
        for (Member m : members.values()) {
          if (m.last != null && m.last.wakeAt().filter(t -> !t.isAfter(at)).isPresent()) {
            pending.add(m.name);
          }
        }
        settle();
      }
      throw new AssertionError("no quiet point");
    }
  }

  // ---------------------------------------------------------------------------------------------------------

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
   * §3 d2 "or that this very failure opens": instances that fail at once each decide before the circuit's one writer
   * has counted the others, so each counts its failure as usual; once the circuit shows Open, the failure that
   * brought it to its threshold (and any after it) is taken back out of its instance's count; the two before it stay
   * counted (§11 "Closed: the failure follows §3 as usual").
   */
  @Test
  void failuresAtOnceThatOpenTheCircuitCountOnlyThoseBeforeTheThreshold() {
    Fleet f = new Fleet(modelApiPolicy("maxRetries: 5\n", "failureThreshold: 3\nwindow: 1m\nopenDuration: 30s\n"),
        "a", "b", "c", "d");
    f.startAll();
    for (String name : List.of("a", "b", "c")) {
      f.now = f.now.plusMillis(1);
      assertThat(f.fail(name, OUTAGE).reasonCode()).as(name + " decided on a Closed circuit")
          .isEqualTo(ReasonCode.RESTART_SCHEDULED);
    }
    f.now = f.now.plusMillis(5);
    f.fail("d", OUTAGE); // after the threshold, still before the circuit's writer stepped: not counted either
    assertThat(f.m("d").state.attempt).isEqualTo(1);
    f.settle();
    assertThat(f.circuit("model-api").state()).isEqualTo(CircuitState.Open);
    assertThat(f.circuit("model-api").openedAt()).as("opened by c's failure")
        .isEqualTo(f.m("c").state.lastFailure.at());
    Map<String, Integer> attempts = new LinkedHashMap<>();
    for (String name : List.of("a", "b", "c", "d")) {
      Member m = f.m(name);
      assertThat(m.state.phase).as(name).isEqualTo(Phase.CircuitOpen);
      assertThat(m.state.waitingFor).as(name).isEqualTo("model-api");
      attempts.put(name, m.state.attempt);
    }
    assertThat(attempts).containsExactly(Map.entry("a", 1), Map.entry("b", 1), Map.entry("c", 0), Map.entry("d", 0));
    for (String name : List.of("c", "d")) {
      InstanceState st = f.m(name).state;
      assertThat(st.firstFailureAt).as(name).isNull();
      assertThat(st.circuit.failureTimes()).as(name + ": its own circuit breaker untouched").isEmpty();
      assertThat(st.history.get(st.history.size() - 1).reasonCode()).as(name)
          .isEqualTo(ReasonCode.DEPENDENCY_CIRCUIT_OPEN);
      assertThat(st.lastDecision.attempt()).as(name).isZero();
    }
    assertThat(f.m("a").state.circuit.failureTimes()).hasSize(1);
    // and nothing flips back: a later look changes none of it
    f.runUntil(T0.plusSeconds(20));
    assertThat(f.m("c").state.attempt).isZero();
    assertThat(f.m("a").state.attempt).isEqualTo(1);
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

  /**
   * §11: "failures of >= failureThreshold distinct instances within window open the circuit": one instance failing
   * again and again is one instance, and its own failures never open the shared circuit (its backoff handles it).
   */
  @Test
  void repeatedFailuresOfOneInstanceNeverOpenTheSharedCircuit() {
    Fleet f = new Fleet(modelApiPolicy("maxRetries: 5\n", "failureThreshold: 2\nwindow: 1m\nopenDuration: 30s\n"),
        "a", "b");
    f.startAll();
    f.now = T0.plusSeconds(10);
    assertThat(f.fail("a", OUTAGE).reasonCode()).isEqualTo(ReasonCode.RESTART_SCHEDULED);
    f.settle();
    f.runUntil(T0.plusSeconds(15)); // a's 2 s backoff is over: run 2
    f.running("a");
    f.settle();
    f.now = T0.plusSeconds(20);
    Decision again = f.fail("a", OUTAGE);
    assertThat(again.reasonCode()).as("a's second failure is no second instance").isEqualTo(ReasonCode.RESTART_SCHEDULED);
    f.settle();
    assertThat(f.circuit("model-api").state()).isEqualTo(CircuitState.Closed);
    assertThat(f.m("a").state.attempt).isEqualTo(2);
    assertThat(f.m("a").state.waitingFor).isNull();
  }

  /** §11: only blames "within window" count towards the threshold; an older one has been forgotten. */
  @Test
  void aBlameOlderThanTheWindowDoesNotHelpOpenTheSharedCircuit() {
    Fleet f = new Fleet(modelApiPolicy("maxRetries: 5\n", "failureThreshold: 2\nwindow: 1m\nopenDuration: 30s\n"),
        "a", "b");
    f.startAll();
    f.now = T0.plusSeconds(10);
    f.fail("a", OUTAGE);
    f.settle();
    f.runUntil(T0.plusSeconds(71)); // 61 s after a's failure: outside the 1m window
    Decision b = f.fail("b", OUTAGE);
    assertThat(b.reasonCode()).isEqualTo(ReasonCode.RESTART_SCHEDULED);
    f.settle();
    assertThat(f.circuit("model-api").state()).isEqualTo(CircuitState.Closed);
    assertThat(f.m("b").state.phase).isEqualTo(Phase.Backoff);
    assertThat(f.m("b").state.attempt).isEqualTo(1);
  }

  /** A member of the fleet for a direct step of the circuits: its status with this last failure and phase. */
  static FleetCircuits.Member member(String name, Phase phase, Instant failedAt, String dependency, String waitingFor) {
    InstanceState st = new InstanceState();
    st.phase = phase;
    st.lastFailure = new InstanceState.FailureInfo(name + "-1", name + "-uid", dev.respawn.api.v1alpha1.InterruptionClass
        .ToolFailure, "UnhandledException", "Error", 1, "x", "", true, failedAt, dependency);
    st.waitingFor = waitingFor;
    return new FleetCircuits.Member(name, st, false);
  }

  /** §11: "Each transition writes a DependencyCircuitChanged Event": the step tells what changed, and only then. */
  @Test
  void aStepTellsTheTransitionsOfTheCircuitsThatChangedAndNoOthers() {
    RestartPolicy p = Fleet.policyOf(modelApiPolicy("", "failureThreshold: 2\n"));
    FleetCircuits.Result opens = FleetCircuits.step(p, Map.of(), List.of(
        member("a", Phase.CircuitOpen, T0, "model-api", "model-api"),
        member("b", Phase.CircuitOpen, T0.plusSeconds(1), "model-api", "model-api")), T0.plusSeconds(2));
    assertThat(opens.circuits()).singleElement().satisfies(c -> assertThat(c.state()).isEqualTo(CircuitState.Open));
    assertThat(opens.transitions()).containsOnlyKeys("model-api");
    assertThat(opens.transitions().get("model-api")).singleElement().satisfies(t -> {
      assertThat(t.from()).isEqualTo(CircuitState.Closed);
      assertThat(t.to()).isEqualTo(CircuitState.Open);
    });
    FleetCircuits.Result quiet = FleetCircuits.step(p, Map.of("model-api", opens.circuits().get(0)), List.of(
        member("a", Phase.CircuitOpen, T0, "model-api", "model-api"),
        member("b", Phase.CircuitOpen, T0.plusSeconds(1), "model-api", "model-api")), T0.plusSeconds(3));
    assertThat(quiet.transitions()).isEmpty();
  }

  /** §11 "none early, no restart lost": with two dependencies open, the step wakes at the earlier HalfOpen. */
  @Test
  void withTwoOpenDependenciesTheStepWakesAtTheEarlierHalfOpen() {
    RestartPolicy p = Fleet.policyOf("""
        dependencies:
        - {name: slow, match: {messageContains: [slow]}, failureThreshold: 1, openDuration: 60s}
        - {name: fast, match: {messageContains: [fast]}, failureThreshold: 1, openDuration: 10s}
        """);
    FleetCircuits.Result r = FleetCircuits.step(p, Map.of(), List.of(
        member("a", Phase.CircuitOpen, T0, "slow", "slow"),
        member("b", Phase.CircuitOpen, T0.plusSeconds(1), "fast", "fast")), T0.plusSeconds(2));
    assertThat(r.circuits()).extracting(DependencyCircuit::state).containsOnly(CircuitState.Open);
    assertThat(r.wakeAt()).contains(T0.plusSeconds(11));
  }

  /**
   * A probe whose run failed for another reason since the HalfOpen proves nothing (README: "the next waiter probes
   * instead"): running again after its own restart, it does not close the circuit as a healthy probe.
   */
  @Test
  void aProbeThatFailedForAnotherReasonAndRunsAgainIsNoHealthyProbe() {
    RestartPolicy p = Fleet.policyOf(modelApiPolicy("", "failureThreshold: 1\nopenDuration: 30s\n"));
    Instant halfOpenAt = T0.plusSeconds(30);
    DependencyCircuit half = new DependencyCircuit("model-api", CircuitState.HalfOpen, 1, T0, halfOpenAt, null,
        halfOpenAt, List.of("a"), List.of(), List.of(), 2, 2);
    FleetCircuits.Result r = FleetCircuits.step(p, Map.of("model-api", half), List.of(
        member("a", Phase.Running, halfOpenAt.plusSeconds(5), null, null), // "disk full", restarted, running
        member("b", Phase.CircuitOpen, T0.plusSeconds(1), "model-api", "model-api")), halfOpenAt.plusSeconds(10));
    assertThat(r.circuits()).singleElement().satisfies(c -> {
      assertThat(c.state()).isEqualTo(CircuitState.HalfOpen);
      assertThat(c.probes()).containsExactly("b");
    });
  }

  /**
   * §11 d2 "the instance restarts when the dependency lets it", and README "No periodic reconcile": the failure that
   * opens the circuit waits openDuration, shown in lastDecision and as a wake-up of its own.
   */
  @Test
  void theFailureThatOpensTheCircuitWaitsItsOpenDurationWithAWakeUpOfItsOwn() {
    Fleet f = new Fleet(modelApiPolicy("", "failureThreshold: 1\nopenDuration: 30s\n"), "a");
    f.startAll();
    f.now = T0.plusSeconds(10);
    Decision d = f.fail("a", OUTAGE);
    assertThat(d.reasonCode()).isEqualTo(ReasonCode.DEPENDENCY_CIRCUIT_OPEN);
    assertThat(f.m("a").state.nextRestartAt).isEqualTo(T0.plusSeconds(40));
    assertThat(f.m("a").state.lastDecision.delaySeconds()).isEqualTo(30.0);
    assertThat(d.wakeAt()).contains(T0.plusSeconds(40));
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

  /**
   * §11 "Closed again ... the failures ... open the circuit": blames from before the circuit last closed do not count
   * towards reopening it, on the instance's side either.
   */
  @Test
  void blamesFromBeforeTheCircuitClosedDoNotReopenItFromTheInstancesSide() {
    RestartPolicy p = Fleet.policyOf(modelApiPolicy("", "failureThreshold: 2\nwindow: 10m\n"));
    Instant closedAt = T0.plusSeconds(60);
    DependencyCircuit closed = new DependencyCircuit("model-api", CircuitState.Closed, 1, T0, T0.plusSeconds(30),
        closedAt, closedAt, List.of(), List.of(), List.of(new DependencyCircuit.Blame("b", T0.plusSeconds(50))), 0, 1);
    assertThat(closed.opensWith(p.dependency("model-api").orElseThrow(), "a", T0.plusSeconds(70)))
        .as("b's blame is from before the circuit closed").isFalse();
    DependencyCircuit fresh = new DependencyCircuit("model-api", CircuitState.Closed, 1, T0, T0.plusSeconds(30),
        closedAt, closedAt, List.of(), List.of(), List.of(new DependencyCircuit.Blame("b", T0.plusSeconds(65))), 0, 1);
    assertThat(fresh.opensWith(p.dependency("model-api").orElseThrow(), "a", T0.plusSeconds(70)))
        .isTrue();
  }

  /** RestartPolicy.dependency(name): each waiter is judged by its own dependency's settings. */
  @Test
  void aPolicyFindsEachDependencyByItsName() {
    RestartPolicy p = Fleet.policyOf("""
        dependencies:
        - {name: slow, match: {messageContains: [slow]}, openDuration: 60s}
        - {name: fast, match: {messageContains: [fast]}, openDuration: 10s}
        """);
    assertThat(p.dependency("fast")).hasValueSatisfying(d -> assertThat(d.openDuration()).isEqualTo(
        Duration.ofSeconds(10)));
    assertThat(p.dependency("slow")).hasValueSatisfying(d -> assertThat(d.name()).isEqualTo("slow"));
    assertThat(p.dependency("gone")).isEmpty();
  }

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
}

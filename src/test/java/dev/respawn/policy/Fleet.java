package dev.respawn.policy;

import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.simulate.SimulatedPods;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;

/**
 * Instances of one policy and the policy's shared circuits (api.md §11) in virtual time, driven like the two
 * reconcilers drive them: each only when the other side changed, or at its own wake-up; neither has a periodic resync.
 */
final class Fleet {
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

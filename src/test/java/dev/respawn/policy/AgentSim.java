package dev.respawn.policy;

import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.api.v1alpha1.HealthVerdict;
import java.time.Duration;
import java.time.Instant;
import dev.respawn.simulate.SimulatedPods;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Map;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;

/**
 * Drives the decision core through a run story the way the controller will: it keeps the status,
 * the current pod and a fake clock, and feeds each decision's state back into the next one.
 */
final class AgentSim {
  static final Instant T0 = Instant.parse("2026-11-22T10:00:00Z");

  final RestartPolicy policy;
  final RestartEvaluator evaluator;
  final SplittableRandom random = new SplittableRandom(42);
  InstanceState state = new InstanceState();
  Instant now = T0;
  PodView pod;
  LeaseView lease;
  boolean suspend;
  Request restartRequest;
  Request resumeRequest;
  /** The shared circuits of the policy's dependencies, as the policy's status has them. */
  final Map<String, DependencyCircuit> dependencies = new HashMap<>();
  Decision last;
  final List<Decision> decisions = new ArrayList<>();
  final List<Decision.PodStart> starts = new ArrayList<>();
  /** Who renewed {@link #lease} (the current pod when the agent renewed it). */
  String leaseHolder;
  private final SimulatedPods pods = new SimulatedPods("agents", "coder");
  private final Map<String, RunEnding> endings = new HashMap<>();
  private Instant lastRenewTime;
  private Instant renewalSeenAt;

  AgentSim(RestartPolicy policy) {
    this(policy, RestartEvaluator.builtIn());
  }

  AgentSim(RestartPolicy policy, RestartEvaluator evaluator) {
    this.policy = policy;
    this.evaluator = evaluator;
  }

  static RestartPolicy policy(AgentRestartPolicySpec spec) {
    try {
      return PolicyCompiler.compile(spec);
    } catch (PolicyInvalidException e) {
      throw new AssertionError(e);
    }
  }

  /**
   * What the controller would see, with {@code ending} reported for its pod (when that pod exists). The
   * pods live in {@link SimulatedPods}; {@link #pod} is the current one, kept in step with it.
   */
  Sighting sighting(RunEnding ending) {
    if (pod != null) {
      pods.update(pod, endings.get(pod.uid()));
    }
    if (ending != null) {
      pods.pod(ending.pod()).filter(p -> p.uid().equals(ending.podUid())).ifPresent(p -> {
        endings.put(p.uid(), ending);
        pods.update(p, ending);
      });
    }
    pods.lease(seenByOperator(lease), leaseHolder != null ? leaseHolder : pod == null ? null : pod.name());
    return pods.sighting(suspend, dev.respawn.testsupport.Requests.of(restartRequest,
        resumeRequest)).withDependencies(dependencies);
  }

  /** The operator's clock stamps a renewTime it has not seen before (what RenewalClock does). */
  private LeaseView seenByOperator(LeaseView l) {
    if (l == null || l.changeSeenAt() != null || l.renewTime() == null) {
      return l;
    }
    if (!l.renewTime().equals(lastRenewTime)) {
      lastRenewTime = l.renewTime();
      renewalSeenAt = now;
    }
    return new LeaseView(l.renewTime(), renewalSeenAt, l.verdict(), l.detail(), l.checkpoint(), l.checkpointStatus(),
        l.stepIdempotent(), l.artifactsReady());
  }

  /** One reconcile: observe, decide, apply the pod actions like the controller, keep the new state. */
  Decision reconcile(RunEnding ending) {
    last = evaluator.decide(policy, state, sighting(ending), now, random);
    decisions.add(last);
    state = last.state();
    pods.apply(last, now);
    last.start().filter(x -> !last.startsExisting()).ifPresent(x -> {
      starts.add(x);
      lease = null;
      leaseHolder = null;
    });
    // like before: the current pod while it is live (a finished one no longer counts)
    pod = state.currentPod == null ? null : pods.pod(state.currentPod).filter(PodView::isLive).orElse(null);
    return last;
  }

  Decision reconcile() {
    return reconcile(null);
  }

  /**
   * The running agent exits 1 and, at its nextRestartAt, the next run's pod is made with its start left
   * unwritten (api.md §12: it waits for the run's first sign). Returns what status still says (the state is set
   * back to it); {@link #now} is when the pod was made.
   */
  InstanceState failedAndRestartUnwritten() {
    exit(1);
    InstanceState waiting = state.copy();
    now = state.nextRestartAt;
    if (!reconcile().deferStatus()) {
      throw new AssertionError("the restart's start was written at once");
    }
    state = waiting;
    return waiting;
  }

  /** The current pod starts running (and is Ready). */
  Decision running() {
    pod = new PodView(pod.name(), pod.uid(), PodView.Stage.RUNNING, pod.createdAt(), now, null, null, true);
    return reconcile();
  }

  /** The agent container exits with a code, reason and message. */
  Decision exit(int code, String reason, String message) {
    RunEnding e = new RunEnding(pod.name(), pod.uid(), EndingKind.TERMINATED, code, reason, message, now);
    pod = new PodView(pod.name(), pod.uid(), PodView.Stage.FINISHED, pod.createdAt(), pod.startedAt(), null, null,
        false);
    endings.put(pod.uid(), e);
    return reconcile(e);
  }

  Decision exit(int code) {
    return exit(code, code == 0 ? "Completed" : "Error", null);
  }

  /** The agent container exits while sidecars run on: the run has ended, its pod is still live. */
  Decision exitWhileSidecarsRun(int code, String message) {
    RunEnding e = new RunEnding(pod.name(), pod.uid(), EndingKind.TERMINATED, code, code == 0 ? "Completed" : "Error",
        message, now);
    endings.put(pod.uid(), e);
    return reconcile(e);
  }

  Decision end(EndingKind kind, String reason) {
    RunEnding e = new RunEnding(pod.name(), pod.uid(), kind, null, reason, null, now);
    pod = new PodView(pod.name(), pod.uid(), PodView.Stage.FINISHED, pod.createdAt(), pod.startedAt(), null, null,
        false);
    endings.put(pod.uid(), e);
    return reconcile(e);
  }

  /** The agent renews its Lease now. */
  void heartbeat(HealthVerdict verdict) {
    leaseHolder = pod == null ? null : pod.name();
    lease = new LeaseView(now, now, verdict, null, lease == null ? null : lease.checkpoint(),
        lease == null ? null : lease.checkpointStatus(), lease == null ? null : lease.stepIdempotent(),
        lease == null ? null : lease.artifactsReady());
  }

  void checkpoint(String name, String status, Boolean idempotent, Boolean artifactsReady) {
    leaseHolder = pod == null ? null : pod.name();
    lease = new LeaseView(now, now, HealthVerdict.Healthy, null, name, status, idempotent, artifactsReady);
  }

  /** The policy's status shows the shared circuit model-api Open since {@code openedAt} (openDuration 30 s). */
  void modelApiOpen(int trips, Instant openedAt) {
    dependencies.put("model-api", new DependencyCircuit("model-api", dev.respawn.api.v1alpha1.CircuitState.Open,
        trips, openedAt, openedAt.plusSeconds(30), null, openedAt, List.of(), List.of(), List.of(), 3, 3));
  }

  void advance(Duration d) {
    now = now.plus(d);
  }

  /** Moves the clock to the decision's wake-up time (or the next restart) and reconciles. */
  Decision wake() {
    Instant at = last.wakeAt().orElseThrow(() -> new AssertionError("no wake-up scheduled: " + last));
    now = at;
    return reconcile();
  }

  /** Starts the first run and lets it run. */
  AgentSim started() {
    reconcile();
    running();
    return this;
  }

  /** Waits out a Backoff or CircuitOpen phase; the new pod is created but not (yet) seen running. */
  Decision restartStillPending() {
    now = state.nextRestartAt;
    Decision d = reconcile();
    if (pod == null) {
      throw new AssertionError("no pod started at nextRestartAt; phase " + state.phase);
    }
    return d;
  }

  /** Waits out a Backoff or CircuitOpen phase, then lets the new pod run. */
  Decision restartAndRun() {
    restartStillPending();
    return running();
  }
}

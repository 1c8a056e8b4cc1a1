package dev.respawn.policy;

import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.api.v1alpha1.HealthVerdict;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
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
  Decision last;
  final List<Decision> decisions = new ArrayList<>();
  final List<Decision.PodStart> starts = new ArrayList<>();
  int podSeq;

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

  Observation observation(RunEnding ending) {
    return new Observation("agents", "coder", suspend, Optional.ofNullable(pod), Optional.ofNullable(ending),
        Optional.ofNullable(restartRequest), Optional.ofNullable(resumeRequest), Optional.ofNullable(lease));
  }

  /** One reconcile: decide, apply pod actions like the controller, keep the new state. */
  Decision reconcile(RunEnding ending) {
    last = evaluator.decide(policy, state, observation(ending), now, random);
    decisions.add(last);
    state = last.state();
    if (last.deletePod() && pod != null) {
      pod = null; // deleted: gone at once in this simulation
    }
    if (ending != null && pod != null && ending.podUid().equals(pod.uid())) {
      pod = null; // a finished pod is not live any more; the controller keeps it but it no longer counts
    }
    last.start().ifPresent(s -> {
      starts.add(s);
      pod = new PodView(s.podName(), "uid-" + (++podSeq), PodView.Stage.PENDING, now, null, null, null, false);
      lease = null;
    });
    return last;
  }

  Decision reconcile() {
    return reconcile(null);
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
    return reconcile(e);
  }

  Decision exit(int code) {
    return exit(code, code == 0 ? "Completed" : "Error", null);
  }

  Decision end(EndingKind kind, String reason) {
    RunEnding e = new RunEnding(pod.name(), pod.uid(), kind, null, reason, null, now);
    pod = new PodView(pod.name(), pod.uid(), PodView.Stage.FINISHED, pod.createdAt(), pod.startedAt(), null, null,
        false);
    return reconcile(e);
  }

  /** The agent renews its Lease now. */
  void heartbeat(HealthVerdict verdict) {
    lease = new LeaseView(now, now, verdict, null, lease == null ? null : lease.checkpoint(),
        lease == null ? null : lease.checkpointStatus(), lease == null ? null : lease.stepIdempotent(),
        lease == null ? null : lease.artifactsReady());
  }

  void checkpoint(String name, String status, Boolean idempotent, Boolean artifactsReady) {
    lease = new LeaseView(now, now, HealthVerdict.Healthy, null, name, status, idempotent, artifactsReady);
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

  /** Waits out a Backoff or CircuitOpen phase, then lets the new pod run. */
  Decision restartAndRun() {
    now = state.nextRestartAt;
    reconcile();
    if (pod == null) {
      throw new AssertionError("no pod started at nextRestartAt; phase " + state.phase);
    }
    return running();
  }
}

package dev.respawn.simulate;

import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.api.v1alpha1.HealthVerdict;
import dev.respawn.policy.Decision;
import dev.respawn.policy.EndingKind;
import dev.respawn.policy.EventReason;
import dev.respawn.policy.GoDuration;
import dev.respawn.policy.InstanceState;
import dev.respawn.policy.LeaseView;
import dev.respawn.policy.PodView;
import dev.respawn.policy.RestartEvaluator;
import dev.respawn.policy.RestartPolicy;
import dev.respawn.policy.RunEnding;
import dev.respawn.simulate.SimulationReport.Event;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * One AgentInstance in virtual time, as the controller drives the decision core for it: its status,
 * its pods and heartbeat Lease ({@link SimulatedPods}), the core's last decision, and what the current
 * story step has shown so far (the core's Events, notes for the reader). Pods start and stop at once;
 * a reconcile happens exactly when something happens or the core asked to be woken.
 */
final class VirtualInstance {
  private final RestartPolicy policy;
  private final RestartEvaluator evaluator;
  private final SplittableRandom random;
  private final SimulatedPods pods;

  InstanceState state = new InstanceState();
  Instant now;
  PodView pod;
  Decision last;
  Instant runStart;
  StoryStep.LeaseNotes annotations = StoryStep.LeaseNotes.NONE;
  final List<Event> events = new ArrayList<>();
  final List<String> notes = new ArrayList<>();

  VirtualInstance(RestartPolicy policy, RestartEvaluator evaluator, SplittableRandom random, String namespace,
      String name, Instant start) {
    this.policy = policy;
    this.evaluator = evaluator;
    this.random = random;
    this.pods = new SimulatedPods(namespace, name);
    this.now = start;
  }

  /** Starts the next run when none is live: at nextRestartAt (Backoff, CircuitOpen), or now. */
  void startRunIfNeeded(boolean neverStarts) {
    if (pod == null || !pod.isLive()) {
      if (state.nextRestartAt != null && state.nextRestartAt.isAfter(now)) {
        now = state.nextRestartAt;
      }
      reconcile();
      if (last.start().isEmpty()) {
        throw new IllegalStateException("the decision core started no run at " + Simulation.rel(now) + " (phase "
            + state.phase + ", next restart " + state.nextRestartAt + ")");
      }
    }
    if (neverStarts) {
      pod = new PodView(pod.name(), pod.uid(), PodView.Stage.PENDING, pod.createdAt(), null, "ImagePullBackOff",
          "Back-off pulling image (simulated)", false);
      pods.update(pod, null);
      reconcile(); // the pod's status update
    } else if (pod.stage() == PodView.Stage.PENDING) {
      pod = new PodView(pod.name(), pod.uid(), PodView.Stage.RUNNING, pod.createdAt(), now, null, null, true);
      pods.update(pod, null);
      runStart = now;
      renew();
      reconcile();
    }
  }

  /** The agent renews its Lease now (when the policy asks for heartbeats or it writes annotations). */
  void renew() {
    if (pod == null || pod.stage() != PodView.Stage.RUNNING) {
      return;
    }
    if (policy.heartbeat().timeout().isPresent() || !annotations.isEmpty()) {
      pods.lease(new LeaseView(now, now, null, null, annotations.checkpoint(), annotations.checkpointStatus(),
          annotations.stepIdempotent(), annotations.artifactsReady()), pod.name());
    }
  }

  /** The agent writes its verdict (Stalled, Crashed) on its Lease, then the operator reconciles. */
  void verdict(HealthVerdict verdict, String detail) {
    pods.lease(new LeaseView(now, now, verdict, detail, annotations.checkpoint(), annotations.checkpointStatus(),
        annotations.stepIdempotent(), annotations.artifactsReady()), pod.name());
    reconcile();
  }

  /** Kubernetes reports the run's end: the container terminated, the pod was evicted, deleted, lost. */
  void endByKubernetes(StoryStep step) {
    PodView p = pod;
    pod = new PodView(p.name(), p.uid(), PodView.Stage.FINISHED, p.createdAt(), p.startedAt(), null, null, false);
    EndingKind kind = switch (step.type()) {
      case EVICTED -> EndingKind.DISRUPTED;
      case DELETED -> EndingKind.DELETED;
      case NODE_LOST -> EndingKind.NODE_LOST;
      case NO_STATE -> EndingKind.NO_STATE;
      default -> EndingKind.TERMINATED;
    };
    String message = step.message() != null ? step.message()
        : step.type() == EndingType.DELETED ? "pod deleted by someone else" : null;
    pods.update(pod, new RunEnding(p.name(), p.uid(), kind, step.effectiveExitCode(), step.effectiveReason(),
        message, now));
    reconcile();
  }

  /** One reconcile, as the controller does it: observe, decide, apply. */
  void reconcile() {
    CircuitState before = state.circuit.state();
    last = evaluator.decide(policy, state, pods.sighting(false, java.util.Map.of()), now, random);
    state = last.state();
    pods.apply(last, now);
    // the one Event the operator writes for this decision (api.md §8): its weightiest notice, the others in its note
    last.event().ifPresent(e -> events.add(new Event(e.type().name(), e.reason().name(), e.message())));
    for (Decision.Notice n : last.notices()) {
      if (n.reason() == EventReason.RestartSucceeded) {
        notes.add("healthy for " + GoDuration.format(policy.resetAfter()) + ": failure sequence ends");
      }
    }
    CircuitState after = state.circuit.state();
    if (before != after) {
      notes.add(before == CircuitState.Open && after == CircuitState.HalfOpen ? "trial run: circuit Open -> HalfOpen"
          : "circuit " + before + " -> " + after);
    }
    pod = state.currentPod == null ? null : pods.pod(state.currentPod).orElse(null);
    if (last.start().isPresent()) {
      runStart = null;
    }
  }
}

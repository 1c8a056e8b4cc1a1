package dev.respawn.policy;

import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.policy.RestartPolicy.RestartLimit;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * The core's one observe step: from the durable state and what the controller saw ({@link Sighting}) to
 * the {@link Observation} a decision is made on. Pure. Only pods whose controller ownerReference is the
 * instance's UID count; a pod that merely carries the labels is invisible to every later step.
 *
 * <p>After a crash of the operator, the pods tell what status could not: a pod of the next run that
 * status does not know yet was created by a start whose status write never happened (or was deferred,
 * see {@link Decision#deferStatus()}); it is handed to the decision as {@link Observation#nextRun()}, which
 * decides that start again with all its bookkeeping. A pod further ahead, or one met while suspending
 * or before nextRestartAt, is adopted by moving the state to it.
 */
public final class RunObserver {
  private RunObserver() {}

  /** The observation and the state it applies to (the given state is never changed). */
  public record Observed(InstanceState state, Observation observation) {}

  public static Observed observe(InstanceState given, Sighting seen, Instant now, Optional<RestartLimit> limit) {
    InstanceState state = given.copy();
    if ((state.phase == Phase.Starting || state.phase == Phase.Running) && state.currentPod == null) {
      // a status that shows a run but names no pod (edited by hand, restored in part): the run's pod by its name,
      // or, before any run was made, no run to wait for
      if (state.run > 0) {
        state.currentPod = seen.instance() + "-" + state.run;
      } else {
        state.phase = Phase.Pending;
      }
    }
    state.recentRestarts = RestartWindow.bounded(RestartWindow.notAfter(state.recentRestarts, now), limit);
    List<Instant> failures = RestartWindow.notAfter(state.circuit.failureTimes(), now);
    if (!failures.equals(state.circuit.failureTimes())) {
      CircuitSnapshot c = state.circuit;
      state.circuit = new CircuitSnapshot(c.state(), failures, c.trips(), c.openedAt(), c.halfOpenAt(),
          c.lastSuccessAt(), c.lastFailureAt());
    }
    List<PodFacts> owned = seen.pods().stream().filter(p -> p.controlledBy(seen.instanceUid())).toList();
    boolean startDue = state.nextRestartAt == null || !now.isBefore(state.nextRestartAt);
    Optional<PodFacts> next = Optional.empty();
    List<PodFacts> pods = owned;
    if (!seen.suspend() && startDue) {
      next = owned.stream().filter(p -> p.run() == state.run + 1).findFirst();
      pods = owned.stream().filter(p -> p.run() != state.run + 1).toList();
    }
    adopt(state, pods, limit, now);
    Optional<PodFacts> current = Optional.ofNullable(state.currentPod)
        .flatMap(name -> owned.stream().filter(p -> name.equals(p.name())).findFirst());
    Optional<RunEnding> ending = current.flatMap(PodFacts::ending);
    boolean runExpected = state.phase == Phase.Starting || state.phase == Phase.Running;
    if (current.isEmpty() && state.currentPod != null && runExpected) {
      ending = Optional.of(new RunEnding(state.currentPod, null, EndingKind.DELETED, null, "Deleted",
          "pod " + state.currentPod + " vanished", now));
    }
    Optional<PodView> view = current.map(PodFacts::view);
    // a live pod other than the current one (a previous run still terminating) blocks a new start
    Optional<PodView> blocking = pods.stream().filter(p -> !p.name().equals(state.currentPod))
        .map(PodFacts::view).filter(PodView::isLive).findFirst();
    if (view.isEmpty() && blocking.isPresent()) {
      view = blocking;
    }
    List<PodFacts> earlier = new ArrayList<>();
    for (PodFacts p : pods) {
      if (p.run() < state.run && p.view().stage() != PodView.Stage.TERMINATING) {
        earlier.add(p);
      }
    }
    Observation o = new Observation(seen.namespace(), seen.instance(), seen.suspend(), view, ending,
        seen.requests(), seen.leaseOf(state.currentPod), seen.checkpointLease(), seen.leaseExists(), earlier, next,
        seen.dependencies(), seen.startUntold());
    return new Observed(state, o);
  }

  /**
   * Moves the state to the newest owned pod when it is further ahead than the state knows. Every run
   * skipped so was a restart: it is counted in {@code restarts} and recorded in the restartLimit window,
   * dated by the creation of its pod, or of the first later pod still there when its own is gone (a start
   * is never dated earlier than it can have been, so the window does not forget it too soon).
   */
  private static void adopt(InstanceState state, List<PodFacts> pods, Optional<RestartLimit> limit, Instant now) {
    pods.stream().max(Comparator.comparingInt(PodFacts::run)).filter(p -> p.run() > state.run).ifPresent(p -> {
      for (int run = Math.max(state.run, 1) + 1; run <= p.run(); run++) {
        state.restarts += 1;
        state.recentRestarts = new ArrayList<>(RestartWindow.record(state.recentRestarts, limit,
            startOf(pods, run, now)));
      }
      if (state.lastRestart != null && state.lastRestart.startedAt() == null) {
        // the restart that made it, whose own status write had not happened: it started
        state.lastRestart = state.lastRestart.started(p.name(), startOf(pods, p.run(), now));
      }
      state.run = p.run();
      state.currentPod = p.name();
      state.phase = Phase.Starting;
      state.nextRestartAt = null;
      state.runStartedAt = null;
    });
  }

  private static Instant startOf(List<PodFacts> pods, int run, Instant now) {
    return pods.stream().filter(q -> q.run() >= run).min(Comparator.comparingInt(PodFacts::run))
        .map(q -> q.view().createdAt()).filter(t -> t != null && !t.isAfter(now)).orElse(now);
  }
}

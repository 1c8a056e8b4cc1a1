package dev.respawn.controller;

import dev.respawn.policy.EndingKind;
import dev.respawn.policy.InstanceState;
import dev.respawn.policy.PodFacts;
import dev.respawn.policy.PodView;
import dev.respawn.policy.RunEnding;
import io.fabric8.kubernetes.api.model.Pod;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * The starts whose status write waits for the run's first sign ({@code Decision.deferStatus}, api.md §12): until
 * it is written, the run's pod is its only record. A pod deleted in that time would leave status at the wait
 * that the start ended, and the run would be started again under the same number, its loss never counted. So
 * this operator remembers each such start (by instance UID) until status shows its run, and hands a pod of it
 * that vanished to the core as a finished pod of the next run that was deleted: the start is taken up and its
 * run ends as a ContextReset (api.md §4, "deleted by someone else"). Nothing of it survives an operator
 * restart: a new process that finds neither the pod nor the status of such a start starts the run again.
 */
final class UnwrittenStarts {
  /** A start made whose status is not written yet: its pod's name, UID, run and creation time. */
  record Start(String pod, String uid, int run, Instant createdAt) {}

  private final Map<String, Start> byInstance = new ConcurrentHashMap<>();
  private final Map<String, Runnable> untold = new ConcurrentHashMap<>();

  /**
   * After a decision: a start whose status write waits is remembered (its pod as {@code cached} shows it), any
   * other decision writes status now (or never: the instance is gone), so nothing is left to remember.
   */
  void decided(String instanceUid, InstanceState status, dev.respawn.policy.Decision decision,
      Function<String, Optional<Pod>> cached) {
    if (!decision.deferStatus()) {
      forget(instanceUid);
    } else if (decision.state().run > status.run) {
      cached.apply(decision.state().currentPod).ifPresent(p -> remember(instanceUid, p, decision.state().run));
    }
  }

  /** The decision started run {@code run} in {@code pod} and left its status unwritten. */
  void remember(String instanceUid, Pod pod, int run) {
    byInstance.put(instanceUid, new Start(pod.getMetadata().getName(), pod.getMetadata().getUid(), run,
        PodObserver.view(pod, null).createdAt()));
  }

  /** Status shows the run now. */
  void forget(String instanceUid) {
    byInstance.remove(instanceUid);
  }

  /** The instance is gone: its start, and what was to be told of it. */
  void gone(String instanceUid) {
    byInstance.remove(instanceUid);
    untold.remove(instanceUid);
  }

  /**
   * The telling (Event, audit line, metrics) of the unwritten start: it waits until status shows the run
   * (commit first, then tell), and is lost with the start if the operator stops first.
   */
  void holdTelling(String instanceUid, Runnable tell) {
    // after what waits already (a later look at the same unwritten start), in the order decided
    untold.merge(instanceUid, tell, (earlier, later) -> () -> {
      earlier.run();
      later.run();
    });
  }

  /**
   * Whether this process made a start of the instance that status does not show yet, or holds its telling: a
   * next run's pod it did not make (a process before it did, and stopped before telling) is told when taken up.
   */
  boolean holds(String instanceUid) {
    return byInstance.containsKey(instanceUid) || untold.containsKey(instanceUid);
  }

  /** Status was written: the start told now, before the decision that wrote it. */
  void tellHeld(String instanceUid) {
    Runnable tell = untold.remove(instanceUid);
    if (tell != null) {
      tell.run();
    }
  }

  /**
   * The pod of the instance's unwritten start when it is gone (neither cached nor on the server), as a pod
   * that finished by deletion; empty while it exists, or when status shows its run already (then forgotten).
   */
  Optional<PodFacts> vanished(String instanceUid, InstanceState status, List<Pod> cached,
      Function<String, Pod> directGet, Instant now) {
    Start start = byInstance.get(instanceUid);
    if (start == null) {
      return Optional.empty();
    }
    if (status.run >= start.run()) {
      byInstance.remove(instanceUid, start);
      return Optional.empty();
    }
    if (cached.stream().anyMatch(p -> start.pod().equals(p.getMetadata().getName()))) {
      return Optional.empty();
    }
    Pod onServer = directGet.apply(start.pod());
    if (onServer != null && start.uid().equals(onServer.getMetadata().getUid())) {
      return Optional.empty(); // the cache has not heard of it yet
    }
    PodView view = new PodView(start.pod(), start.uid(), PodView.Stage.FINISHED, start.createdAt(), null, null, null,
        false);
    RunEnding ending = new RunEnding(start.pod(), start.uid(), EndingKind.DELETED, null, "Deleted",
        "pod " + start.pod() + " vanished before its start was written to status", now);
    return Optional.of(new PodFacts(view, start.run(), instanceUid, Optional.of(ending)));
  }

  /** How many starts, and tellings of them, are remembered (for tests: nothing stays of a deleted instance). */
  int size() {
    return byInstance.size() + untold.size();
  }
}

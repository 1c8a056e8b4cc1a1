package dev.respawn.policy;

import dev.respawn.api.v1alpha1.Phase;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * When a restart's status write may wait (api.md §12: no write without a change a user could act on), and
 * when the run it started began: the quiet start of a new pod, and the wait for its agent's first renewal.
 */
public final class QuietStart {
  private QuietStart() {
  }

  /**
   * How long a start may stay unwritten while its pod shows no sign: a pod that runs within it (a cached
   * image starts in a second or two) costs no write of its own; one that takes longer (a slow image pull, no
   * node takes it) is shown Starting. Short enough that status never shows a wait that is over for long.
   */
  public static final Duration QUIET_START = Duration.ofSeconds(5);

  /**
   * A restart that is all a decision changed need not be written yet (api.md §12): the next run's pod
   * carries it (see {@link RunObserver}) until the run gives a user something to act on: it runs (with
   * heartbeats required: its agent renewed the Lease, so that Running and Ready are one write, not two
   * a moment apart), it cannot start (a waiting reason), or it ends. A pod not running yet waits for
   * {@link #QUIET_START} at most, after which status shows the run Starting; a running pod waits for its
   * agent's first renewal until {@link #FIRST_RENEWAL} after its start at most (and QUIET_START plus
   * FIRST_RENEWAL after it was made), after which status shows it Running and waiting for its first heartbeat.
   */
  static boolean awaitingFirstSign(DecisionDraft d, Instant made) {
    String reason = d.liveness == null ? LivenessGate.POD_NOT_RUNNING : d.liveness.reason();
    Instant shown = (made == null ? d.now : made).plus(QUIET_START);
    if (d.state.phase == Phase.Running) {
      Optional<Instant> renewalDue = firstRenewalDue(d, reason);
      if (renewalDue.isEmpty()) {
        return false;
      }
      // bounded however late the pod ran: the quiet start and one first renewal's wait after it was made
      Instant latest = shown.plus(FIRST_RENEWAL);
      shown = renewalDue.get().isBefore(latest) ? renewalDue.get() : latest;
    } else if (d.state.phase != Phase.Starting || !LivenessGate.POD_NOT_RUNNING.equals(reason)) {
      return false;
    }
    if (!d.now.isBefore(shown)) {
      return false;
    }
    d.wakeAt(shown);
    return true;
  }

  /**
   * How long after its pod's start a run's status may wait for its agent's first renewal (an agent renews
   * as it starts: a second or two); never more than half the startup grace, so that status shows a run that
   * never renews Running well before it ends stale.
   */
  public static final Duration FIRST_RENEWAL = Duration.ofSeconds(3);

  /**
   * A run that runs while its agent has not renewed the Lease yet, with heartbeats required: until when its
   * status may wait for that first renewal ({@link #FIRST_RENEWAL}).
   */
  private static Optional<Instant> firstRenewalDue(DecisionDraft d, String reason) {
    Optional<Duration> timeout = d.policy.heartbeat().timeout();
    Optional<PodView> pod = d.currentPod();
    if (timeout.isEmpty() || pod.isEmpty() || !LivenessGate.STALE.equals(reason)
        || LivenessGate.lastSeen(d.obs.lease().orElse(null)) != null) {
      return Optional.empty();
    }
    if (pod.get().startedAhead(d.now)) {
      // a node clock ahead: the pod's start is clamped to now at every look, so the wait would move on with each
      // look, and the grace counted from when it ends; shown Running now, its start now (one write more, for
      // such a node only: Ready follows at the first renewal)
      return Optional.empty();
    }
    Instant started = pod.get().startedBy(d.now);
    return Optional.ofNullable(started).map(t -> t.plus(firstRenewalWait(d.policy, timeout.get())));
  }

  /** The wait for a first renewal: {@link #FIRST_RENEWAL}, or half the startup grace when that is shorter. */
  private static Duration firstRenewalWait(RestartPolicy p, Duration timeout) {
    Duration half = p.heartbeat().startupGrace().orElse(timeout).dividedBy(2);
    return half.compareTo(FIRST_RENEWAL) < 0 ? half : FIRST_RENEWAL;
  }

  /**
   * When the current run started running, by this operator's clock: the agent container's start (the latest
   * instant its whole-second stamp can mean), so that a status written only at the agent's first renewal, or
   * when the wait for it ends, does not stretch the startup grace by that wait (api.md §5: the grace counts
   * from the pod's start). Never later than now, and never earlier than that wait before now: a node clock
   * behind this operator's shortens no grace by more than that wait.
   */
  static Instant runningSince(DecisionDraft d, PodView pod) {
    Instant started = pod.startedBy(d.now);
    Optional<Duration> timeout = d.policy.heartbeat().timeout();
    if (started == null || timeout.isEmpty()) {
      return d.now;
    }
    Instant earliest = d.now.minus(firstRenewalWait(d.policy, timeout.get()));
    return started.isBefore(earliest) ? earliest : started;
  }

  /** The decision only saw the current run start running: Starting -> Running, nothing else. */
  static boolean onlyNowRunning(InstanceState before, InstanceState after) {
    if (before.phase != Phase.Starting || after.phase != Phase.Running) {
      return false;
    }
    InstanceState running = before.copy();
    running.phase = Phase.Running;
    running.runStartedAt = after.runStartedAt;
    return running.equals(after);
  }
}

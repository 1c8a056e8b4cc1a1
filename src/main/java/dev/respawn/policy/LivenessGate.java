package dev.respawn.policy;

import dev.respawn.api.v1alpha1.HealthVerdict;
import dev.respawn.policy.Decision.Liveness;
import dev.respawn.policy.InstanceState.HeartbeatInfo;
import dev.respawn.policy.InstanceState.RunInfo;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * The fail-closed liveness gate of api.md §5. Staleness is judged by when the operator saw the
 * Lease's renewTime change (as Kubernetes' node lifecycle controller does), never by comparing the
 * agent's clock with ours.
 */
public final class LivenessGate {
  public static final String HEALTHY = "Healthy";
  public static final String UNHEALTHY_VERDICT = "UnhealthyVerdict";
  public static final String AMBIGUOUS = "AmbiguousState";
  public static final String STALE = "StaleHeartbeat";
  public static final String RESTART_LIMIT = "RestartLimitExceeded";
  public static final String POD_NOT_RUNNING = "PodNotRunning";
  public static final String POD_NOT_READY = "PodNotReady";
  /**
   * A container waits for a reason that a condition may not carry (a runtime's free text: not a letter followed
   * by letters, digits, '_', ',' or ':', or over 1024 characters).
   */
  public static final String CONTAINER_WAITING = "ContainerWaiting";
  /** What a condition's reason may be (metav1.Condition: an identifier, at most 1024 characters). */
  private static final java.util.regex.Pattern CONDITION_REASON =
      java.util.regex.Pattern.compile("[A-Za-z]([A-Za-z0-9_,:]{0,1022}[A-Za-z0-9_])?");

  private LivenessGate() {}

  /**
   * The heartbeat status after seeing {@code lease} (held by the current pod): it changes only when the
   * verdict or the detail does. A renewal without a respawn.dev/health annotation counts as Healthy.
   */
  public static HeartbeatInfo track(HeartbeatInfo previous, LeaseView lease, Instant now) {
    if (lease == null || lease.renewTime() == null) {
      return previous;
    }
    HealthVerdict verdict = verdictOf(lease);
    String detail = Bounds.truncateUtf8(lease.detail(), Bounds.DETAIL_BYTES);
    if (previous != null && previous.verdict() == verdict && Objects.equals(previous.detail(), detail)) {
      return previous;
    }
    Instant since = previous != null && previous.verdict() == verdict ? previous.since() : now;
    return new HeartbeatInfo(verdict, since, detail);
  }

  /** The run ended because no heartbeat change was seen in time: status says so until a new run renews. */
  public static HeartbeatInfo stale(Liveness why, Instant now) {
    return new HeartbeatInfo(HealthVerdict.Stale, now, Bounds.truncateUtf8(why.message(), Bounds.DETAIL_BYTES));
  }

  /**
   * Ready between runs (Backoff, CircuitOpen): the gate's denial that ended the last run while its
   * verdict stands (UnhealthyVerdict, StaleHeartbeat), else PodNotRunning; with when the next run is due.
   * It is the same from the decision that ended the run to the next run's start: one status write.
   */
  public static Liveness betweenRuns(InstanceState s) {
    String next = s.nextRestartAt != null ? "next run at " + s.nextRestartAt : "next run when its circuit lets it";
    HeartbeatInfo hb = s.heartbeat;
    RunInfo last = s.history.isEmpty() ? null : s.history.get(s.history.size() - 1);
    boolean judgedLastRun = hb != null && hb.since() != null && last != null && last.startedAt() != null
        && !hb.since().isBefore(last.startedAt()) && (last.endedAt() == null || !hb.since().isAfter(last.endedAt()));
    if (judgedLastRun && (hb.verdict() == HealthVerdict.Stalled || hb.verdict() == HealthVerdict.Crashed)) {
      return new Liveness(false, UNHEALTHY_VERDICT, "the agent reported " + hb.verdict() + detail(hb.detail())
          + "; " + next);
    }
    if (judgedLastRun && hb.verdict() == HealthVerdict.Stale) {
      return new Liveness(false, STALE, hb.detail() + "; " + next);
    }
    InstanceState.DecisionInfo decided = s.lastDecision;
    if (decided != null && decided.reasonCode() == ReasonCode.SPAWN_FAILED && decided.message() != null) {
      // why no pod runs (a quota, a foreign pod holding the name) belongs where kubectl describe shows it
      return new Liveness(false, POD_NOT_RUNNING, Bounds.oneLine("the pod could not be created: "
          + decided.message() + "; " + next, Bounds.MESSAGE_BYTES));
    }
    return new Liveness(false, POD_NOT_RUNNING, next);
  }

  /** When the operator last saw the current pod's renewal change, or null when it saw none. */
  public static Instant lastSeen(LeaseView lease) {
    return lease == null || lease.renewTime() == null ? null : lease.changeSeenAt();
  }

  private static HealthVerdict verdictOf(LeaseView lease) {
    if (lease == null || lease.renewTime() == null) {
      return HealthVerdict.Unknown;
    }
    return lease.verdict() == null ? HealthVerdict.Healthy : lease.verdict();
  }

  /**
   * A pod not running yet: the kubelet's waiting reason (ErrImagePull, ...) is the Ready reason when it is one a
   * condition may carry; other text (a runtime's own words) goes into the message, under {@value #CONTAINER_WAITING}.
   */
  private static Liveness waiting(PodView pod) {
    String waiting = pod.waitingReason();
    String message = pod.waitingMessage() != null ? pod.waitingMessage() : "pod " + pod.name() + " is not running yet";
    if (waiting == null) {
      return new Liveness(false, POD_NOT_RUNNING, message);
    }
    if (CONDITION_REASON.matcher(waiting).matches()) {
      return new Liveness(false, waiting, message);
    }
    return new Liveness(false, CONTAINER_WAITING, "waiting: " + waiting
        + (pod.waitingMessage() != null ? ": " + pod.waitingMessage() : ""));
  }

  /**
   * Judges the current run: whether it must end (stalled, crashed, stale, never started), whether it
   * is Ready, and when the verdict may change next.
   */
  public static Judgement judge(RestartPolicy policy, LeaseView lease, PodView pod, Instant runningSince,
      Instant now) {
    Optional<Duration> grace = policy.heartbeat().startupGrace();
    switch (pod.stage()) {
      case PENDING -> {
        Liveness l = waiting(pod);
        if (grace.isPresent() && pod.createdAt() != null) {
          Instant deadline = pod.createdAt().plus(grace.get());
          if (!now.isBefore(deadline)) {
            return new Judgement(Optional.of(EndingKind.NEVER_STARTED), l, Optional.empty());
          }
          return new Judgement(Optional.empty(), l, Optional.of(deadline));
        }
        return new Judgement(Optional.empty(), l, Optional.empty());
      }
      case RUNNING -> {
        return judgeRunning(policy, lease, pod, runningSince, now);
      }
      default -> {
        return new Judgement(Optional.empty(), new Liveness(false, POD_NOT_RUNNING,
            "pod " + pod.name() + " is not running"), Optional.empty());
      }
    }
  }

  private static Judgement judgeRunning(RestartPolicy policy, LeaseView lease, PodView pod, Instant runningSince,
      Instant now) {
    HealthVerdict verdict = verdictOf(lease);
    // the agent's own Stalled/Crashed verdict ends the run whether or not heartbeats are required
    if (verdict == HealthVerdict.Stalled || verdict == HealthVerdict.Crashed) {
      Liveness l = new Liveness(false, UNHEALTHY_VERDICT, "the agent reported " + verdict + detail(lease));
      EndingKind kind = verdict == HealthVerdict.Stalled ? EndingKind.HEARTBEAT_STALLED : EndingKind.HEARTBEAT_CRASHED;
      return new Judgement(Optional.of(kind), l, Optional.empty());
    }
    Optional<Duration> timeout = policy.heartbeat().timeout();
    if (timeout.isEmpty()) {
      Liveness l = pod.ready() ? new Liveness(true, HEALTHY, "pod " + pod.name() + " is ready")
          : new Liveness(false, POD_NOT_READY, "pod " + pod.name() + " is running but not ready");
      return new Judgement(Optional.empty(), l, Optional.empty());
    }
    // the grace counts from when this operator saw the run running (its clock, kept in status), not from the
    // kubelet's startedAt: a node clock minutes behind would end a starting run at once, one ahead stretch it
    Instant started = runningSince != null ? runningSince : pod.startedBy(now);
    Instant graceEnd = started == null ? now : started.plus(policy.heartbeat().startupGrace().orElse(timeout.get()));
    Instant looked = lease == null ? null : lease.neverRenewedLookedAt();
    boolean granted = looked != null && looked.plus(timeout.get()).isAfter(graceEnd);
    if (granted) {
      // a run older than this operator process that never renewed: a full timeout from the process's first
      // look (api.md §12: a restarted operator grants every live run a fresh heartbeat timeout)
      graceEnd = looked.plus(timeout.get());
    }
    Instant seen = lastSeen(lease);
    // fresh: age <= timeout, or within startupGrace of the pod's start (api.md §5)
    Instant deadline = seen == null || seen.plus(timeout.get()).isBefore(graceEnd) ? graceEnd
        : seen.plus(timeout.get());
    if (now.isAfter(deadline)) {
      String why = seen == null ? (granted ? "no heartbeat within the heartbeat timeout granted when this operator "
          + "began to watch the run's heartbeat (" + GoDuration.format(timeout.get()) + "; at its start, or when the "
          + "policy came to require heartbeats), nor within the startup grace"
          : "no heartbeat within the startup grace")
          : "no heartbeat change seen since " + seen + " (timeout " + GoDuration.format(timeout.get()) + ")";
      return new Judgement(Optional.of(EndingKind.HEARTBEAT_STALE), new Liveness(false, STALE, why), Optional.empty());
    }
    Optional<Instant> next = Optional.of(deadline.plusMillis(1));
    if (seen == null) {
      return new Judgement(Optional.empty(), new Liveness(false, STALE, "waiting for the first heartbeat (due by "
          + deadline + ")"), next);
    }
    if (verdict == HealthVerdict.Healthy) {
      return new Judgement(Optional.empty(), new Liveness(true, HEALTHY, "heartbeat fresh" + detail(lease)), next);
    }
    return new Judgement(Optional.empty(), new Liveness(false, AMBIGUOUS, "the agent reported " + verdict
        + detail(lease)), next);
  }

  private static String detail(LeaseView lease) {
    return detail(lease == null ? null : Bounds.truncateUtf8(lease.detail(), Bounds.DETAIL_BYTES));
  }

  private static String detail(String d) {
    return d == null || d.isEmpty() ? "" : ": " + d;
  }

  /** The gate's verdict on the current run. */
  public record Judgement(Optional<EndingKind> endRun, Liveness liveness, Optional<Instant> nextCheck) {}
}

package dev.respawn.policy;

import java.time.Instant;

/**
 * The current run's pod as the controller sees it. startedAt is when the agent container started
 * running (null while pending); waitingReason explains a pod that cannot start (ErrImagePull, ...).
 */
public record PodView(String name, String uid, Stage stage, Instant createdAt, Instant startedAt,
    String waitingReason, String waitingMessage, boolean ready) {

  public enum Stage { PENDING, RUNNING, TERMINATING, FINISHED }

  /** A pod that still runs or may still run: a new pod must not be created beside it. */
  public boolean isLive() {
    return stage != Stage.FINISHED;
  }

  /**
   * When the agent container started, as far as the operator's clock can tell: the kubelet's time is the
   * node's clock, so it is taken no earlier than the pod was made (the operator's own time, its started-at
   * annotation) and no later than {@code now}. Null while the pod has neither time.
   */
  public Instant startedBy(Instant now) {
    Instant t = startedAt != null ? startedAt : createdAt;
    if (t == null) {
      return null;
    }
    if (createdAt != null && t.isBefore(createdAt)) {
      t = createdAt;
    }
    return t.isAfter(now) ? now : t;
  }

  /**
   * The kubelet's whole-second start stamp is more than a second after {@code now}: the node's clock is ahead of the
   * operator's by more than a second (a node less than a second ahead can stamp a start that lies up to a second in
   * the future; it is taken as one in step).
   */
  public boolean startedAhead(Instant now) {
    return startedAt != null && startedAt.minusNanos(999_999_999).isAfter(now.plusSeconds(1));
  }
}

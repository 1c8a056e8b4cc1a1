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
}

package dev.respawn.simulate;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * One step of a story: how the current run ends (or, for {@code ok}, how long it stays healthy).
 *
 * @param token the step as the story wrote it (compact form), shown in the report
 * @param type how the run ends
 * @param exitCode the agent container's exit code (exit; oom 137 by default), or null
 * @param reason the container/pod reason Kubernetes reports, or null for the type's default
 * @param message the termination message (for stalled/crashed: the Lease's respawn.dev/detail), or null
 * @param after how long the run lasted before this step's ending (ok: how long it stays healthy); null: 0,
 *     for ok the policy's resetAfter
 * @param lease the checkpoint annotations the agent has on its Lease during this step
 */
public record StoryStep(String token, EndingType type, Integer exitCode, String reason, String message,
    Duration after, LeaseNotes lease) {

  /** The checkpoint annotations of api.md §5 on the heartbeat Lease; null fields are absent annotations. */
  public record LeaseNotes(String checkpoint, String checkpointStatus, Boolean stepIdempotent,
      Boolean artifactsReady) {
    public static final LeaseNotes NONE = new LeaseNotes(null, null, null, null);
    static final Set<String> STATUSES = Set.of("in_progress", "failed", "complete");

    public boolean isEmpty() {
      return checkpoint == null && checkpointStatus == null && stepIdempotent == null && artifactsReady == null;
    }
  }

  public StoryStep {
    lease = lease == null ? LeaseNotes.NONE : lease;
  }

  /** A step with no exit code, reason, message, duration or Lease annotations. */
  public static StoryStep of(EndingType type) {
    return new StoryStep(type.token(), type, null, null, null, null, LeaseNotes.NONE);
  }

  /** The exit code of the ending: the given one, or the type's default. */
  public Integer effectiveExitCode() {
    if (exitCode != null) {
      return exitCode;
    }
    return type == EndingType.OOM ? 137 : null;
  }

  /** The reason Kubernetes reports for the ending: the given one, or the type's default. */
  public String effectiveReason() {
    if (reason != null) {
      return reason;
    }
    return switch (type) {
      case EXIT -> Integer.valueOf(0).equals(exitCode) ? "Completed" : "Error";
      case OOM -> "OOMKilled";
      case DEADLINE -> "DeadlineExceeded";
      case EVICTED -> "Evicted";
      case DELETED -> "Deleted";
      case NODE_LOST -> "NodeLost";
      default -> null;
    };
  }

  /**
   * Checks that every given field applies to the type.
   *
   * @throws StoryException naming the field and the rule, prefixed with {@code where}
   */
  StoryStep validated(String where) throws StoryException {
    List<String> problems = new ArrayList<>();
    if (type == EndingType.EXIT && exitCode == null) {
      problems.add("exit needs an exit code (exit:N, or exitCode: N in a story file)");
    }
    if (exitCode != null && (exitCode < 0 || exitCode > 255)) {
      problems.add("exitCode must be 0..255 (got " + exitCode + ")");
    }
    if (exitCode != null && !Set.of(EndingType.EXIT, EndingType.OOM, EndingType.DEADLINE, EndingType.EVICTED)
        .contains(type)) {
      problems.add("exitCode does not apply to " + type.token());
    }
    if (reason != null && !Set.of(EndingType.EXIT, EndingType.EVICTED, EndingType.NO_STATE).contains(type)) {
      problems.add("reason does not apply to " + type.token() + " (only to exit, evicted and no-state)");
    }
    if (message != null && !(type.reportedByKubernetes() || type == EndingType.STALLED
        || type == EndingType.CRASHED)) {
      problems.add("message does not apply to " + type.token());
    }
    if (after != null && type == EndingType.NEVER_STARTED) {
      problems.add("a duration does not apply to never-started (heartbeat.startupGrace decides when it ends)");
    }
    if (after != null && after.isNegative()) {
      problems.add("the duration must not be negative");
    }
    if (!lease.isEmpty() && type == EndingType.NEVER_STARTED) {
      problems.add("Lease annotations do not apply to never-started (no agent runs)");
    }
    if (lease.checkpointStatus() != null && !LeaseNotes.STATUSES.contains(lease.checkpointStatus())) {
      problems.add("checkpointStatus must be one of in_progress, failed, complete (got \""
          + lease.checkpointStatus() + "\")");
    }
    if (!problems.isEmpty()) {
      throw new StoryException(where + ": " + String.join("; ", problems));
    }
    return this;
  }
}

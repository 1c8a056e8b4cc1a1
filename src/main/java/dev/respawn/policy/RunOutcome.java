package dev.respawn.policy;

/** How a run ended, as status.history records it. */
public enum RunOutcome {
  /** The agent exited 0. */
  Success,
  /** A failure (counted, or waiting for a shared dependency). */
  Failure,
  /** The agent asked for its restart (restartRequestExitCode). */
  RestartRequest,
  /** A failure an Ignore rule does not count. */
  Ignored,
  /** An operator's respawn.dev/restart request ended it. */
  Restarted,
  /** Suspended, or ended by an operator's resume request. */
  Stopped
}

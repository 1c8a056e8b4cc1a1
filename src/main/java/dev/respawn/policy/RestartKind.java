package dev.respawn.policy;

/** Why the next run starts (status.lastRestart.kind). */
public enum RestartKind {
  /** A failure, restarted after its backoff (or a shared dependency's release). */
  Failure,
  /** A failure an Ignore rule restarts at once, uncounted. */
  Ignored,
  /** The agent asked for it (restartRequestExitCode). */
  RestartRequest,
  /** An operator's respawn.dev/restart request. */
  Manual,
  /** An operator's respawn.dev/resume request: a new lifecycle. */
  Resume,
  /** spec.suspend was cleared. */
  Unsuspend
}

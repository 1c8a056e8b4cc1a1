package dev.respawn.policy;

/**
 * The reasons of the Kubernetes Events of api.md §8, each with its short action verb and its weight:
 * a decision writes one Event, under the reason of its weightiest notice (warnings before normal
 * notices, then the lower {@link #rank}).
 */
public enum EventReason {
  Escalated("Escalate", 0),
  RestartExhausted("Escalate", 1),
  PolicyInvalid("ValidatePolicy", 2),
  CircuitBreakerStateChanged("UpdateCircuitBreaker", 3),
  DependencyCircuitChanged("UpdateDependencyCircuit", 4),
  HeartbeatStale("CheckHeartbeat", 5),
  RestartFailed("ObserveFailure", 6),
  RestartRequested("Restart", 7),
  // a run that starts from a checkpoint is told so (not RestartStarted): the resume is what matters of that start
  ResumeDecision("DecideResume", 8),
  RestartScheduled("ScheduleRestart", 9),
  RestartStarted("Restart", 10),
  RestartSucceeded("Recover", 11);

  private final String action;
  private final int rank;

  EventReason(String action, int rank) {
    this.action = action;
    this.rank = rank;
  }

  /** The Event's action: a short verb of what the operator did. */
  public String action() {
    return action;
  }

  /** The audit line's event of a decision told under this reason, e.g. {@code restart_started}. */
  public String auditEvent() {
    return name().replaceAll("([a-z])([A-Z])", "$1_$2").toLowerCase(java.util.Locale.ROOT);
  }

  /** Lower is weightier, among notices of the same type. */
  public int rank() {
    return rank;
  }
}

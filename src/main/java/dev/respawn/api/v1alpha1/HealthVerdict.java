package dev.respawn.api.v1alpha1;

/**
 * The agent's health as status shows it: the agent's own verdict (Lease annotation respawn.dev/health:
 * Healthy, Stalled, Crashed, Ambiguous), Stale when the run ended because its heartbeat stopped, and
 * Unknown when none was seen.
 */
public enum HealthVerdict {
  Healthy, Stalled, Crashed, Ambiguous, Stale, Unknown;

  /** True for the values an agent may write into its Lease (the others are the operator's). */
  public boolean agentMayReport() {
    return this != Stale && this != Unknown;
  }
}

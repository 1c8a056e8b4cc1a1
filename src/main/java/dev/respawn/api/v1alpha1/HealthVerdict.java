package dev.respawn.api.v1alpha1;

/** The agent's own health verdict (Lease annotation respawn.dev/health), plus Unknown when none was seen. */
public enum HealthVerdict {
  Healthy, Stalled, Crashed, Ambiguous, Unknown
}

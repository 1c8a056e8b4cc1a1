package dev.respawn.api.v1alpha1;

/** Lifecycle phase of an AgentInstance (api.md §2). */
public enum Phase {
  Pending, Starting, Running, Backoff, CircuitOpen, Escalated, Succeeded, Failed, Suspended;

  /** Phases that only an operator action (resume, or clearing suspend) leaves. */
  public boolean isTerminal() {
    return this == Escalated || this == Succeeded || this == Failed || this == Suspended;
  }
}

package dev.respawn.policy;

/** What a decision does (status.lastDecision.action). */
public enum DecisionAction {
  /** Start the next run, now or at nextRestartAt. */
  Restart,
  /** Wait for a circuit (the instance's own HalfOpen trial, or a shared dependency). */
  Wait,
  /** Stop restarting until an operator acts (phase Escalated). */
  Escalate,
  /** Stop restarting: the failure is not retryable or the policy restarts nothing (phase Failed). */
  Fail,
  /** Nothing to restart: the agent exited cleanly. */
  None,
  /** Stop the run: spec.suspend. */
  Stop
}

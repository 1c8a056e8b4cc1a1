package dev.respawn.api.v1alpha1;

/** Why an instance stopped for good (api.md §2). */
public enum TerminalReason {
  CleanExit, RestartLimitExceeded, CircuitBreakerOpen, StallTimeout, OperatorShutdown, UnrecoverableError
}

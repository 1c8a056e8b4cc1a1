package dev.respawn.api.v1alpha1;

/** Circuit breaker states. */
public enum CircuitState {
  Closed, Open, HalfOpen
}

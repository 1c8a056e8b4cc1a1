package dev.respawn.policy;

import dev.respawn.api.v1alpha1.CircuitState;
import java.time.Instant;
import java.util.List;

/**
 * The circuit breaker's durable state (status.circuitBreaker). failureTimes holds the failures still
 * inside the window, at most failureThreshold of them.
 */
public record CircuitSnapshot(CircuitState state, List<Instant> failureTimes, int trips, Instant openedAt,
    Instant halfOpenAt, Instant lastSuccessAt, Instant lastFailureAt) {

  public static final CircuitSnapshot CLOSED = new CircuitSnapshot(CircuitState.Closed, List.of(), 0, null, null,
      null, null);

  public CircuitSnapshot {
    failureTimes = List.copyOf(failureTimes);
  }
}

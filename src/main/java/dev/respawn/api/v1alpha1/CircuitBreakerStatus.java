package dev.respawn.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.List;

@JsonInclude(JsonInclude.Include.NON_NULL)
public class CircuitBreakerStatus {
  @JsonPropertyDescription("Closed, Open or HalfOpen.")
  public CircuitState state;
  @JsonPropertyDescription("Failures within the circuit breaker window.")
  public Integer failureCount;
  @JsonPropertyDescription("Times the circuit has opened.")
  public Integer trips;
  @JsonPropertyDescription("When the circuit last opened.")
  public String openedAt;
  @JsonPropertyDescription("When the current HalfOpen trial began.")
  public String halfOpenAt;
  @JsonPropertyDescription("When a run last ended a failure sequence (healthy for resetAfter).")
  public String lastSuccessAt;
  @JsonPropertyDescription("When the last failure was recorded.")
  public String lastFailureAt;
  @JsonPropertyDescription("Times of the failures still inside the window (at most failureThreshold).")
  public List<String> failureTimes;
}

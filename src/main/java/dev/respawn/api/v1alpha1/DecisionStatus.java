package dev.respawn.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** The last restart decision (status.lastDecision). */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class DecisionStatus {
  @JsonPropertyDescription("Restart, Wait, Escalate, Fail, Stop or None.")
  public String action;
  @JsonPropertyDescription("Machine-readable reason code (restart_scheduled, retries_exhausted, circuit_open, ...).")
  public String reasonCode;
  @JsonPropertyDescription("Attempt in the current failure sequence.")
  public Integer attempt;
  @JsonPropertyDescription("Attempts allowed in this failure sequence.")
  public Integer maxAttempts;
  @JsonPropertyDescription("Whether this restart is the last one allowed.")
  public Boolean finalAttempt;
  @JsonPropertyDescription("Delay before the restart, in seconds.")
  public Double delaySeconds;
  @JsonPropertyDescription("When the decision was made.")
  public String at;
  @JsonPropertyDescription("Why, in words, where the reason code alone does not say it: the API server's message "
      + "for spawn_failed and invalid_template (<= 512 bytes).")
  public String message;
}

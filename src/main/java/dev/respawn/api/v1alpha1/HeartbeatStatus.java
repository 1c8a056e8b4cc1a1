package dev.respawn.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/**
 * The heartbeat as a user needs it: the verdict, since when, and the agent's detail. It changes when
 * the verdict or the detail changes, never per renewal: when renewals were seen is the operator's
 * in-memory business (api.md §12).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class HeartbeatStatus {
  @JsonPropertyDescription("The heartbeat verdict: the agent's own (Healthy, Stalled, Crashed, Ambiguous), Stale when "
      + "the run ended because its heartbeat stopped (until a new run renews), or Unknown when none was seen.")
  public HealthVerdict verdict;
  @JsonPropertyDescription("When the verdict last changed (the operator's clock).")
  public String since;
  @JsonPropertyDescription("The agent's detail annotation (truncated to 512 bytes), or why the heartbeat went stale.")
  public String detail;
}

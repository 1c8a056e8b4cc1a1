package dev.respawn.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

@JsonInclude(JsonInclude.Include.NON_NULL)
public class HeartbeatStatus {
  @JsonPropertyDescription("The agent's last verdict: Healthy, Stalled, Crashed, Ambiguous, or Unknown when none was seen.")
  public HealthVerdict verdict;
  @JsonPropertyDescription("The Lease's renewTime as last seen (the agent's clock).")
  public String lastRenewTime;
  @JsonPropertyDescription("When the operator last saw renewTime change (the operator's clock); staleness is judged from this.")
  public String observedAt;
  @JsonPropertyDescription("The agent's detail annotation, truncated to 512 bytes.")
  public String detail;
}

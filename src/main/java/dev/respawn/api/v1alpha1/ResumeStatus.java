package dev.respawn.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

@JsonInclude(JsonInclude.Include.NON_NULL)
public class ResumeStatus {
  @JsonPropertyDescription("The agent's last checkpoint (Lease annotation respawn.dev/checkpoint).")
  public String checkpoint;
  @JsonPropertyDescription("in_progress, failed or complete.")
  public String checkpointStatus;
  @JsonPropertyDescription("Whether the last step is idempotent.")
  public Boolean idempotent;
  @JsonPropertyDescription("Whether the last restart decision could resume from the checkpoint.")
  public Boolean eligible;
  @JsonPropertyDescription("Resume reason code (resume_allowed, resume_missing_checkpoint, ...).")
  public String reasonCode;
  @JsonPropertyDescription("Seconds of the resume cool-down still to wait.")
  public Long cooldownRemainingSeconds;
  @JsonPropertyDescription("Resume attempts in the current failure sequence.")
  public Integer attempts;
}

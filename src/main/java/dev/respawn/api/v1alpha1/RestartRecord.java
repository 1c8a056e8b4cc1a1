package dev.respawn.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** The last restart (status.lastRestart). */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class RestartRecord {
  @JsonPropertyDescription("Failure, Ignored, RestartRequest (exit code), Manual or Resume.")
  public String kind;
  @JsonPropertyDescription("Why: the failure, the agent's termination message, or the request's reason.")
  public String reason;
  @JsonPropertyDescription("Pod of the run that ended.")
  public String previousPod;
  @JsonPropertyDescription("Pod of the new run.")
  public String pod;
  @JsonPropertyDescription("When the restart was decided or requested.")
  public String requestedAt;
  @JsonPropertyDescription("When the new pod was created.")
  public String startedAt;
  @JsonPropertyDescription("Request id of a manual restart or resume annotation, empty otherwise.")
  public String requestId;
  @JsonPropertyDescription("Checkpoint the new run resumes from (RESPAWN_RESUME_CHECKPOINT); empty for a fresh start.")
  public String resumeCheckpoint;
  @JsonPropertyDescription("Interruption class handed to a resumed run (RESPAWN_INTERRUPTION_CLASS).")
  public InterruptionClass interruptionClass;
}

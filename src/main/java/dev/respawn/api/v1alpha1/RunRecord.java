package dev.respawn.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** One finished run (status.history). */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class RunRecord {
  @JsonPropertyDescription("Run number.")
  public Integer run;
  @JsonPropertyDescription("Pod of the run.")
  public String pod;
  @JsonPropertyDescription("UID of the pod; each run ending is recorded once per pod UID.")
  public String podUid;
  @JsonPropertyDescription("When the run started.")
  public String startedAt;
  @JsonPropertyDescription("When the run ended.")
  public String endedAt;
  @JsonPropertyDescription("How the run ended: Success, Failure, RestartRequest, Ignored, Restarted, Stopped.")
  public String outcome;
  @JsonProperty("class")
  @JsonPropertyDescription("Interruption class of a failure.")
  public InterruptionClass failureClass;
  @JsonPropertyDescription("Exit code of the agent container.")
  public Integer exitCode;
  @JsonPropertyDescription("Reason code of the decision taken on this ending.")
  public String reasonCode;
}

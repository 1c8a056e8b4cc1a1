package dev.respawn.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** The last failure seen (status.lastFailure). */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class FailureStatus {
  @JsonPropertyDescription("Pod of the failed run.")
  public String pod;
  @JsonPropertyDescription("UID of the failed pod; a failure is counted once per pod UID.")
  public String podUid;
  @JsonProperty("class")
  @JsonPropertyDescription("Interruption class the built-in classification gave the failure.")
  public InterruptionClass failureClass;
  @JsonPropertyDescription("Finer failure reason: ResourceExhaustion, HealthCheckFailed, Timeout, ProcessCrash, "
      + "InitializationFailed, DependencyFailure, UnhandledException, Unknown.")
  public String failureReason;
  @JsonPropertyDescription("Container termination reason (OOMKilled, Error, Evicted, ...).")
  public String reason;
  @JsonPropertyDescription("Exit code of the agent container, when it terminated.")
  public Integer exitCode;
  @JsonPropertyDescription("Termination message, truncated to 512 bytes.")
  public String message;
  @JsonPropertyDescription("Name of the failure rule that matched; empty when the built-in table decided.")
  public String rule;
  @JsonPropertyDescription("Whether the failure may be retried.")
  public Boolean retryable;
  @JsonPropertyDescription("The shared dependency the failure was blamed on (spec.dependencies of the policy), if any.")
  public String dependency;
  @JsonPropertyDescription("True when the run that failed was a probe of that dependency (it ran in its HalfOpen): "
      + "its failure opens the shared circuit again.")
  public Boolean probe;
  @JsonPropertyDescription("True when the operator ended the run by deleting its pod (a stale heartbeat, a Stalled or "
      + "Crashed verdict, heartbeat.startupGrace over, an expired HalfOpen trial): the pod's logs went with it.")
  public Boolean podDeleted;
  @JsonPropertyDescription("When the failure was observed.")
  public String at;

}

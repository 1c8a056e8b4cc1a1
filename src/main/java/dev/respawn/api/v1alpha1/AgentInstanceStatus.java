package dev.respawn.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonClassDescription;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.List;
import java.util.Map;

/** Everything that must survive an operator restart lives here (api.md §2). */
@JsonClassDescription("Observed state written by the operator: phase, attempts, circuit breaker, next restart, reasons.")
@JsonInclude(JsonInclude.Include.NON_NULL)
public class AgentInstanceStatus {
  @JsonPropertyDescription("The metadata.generation this status describes.")
  public Long observedGeneration;
  @JsonPropertyDescription("Pending, Starting, Running, Backoff, CircuitOpen, Escalated, Succeeded, Failed or Suspended.")
  public Phase phase;
  @JsonPropertyDescription("Pods created so far; the current pod is named <instance>-<run>.")
  public Integer run;
  @JsonPropertyDescription("Name of the current (or last) pod.")
  public String currentPod;
  @JsonPropertyDescription("When the current run's pod started running.")
  public String runStartedAt;
  @JsonPropertyDescription("Failures in the current failure sequence (0 once a run stays healthy for resetAfter).")
  public Integer attempt;
  @JsonPropertyDescription("When the current failure sequence began.")
  public String firstFailureAt;
  @JsonPropertyDescription("Restarts of every kind, ever.")
  public Integer restarts;
  @JsonPropertyDescription("When the next run will be started.")
  public String nextRestartAt;
  @JsonPropertyDescription("The shared dependency (spec.dependencies of the policy) this instance waits for, while it "
      + "does (phase CircuitOpen); also set during a probe run.")
  public String waitingFor;
  @JsonPropertyDescription("The last failure.")
  public FailureStatus lastFailure;
  @JsonPropertyDescription("The last restart decision.")
  public DecisionStatus lastDecision;
  @JsonPropertyDescription("Circuit breaker state.")
  public CircuitBreakerStatus circuitBreaker;
  @JsonPropertyDescription("Heartbeat as last seen on the Lease.")
  public HeartbeatStatus heartbeat;
  @JsonPropertyDescription("Resume-from-checkpoint state.")
  public ResumeStatus resume;
  @JsonPropertyDescription("The last restart.")
  public RestartRecord lastRestart;
  @JsonPropertyDescription("Why the instance stopped for good: CleanExit, RestartLimitExceeded, CircuitBreakerOpen, "
      + "StallTimeout, OperatorShutdown or UnrecoverableError.")
  public TerminalReason terminalReason;
  @JsonPropertyDescription("Restart times inside restartLimit.window (at most maxRestarts).")
  public List<String> recentRestarts;
  @JsonPropertyDescription("The last 10 finished runs.")
  public List<RunRecord> history;
  @JsonPropertyDescription("The request id last acted on, by kind (restart: respawn.dev/restart, resume: "
      + "respawn.dev/resume); each distinct annotation value is acted on once.")
  public Map<String, String> handledRequests;
  @JsonPropertyDescription("Request ids acted on before the last one, by kind, oldest first (at most 10 each): a "
      + "value set again later (a GitOps revert) is not acted on again.")
  public Map<String, List<String>> earlierRequests;
  @JsonPropertyDescription("The last request of a kind, when the operator refused it (a resume of a running "
      + "instance, a restart of an escalated one, any while suspended): its id and why; dropped when a later request "
      + "of that kind is acted on.")
  public Map<String, RefusedRequestStatus> refusedRequests;
  @JsonPropertyDescription("Ready (liveness gate), Recovering (failure sequence open), Escalated (operator action needed).")
  public List<StatusCondition> conditions;
}

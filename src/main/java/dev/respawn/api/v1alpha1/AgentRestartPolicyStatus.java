package dev.respawn.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonClassDescription;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.List;

@JsonClassDescription("Whether the policy is accepted, and how many instances use it.")
@JsonInclude(JsonInclude.Include.NON_NULL)
public class AgentRestartPolicyStatus {
  @JsonPropertyDescription("The metadata.generation this status describes.")
  public Long observedGeneration;

  @JsonPropertyDescription("Accepted: True (reason Valid) or False (reason InvalidSpec or TierRestricted, "
      + "the message names the field and the rule). DependencyOpen, with spec.dependencies: True (reason Open or "
      + "HalfOpen, the message names each dependency not Closed) or False (reason AllClosed).")
  public List<StatusCondition> conditions;

  @JsonPropertyDescription("Number of AgentInstances that reference this policy.")
  public Integer instances;

  @JsonPropertyDescription("Worst case: the sum of the delays of all maxRetries attempts, without jitter (Go "
      + "duration, e.g. 14s or 1h2m3s).")
  public String totalRetryTime;

  @JsonPropertyDescription("The shared circuit of each dependency (spec.dependencies).")
  public List<DependencyStatus> dependencies;
}

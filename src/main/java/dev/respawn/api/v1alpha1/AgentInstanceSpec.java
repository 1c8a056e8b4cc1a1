package dev.respawn.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonClassDescription;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.crd.generator.annotation.SchemaFrom;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;

@JsonClassDescription("What to run and which policy restarts it.")
public class AgentInstanceSpec {
  @JsonPropertyDescription("The AgentRestartPolicy (same namespace). Omitted: the operator's default policy "
      + "(flag --default-policy).")
  public PolicyReference policyRef;

  @JsonPropertyDescription("Name of the container whose exit decides how a run ended. Default: the first container.")
  @Size(min = 1, max = 63)
  public String agentContainer;

  @JsonPropertyDescription("Optional task identifier, passed to the pod as RESPAWN_TASK.")
  @Size(max = 256)
  public String task;

  @JsonPropertyDescription("true: stop the run and restart nothing (phase Suspended, terminal reason "
      + "OperatorShutdown). Default false.")
  @Default("false")
  public Boolean suspend;

  @JsonPropertyDescription("Heartbeat Lease settings.")
  public InstanceHeartbeatSpec heartbeat;

  @JsonPropertyDescription("Pod template of the agent (a PodTemplateSpec); restartPolicy is always forced to Never.")
  @Required
  @SchemaFrom(type = PodTemplateSpec.class)
  @ValidationRule(
      value = "has(self.spec) && has(self.spec.containers) && size(self.spec.containers) >= 1",
      message = "spec.template.spec.containers must name at least one container",
      fieldPath = ".spec.containers",
      reason = "FieldValueRequired")
  public PodTemplateSpec template;
}

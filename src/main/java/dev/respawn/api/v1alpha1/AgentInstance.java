package dev.respawn.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonClassDescription;
import com.fasterxml.jackson.annotation.JsonIgnore;
import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Categories;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Version;

/** One supervised agent (api.md §2). */
@JsonClassDescription("AgentInstance: one supervised AI agent. The operator keeps at most one live pod for it and restarts it according to its AgentRestartPolicy.")
@Group(AgentRestartPolicy.GROUP)
@Version(AgentRestartPolicy.VERSION)
@ShortNames("agi")
@Categories("respawn")
@AdditionalPrinterColumn(name = "PHASE", jsonPath = ".status.phase", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "RESTARTS", jsonPath = ".status.restarts", type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(name = "ATTEMPT", jsonPath = ".status.attempt", type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(name = "CIRCUIT", jsonPath = ".status.circuitBreaker.state",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "HEARTBEAT", jsonPath = ".status.heartbeat.verdict",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "NEXT-RESTART", jsonPath = ".status.nextRestartAt",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "AGE", jsonPath = ".metadata.creationTimestamp",
    type = AdditionalPrinterColumn.Type.DATE)
// The rules sit on the schema's root (only there is metadata.name in reach), and a root rule is evaluated on every
// write, /status included. An object made before them (an older CRD, validation skipped) would then refuse the
// operator's own status write, the InvalidSpec refusal that tells why it is not run (api.md §2). So they hold at
// creation (the name cannot change afterwards), and spec may not be removed from an object that has one.
@ValidationRule(
    value = "oldSelf.hasValue() || size(self.metadata.name) <= 63",
    optionalOldSelf = true,
    message = "metadata.name must be at most 63 characters: it is the value of the respawn.dev/instance label "
        + "on the instance's pods and Lease",
    reason = "FieldValueInvalid")
@ValidationRule(
    value = "oldSelf.hasValue() || self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",
    optionalOldSelf = true,
    message = "metadata.name must be a DNS-1123 label (lower-case letters, digits and '-', beginning and ending "
        + "with a letter or digit; no '.'): it names the instance's pods <name>-<run>",
    reason = "FieldValueInvalid")
@ValidationRule(
    value = "has(self.spec) || oldSelf.hasValue() && !has(oldSelf.value().spec)",
    optionalOldSelf = true,
    message = "spec is required: an AgentInstance needs spec.template, a pod template with at least one container",
    fieldPath = ".spec",
    reason = "FieldValueRequired")
public class AgentInstance extends CustomResource<AgentInstanceSpec, AgentInstanceStatus>
    implements Namespaced, Unreadable.Holder {
  /** Annotation: restart now (value = request id); see {@link OperatorRequest#RESTART}. */
  public static final String RESTART_ANNOTATION = OperatorRequest.RESTART.annotation();
  /** Optional reason of a restart request, recorded in status.lastRestart.reason. */
  public static final String RESTART_REASON_ANNOTATION = OperatorRequest.RESTART.reasonAnnotation().orElseThrow();
  /** Annotation: resume from Escalated/Failed/latched (value = request id); see {@link OperatorRequest#RESUME}. */
  public static final String RESUME_ANNOTATION = OperatorRequest.RESUME.annotation();
  /** Pod annotation: when the operator decided to start this run (RFC 3339, the operator's clock). */
  public static final String STARTED_AT_ANNOTATION = "respawn.dev/started-at";
  /**
   * Pod annotation: the container whose exit decides the run (spec.agentContainer, or the first container, when
   * the pod was made): a later edit of spec.agentContainer applies to the next run, not to a pod of the old template.
   */
  public static final String AGENT_CONTAINER_ANNOTATION = "respawn.dev/agent-container";
  /** Pod label naming the instance. */
  public static final String INSTANCE_LABEL = "respawn.dev/instance";
  /** Pod label carrying the run number. */
  public static final String RUN_LABEL = "respawn.dev/run";

  /** What was left out when this object was read (not part of the resource: never serialized). */
  @JsonIgnore
  private transient Unreadable unreadable = Unreadable.NONE;

  @Override
  public Unreadable unreadable() {
    return unreadable;
  }

  @Override
  public void unreadable(Unreadable report) {
    this.unreadable = report == null ? Unreadable.NONE : report;
  }
}

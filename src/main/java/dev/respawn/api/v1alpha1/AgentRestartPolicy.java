package dev.respawn.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonClassDescription;
import com.fasterxml.jackson.annotation.JsonIgnore;
import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Categories;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Version;

/** How failed agents are restarted (api.md §1). */
@JsonClassDescription("AgentRestartPolicy: how failed agents are restarted (backoff, retry limits, circuit breaker, failure rules, heartbeats, resume).")
@Group(AgentRestartPolicy.GROUP)
@Version(AgentRestartPolicy.VERSION)
@ShortNames("arp")
@Categories("respawn")
@AdditionalPrinterColumn(name = "TYPE", jsonPath = ".spec.backoff.type",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "MAX-RETRIES", jsonPath = ".spec.maxRetries",
    type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(name = "INITIAL", jsonPath = ".spec.backoff.initialDelay",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "MAX-DELAY", jsonPath = ".spec.backoff.maxDelay",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "THRESHOLD", jsonPath = ".spec.circuitBreaker.failureThreshold",
    type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(name = "ACCEPTED", jsonPath = ".status.conditions[?(@.type==\"Accepted\")].status",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "AGE", jsonPath = ".metadata.creationTimestamp",
    type = AdditionalPrinterColumn.Type.DATE)
public class AgentRestartPolicy extends CustomResource<AgentRestartPolicySpec, AgentRestartPolicyStatus>
    implements Namespaced, Unreadable.Holder {
  public static final String GROUP = "respawn.dev";
  public static final String VERSION = "v1alpha1";

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

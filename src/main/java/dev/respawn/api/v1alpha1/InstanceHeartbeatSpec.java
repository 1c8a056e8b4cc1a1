package dev.respawn.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;

public class InstanceHeartbeatSpec {
  @JsonPropertyDescription("Name of the coordination.k8s.io/v1 Lease the agent renews. Default: the instance name.")
  @Size(min = 1, max = 253)
  @Pattern("^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
  public String leaseName;
}

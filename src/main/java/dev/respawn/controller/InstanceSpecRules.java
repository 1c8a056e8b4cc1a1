package dev.respawn.controller;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.policy.Violation;
import java.util.ArrayList;
import java.util.List;

/**
 * The AgentInstance rules the CRD schema enforces, checked again by the operator for clusters that
 * skipped validation (api.md §2, §9), and one the schema cannot see into the pod template for (the agent
 * container must be one of its containers): an instance that breaks one is refused (InvalidSpec) and runs
 * nothing.
 */
final class InstanceSpecRules {
  /** The instance name is the value of the respawn.dev/instance label: at most 63 characters. */
  static final int MAX_NAME = 63;

  private static final java.util.regex.Pattern DNS_LABEL = java.util.regex.Pattern.compile(
      "[a-z0-9]([-a-z0-9]*[a-z0-9])?");

  private InstanceSpecRules() {}

  static List<Violation> check(AgentInstance instance) {
    List<Violation> found = new ArrayList<>();
    String name = instance.getMetadata().getName();
    if (name != null && name.codePointCount(0, name.length()) > MAX_NAME) {
      found.add(new Violation("metadata.name", "must be at most " + MAX_NAME + " characters: it is the value of the "
          + AgentInstance.INSTANCE_LABEL + " label on the instance's pods and Lease"));
    }
    if (name != null && !DNS_LABEL.matcher(name).matches()) {
      found.add(new Violation("metadata.name", "must be a DNS-1123 label (lower-case letters, digits and '-', "
          + "beginning and ending with a letter or digit; no '.'): it names the instance's pods <name>-<run>"));
    }
    var spec = instance.getSpec();
    var template = spec == null ? null : spec.template;
    if (template == null || template.getSpec() == null || template.getSpec().getContainers() == null
        || template.getSpec().getContainers().isEmpty()) {
      found.add(new Violation("spec.template.spec.containers", "must name at least one container"));
    } else if (spec.agentContainer != null && !spec.agentContainer.isEmpty() && template.getSpec().getContainers()
        .stream().noneMatch(c -> spec.agentContainer.equals(c.getName()))) {
      found.add(new Violation("spec.agentContainer", "must name a container of spec.template.spec.containers (got \""
          + spec.agentContainer + "\"; the template has " + template.getSpec().getContainers().stream()
          .map(c -> String.valueOf(c.getName())).collect(java.util.stream.Collectors.joining(", ")) + ")"));
    }
    return found;
  }
}

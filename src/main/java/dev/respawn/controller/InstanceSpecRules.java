package dev.respawn.controller;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentInstanceSpec;
import dev.respawn.policy.Bounds;
import dev.respawn.policy.Violation;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The AgentInstance rules the CRD schema enforces, checked again by the operator for clusters that
 * skipped validation (api.md §2, §9), and one the schema cannot see into the pod template for (the agent
 * container must be one of its containers): an instance that breaks one is refused (InvalidSpec) and runs
 * nothing.
 */
final class InstanceSpecRules {
  /** The instance name is the value of the respawn.dev/instance label: at most 63 characters. */
  static final int MAX_NAME = 63;

  /** An object name (the policy's, the Lease's): at most 253 characters. */
  static final int MAX_OBJECT_NAME = 253;

  /** spec.task, passed to the pod as RESPAWN_TASK: at most 256 characters. */
  static final int MAX_TASK = 256;

  /** Dot-separated DNS-1123 labels, as the API server checks a Lease's name (stricter than the CRD's pattern). */
  private static final java.util.regex.Pattern DNS_SUBDOMAIN = java.util.regex.Pattern.compile(
      "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

  private static final java.util.regex.Pattern DNS_LABEL = java.util.regex.Pattern.compile(
      "[a-z0-9]([-a-z0-9]*[a-z0-9])?");

  private InstanceSpecRules() {}

  /** What is wrong with the instance's spec as read (fields of the wrong JSON type) and by these rules; "" if nothing. */
  static String problems(AgentInstance instance) {
    return Stream.concat(Stream.of(instance.unreadable().describe()), check(instance).stream()
        .map(Violation::toString)).filter(p -> !p.isEmpty()).collect(Collectors.joining("; "));
  }

  static List<Violation> check(AgentInstance instance) {
    List<Violation> found = new ArrayList<>();
    String name = instance.getMetadata().getName();
    if (name != null && length(name) > MAX_NAME) {
      found.add(new Violation("metadata.name", "must be at most " + MAX_NAME + " characters: it is the value of the "
          + AgentInstance.INSTANCE_LABEL + " label on the instance's pods and Lease"));
    }
    if (name != null && !DNS_LABEL.matcher(name).matches()) {
      found.add(new Violation("metadata.name", "must be a DNS-1123 label (lower-case letters, digits and '-', "
          + "beginning and ending with a letter or digit; no '.'): it names the instance's pods <name>-<run>"));
    }
    var spec = instance.getSpec();
    if (spec != null) {
      checkFields(spec, found);
    }
    var template = spec == null ? null : spec.template;
    if (template == null || template.getSpec() == null || template.getSpec().getContainers() == null
        || template.getSpec().getContainers().isEmpty()) {
      found.add(new Violation("spec.template.spec.containers", "must name at least one container"));
    } else if (spec.agentContainer != null && !spec.agentContainer.isEmpty() && length(spec.agentContainer) <= MAX_NAME
        && template.getSpec().getContainers()
        .stream().noneMatch(c -> spec.agentContainer.equals(c.getName()))) {
      found.add(new Violation("spec.agentContainer", "must name a container of spec.template.spec.containers (got \""
          + spec.agentContainer + "\"; the template has " + template.getSpec().getContainers().stream()
          .map(c -> String.valueOf(c.getName())).collect(java.util.stream.Collectors.joining(", ")) + ")"));
    }
    return found;
  }

  /** The schema's bounds of the spec's own fields (the template aside). */
  private static void checkFields(AgentInstanceSpec spec, List<Violation> found) {
    if (spec.policyRef != null) {
      if (spec.policyRef.name == null) {
        found.add(new Violation("spec.policyRef.name", "is required when spec.policyRef is given (the name of an "
            + "AgentRestartPolicy in the instance's namespace; leave spec.policyRef out for the default policy)"));
      } else if (bounded("spec.policyRef.name", spec.policyRef.name, 1, MAX_OBJECT_NAME, found)
          && !DNS_SUBDOMAIN.matcher(spec.policyRef.name).matches()) {
        found.add(new Violation("spec.policyRef.name", "must be a DNS-1123 subdomain (lower-case letters, digits, "
            + "'-' and '.', beginning and ending with a letter or digit): it names an AgentRestartPolicy in the "
            + "instance's namespace (got \"" + Bounds.truncateUtf8(spec.policyRef.name, 64) + "\")"));
      }
    }
    if (spec.agentContainer != null) {
      bounded("spec.agentContainer", spec.agentContainer, 1, MAX_NAME, found);
    }
    if (spec.task != null) {
      bounded("spec.task", spec.task, 0, MAX_TASK, found);
    }
    String lease = spec.heartbeat == null ? null : spec.heartbeat.leaseName;
    if (lease != null && bounded("spec.heartbeat.leaseName", lease, 1, MAX_OBJECT_NAME, found)
        && !DNS_SUBDOMAIN.matcher(lease).matches()) {
      found.add(new Violation("spec.heartbeat.leaseName", "must be a DNS-1123 subdomain (lower-case letters, digits, "
          + "'-' and '.', beginning and ending with a letter or digit): it names a Lease (got \"" + lease + "\")"));
    }
  }

  /** Adds a violation when {@code value} is not {@code min} to {@code max} characters long; true when it is. */
  private static boolean bounded(String field, String value, int min, int max, List<Violation> found) {
    int length = length(value);
    if (length < min) {
      found.add(new Violation(field, "must not be empty"));
      return false;
    }
    if (length > max) {
      found.add(new Violation(field, "must be at most " + max + " characters (got " + length + ")"));
      return false;
    }
    return true;
  }

  private static int length(String value) {
    return value.codePointCount(0, value.length());
  }
}

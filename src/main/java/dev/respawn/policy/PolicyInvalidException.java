package dev.respawn.policy;

import java.util.List;
import java.util.stream.Collectors;

/** A policy that breaks the contract; the message lists every field and the rule it breaks. */
public class PolicyInvalidException extends Exception {
  private final transient List<Violation> violations;

  public PolicyInvalidException(List<Violation> violations) {
    super(violations.stream().map(Violation::toString).collect(Collectors.joining("; ")));
    this.violations = List.copyOf(violations);
  }

  public List<Violation> violations() {
    return violations;
  }
}

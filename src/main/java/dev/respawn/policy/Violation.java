package dev.respawn.policy;

/** One broken rule of a spec: the field (a path such as {@code spec.backoff.maxDelay}) and the rule. */
public record Violation(String field, String rule) {
  @Override
  public String toString() {
    return field + ": " + rule;
  }
}

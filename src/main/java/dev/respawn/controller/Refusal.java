package dev.respawn.controller;

/**
 * Why the operator refuses to serve an instance or to accept a policy: the reason of the Ready or
 * Accepted condition ({@link #name()}) and the audit line's reason code ({@link #code()}).
 */
public enum Refusal {
  /** The instance's or policy's own spec breaks a rule (or has a field of the wrong JSON type). */
  InvalidSpec("invalid_spec"),
  /** The instance's policy does not exist. */
  PolicyNotFound("policy_not_found"),
  /** The instance's policy is invalid. */
  PolicyInvalid("policy_invalid"),
  /** The policy uses what the operator's tier does not allow. */
  TierRestricted("tier_restricted");

  private final String code;

  Refusal(String code) {
    this.code = code;
  }

  /** The PolicyInvalid notice of this refusal (its Event: api.md §8). */
  public dev.respawn.policy.Decision.Notice notice(String message) {
    return dev.respawn.policy.Decision.Notice.warning(dev.respawn.policy.EventReason.PolicyInvalid,
        name() + ": " + message);
  }

  /** The reason as the audit line spells it, e.g. {@code policy_not_found}. */
  public String code() {
    return code;
  }
}

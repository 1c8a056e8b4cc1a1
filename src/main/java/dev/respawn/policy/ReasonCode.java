package dev.respawn.policy;

import java.util.Optional;

/**
 * The reason codes of decisions (status.lastDecision.reasonCode, history, the audit line) and of resume
 * eligibility (api.md §7), spelled as the contract spells them ({@link #code()}, also {@link #toString()}).
 */
public enum ReasonCode {
  RESTART_SCHEDULED("restart_scheduled"),
  CIRCUIT_OPEN("circuit_open"),
  DEPENDENCY_CIRCUIT_OPEN("dependency_circuit_open"),
  RETRIES_EXHAUSTED("retries_exhausted"),
  RESTART_LIMIT_EXCEEDED("restart_limit_exceeded"),
  NON_RETRYABLE_FAILURE("non_retryable_failure"),
  POLICY_NONE("policy_none"),
  RESTART_REQUESTED("restart_requested"),
  FAILURE_IGNORED("failure_ignored"),
  MANUAL_RESTART("manual_restart"),
  RESUMED("resumed"),
  SUSPENDED("suspended"),
  CLEAN_EXIT("clean_exit"),
  SPAWN_FAILED("spawn_failed"),
  INVALID_TEMPLATE("invalid_template"),
  REQUEST_REFUSED("request_refused"),
  RESUME_ALLOWED("resume_allowed"),
  RESUME_MISSING_CHECKPOINT("resume_missing_checkpoint"),
  RESUME_UNKNOWN_INTERRUPTION_CLASS("resume_unknown_interruption_class"),
  RESUME_NON_IDEMPOTENT_STEP("resume_non_idempotent_step"),
  RESUME_MISSING_RUNTIME_ARTIFACTS("resume_missing_runtime_artifacts"),
  RESUME_BLOCKED_COOLDOWN("resume_blocked_cooldown"),
  RESUME_ATTEMPT_LIMIT_REACHED("resume_attempt_limit_reached");

  private final String code;

  ReasonCode(String code) {
    this.code = code;
  }

  /** The code as status, Events and the audit line show it, e.g. {@code restart_scheduled}. */
  public String code() {
    return code;
  }

  /** The reason code of that spelling; empty for null or an unknown code. */
  public static Optional<ReasonCode> of(String code) {
    for (ReasonCode r : values()) {
      if (r.code.equals(code)) {
        return Optional.of(r);
      }
    }
    return Optional.empty();
  }

  @Override
  public String toString() {
    return code;
  }
}

package dev.respawn.api.v1alpha1;

import java.util.Locale;
import java.util.Optional;

/**
 * The operator actions a user asks for with an annotation on the AgentInstance (api.md §6), in the
 * order they are acted on when several are new at once. Each distinct annotation value is a request id,
 * acted on once and recorded in {@code status.handledRequests} under {@link #statusKey()}.
 */
public enum OperatorRequest {
  /** From Escalated, Failed or a latched circuit: a new lifecycle, restarted now. */
  RESUME("respawn.dev/resume", null),
  /** Restart now: ends a live run or skips a wait; refused in a terminal phase. */
  RESTART("respawn.dev/restart", "respawn.dev/restart-reason");

  private final String annotation;
  private final String reasonAnnotation;

  OperatorRequest(String annotation, String reasonAnnotation) {
    this.annotation = annotation;
    this.reasonAnnotation = reasonAnnotation;
  }

  /** The annotation whose value is the request id. */
  public String annotation() {
    return annotation;
  }

  /** The optional annotation carrying the request's reason. */
  public Optional<String> reasonAnnotation() {
    return Optional.ofNullable(reasonAnnotation);
  }

  /** Its key in status.handledRequests: {@code restart}, {@code resume}. */
  public String statusKey() {
    return name().toLowerCase(Locale.ROOT);
  }
}

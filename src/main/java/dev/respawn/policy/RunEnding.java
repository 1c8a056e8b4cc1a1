package dev.respawn.policy;

import java.time.Instant;

/**
 * How one run ended. exitCode, reason and message may be null when Kubernetes did not say. The message and reason
 * are kept to their first {@value Bounds#TERMINATION_MESSAGE_BYTES} bytes, as much as a kubelet reports of a
 * container's termination message: failure rules match within that, and a pod status written by hand with a
 * larger one cannot make each of its substrings' matching slower.
 */
public record RunEnding(String pod, String podUid, EndingKind kind, Integer exitCode, String reason, String message,
    Instant at) {
  public RunEnding {
    message = message == null ? null : Bounds.truncateUtf8(message, Bounds.TERMINATION_MESSAGE_BYTES);
    reason = reason == null ? null : Bounds.truncateUtf8(reason, Bounds.TERMINATION_MESSAGE_BYTES);
  }
}

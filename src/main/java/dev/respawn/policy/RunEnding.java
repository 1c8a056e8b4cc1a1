package dev.respawn.policy;

import java.time.Instant;

/** How one run ended. exitCode, reason and message may be null when Kubernetes did not say. */
public record RunEnding(String pod, String podUid, EndingKind kind, Integer exitCode, String reason, String message,
    Instant at) {}

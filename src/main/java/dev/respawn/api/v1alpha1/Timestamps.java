package dev.respawn.api.v1alpha1;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;

/** The one reading and writing of the RFC 3339 timestamps in status, annotations and the CLI. */
public final class Timestamps {
  private Timestamps() {}

  /** The instant of an RFC 3339 timestamp (any offset); null when absent or unreadable. */
  public static Instant parse(String text) {
    if (text == null || text.isBlank()) {
      return null;
    }
    try {
      return OffsetDateTime.parse(text.strip()).toInstant();
    } catch (DateTimeParseException e) {
      return null;
    }
  }

  /** {@code 2026-11-24T10:00:00.123Z}, or null. */
  public static String format(Instant t) {
    return t == null ? null : t.toString();
  }
}

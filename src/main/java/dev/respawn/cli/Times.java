package dev.respawn.cli;

import dev.respawn.policy.GoDuration;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;

/** Timestamps of the status (RFC 3339), of {@code --since}, and short human ages. */
final class Times {
  private Times() {}

  /** An RFC 3339 status timestamp; null when absent or unreadable. */
  static Instant parse(String text) {
    return dev.respawn.api.v1alpha1.Timestamps.parse(text);
  }

  /**
   * {@code --since}: an RFC 3339 time ({@code 2026-01-13T14:32:45Z}), Unix seconds as a script gets
   * them from {@code date +%s} or Python's {@code time.time()} ({@code 1705158765.123}), or a duration
   * ago ({@code 5m}).
   *
   * @throws IllegalArgumentException saying what is accepted
   */
  static Instant since(String text, Instant now) {
    String t = text == null ? "" : text.trim();
    if (t.matches("[0-9]+(\\.[0-9]+)?")) {
      BigDecimal nanos = new BigDecimal(t).movePointRight(9);
      return Instant.EPOCH.plusNanos(nanos.longValue());
    }
    Instant parsed = parse(withT(t));
    if (parsed != null) {
      return parsed;
    }
    try {
      return now.minus(GoDuration.parse(t));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("'" + text + "' is not a timestamp: use RFC 3339 (2026-01-13T14:32:45Z), "
          + "Unix seconds (1705158765.123) or a duration ago (5m)");
    }
  }

  /**
   * RFC 3339 with a space between date and time, as {@code date --rfc-3339=seconds} prints it (RFC 3339 §5.6 NOTE
   * allows it), read as the same time with a "T".
   */
  private static String withT(String text) {
    return text.replaceFirst("^([0-9]{4}-[0-9]{2}-[0-9]{2}) ([0-9])", "$1T$2");
  }

  /**
   * Unix seconds with milliseconds, as the seed's restart marker has them; a decimal with three places, never an
   * exponent, which a double's 1.795257000250E9 would have in YAML (and YAML 1.1 parsers read that as a string).
   */
  static BigDecimal epochSeconds(Instant t) {
    return BigDecimal.valueOf(t.toEpochMilli(), 3);
  }

  /** Whole seconds from {@code now} until {@code then}, rounded up; 0 when past. */
  static long secondsUntil(Instant then, Instant now) {
    long millis = Duration.between(now, then).toMillis();
    return millis <= 0 ? 0 : (millis + 999) / 1000;
  }

  /** kubectl-style short age: 45s, 3m12s, 25m, 2h5m, 9h, 4d. */
  static String human(Duration d) {
    long s = Math.max(0, d.getSeconds());
    if (s < 60) {
      return s + "s";
    }
    long m = s / 60;
    if (m < 10) {
      return s % 60 == 0 ? m + "m" : m + "m" + (s % 60) + "s";
    }
    if (m < 60) {
      return m + "m";
    }
    long h = m / 60;
    if (h < 8) {
      return m % 60 == 0 ? h + "h" : h + "h" + (m % 60) + "m";
    }
    return h < 48 ? h + "h" : (h / 24) + "d";
  }
}

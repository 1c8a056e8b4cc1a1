package dev.respawn.policy;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Go-style durations ({@code 500ms}, {@code 2s}, {@code 1h30m}), as Kubernetes users write them. */
public final class GoDuration {
  private static final Pattern WHOLE = Pattern.compile("([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+");
  private static final Pattern PART = Pattern.compile("([0-9]+(?:\\.[0-9]+)?)(ns|us|µs|ms|s|m|h)");
  /** Longest duration accepted: about 292 years, what Go's time.Duration can hold. */
  private static final BigDecimal MAX_NANOS = BigDecimal.valueOf(Long.MAX_VALUE);

  private GoDuration() {}

  /**
   * Parses a duration.
   *
   * @throws IllegalArgumentException naming the rule when the text is not a Go duration
   */
  public static Duration parse(String text) {
    if (text == null || !WHOLE.matcher(text).matches()) {
      throw new IllegalArgumentException("must be a duration such as 500ms, 2s, 5m or 1h30m");
    }
    BigDecimal nanos = BigDecimal.ZERO;
    Matcher m = PART.matcher(text);
    while (m.find()) {
      nanos = nanos.add(new BigDecimal(m.group(1)).multiply(BigDecimal.valueOf(unitNanos(m.group(2)))));
      if (nanos.compareTo(MAX_NANOS) > 0) {
        throw new IllegalArgumentException("must be at most 2562047h (the longest duration)");
      }
    }
    return Duration.ofNanos(nanos.longValue());
  }

  private static long unitNanos(String unit) {
    return switch (unit) {
      case "ns" -> 1L;
      case "us", "µs" -> 1_000L;
      case "ms" -> 1_000_000L;
      case "s" -> 1_000_000_000L;
      case "m" -> 60_000_000_000L;
      default -> 3_600_000_000_000L;
    };
  }

  /** Formats a duration the way Go prints it: {@code 1h2m3s}, {@code 1.5s}, {@code 250ms}, {@code 0s}. */
  public static String format(Duration d) {
    if (d.isZero()) {
      return "0s";
    }
    long totalMillis = d.toMillis();
    if (totalMillis < 1000) {
      return totalMillis > 0 ? totalMillis + "ms" : d.toNanos() + "ns";
    }
    StringBuilder sb = new StringBuilder();
    long hours = d.toHours();
    int minutes = d.toMinutesPart();
    if (hours > 0) {
      sb.append(hours).append('h');
    }
    if (hours > 0 || minutes > 0) {
      sb.append(minutes).append('m');
    }
    int seconds = d.toSecondsPart();
    int millis = d.toMillisPart();
    sb.append(seconds);
    if (millis > 0) {
      sb.append('.').append(String.format("%03d", millis).replaceAll("0+$", ""));
    }
    return sb.append('s').toString();
  }
}

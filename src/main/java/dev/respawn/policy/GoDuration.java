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

  /**
   * Formats a duration exactly as Go's {@code time.Duration.String} prints it: {@code 1h2m3.5s},
   * {@code 250ms}, {@code 1.5ms}, {@code 600µs}, {@code 7ns}, {@code 0s}; fractions to the nanosecond,
   * without trailing zeros.
   */
  public static String format(Duration d) {
    if (d.isZero()) {
      return "0s";
    }
    if (d.isNegative()) {
      return "-" + format(d.negated());
    }
    if (d.getSeconds() == 0) { // below a second: no toNanos() on what may be centuries long
      long nanos = d.getNano();
      if (nanos < 1_000L) {
        return nanos + "ns";
      }
      if (nanos < 1_000_000L) {
        return withFraction(nanos, 1_000L, 3) + "µs";
      }
      return withFraction(nanos, 1_000_000L, 6) + "ms";
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
    return sb.append(withFraction(d.toSecondsPart() * 1_000_000_000L + d.toNanosPart(), 1_000_000_000L, 9))
        .append('s').toString();
  }

  /** {@link #format} to the millisecond (cut, not rounded): what a table of jittered delays shows. */
  public static String formatMillis(Duration d) {
    return format(d.truncatedTo(java.time.temporal.ChronoUnit.MILLIS));
  }

  /** {@code value / unit} with its fraction in {@code digits} digits, trailing zeros dropped. */
  private static String withFraction(long value, long unit, int digits) {
    long whole = value / unit;
    long fraction = value % unit;
    if (fraction == 0) {
      return Long.toString(whole);
    }
    String f = String.format("%0" + digits + "d", fraction).replaceAll("0+$", "");
    return whole + "." + f;
  }
}

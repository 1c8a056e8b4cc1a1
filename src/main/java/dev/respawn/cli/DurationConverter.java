package dev.respawn.cli;

import dev.respawn.policy.GoDuration;
import java.time.Duration;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** Go-style durations on the command line ({@code 90s}, {@code 2m}), as kubectl's --timeout. */
final class DurationConverter implements ITypeConverter<Duration> {
  @Override
  public Duration convert(String value) {
    try {
      return GoDuration.parse(value);
    } catch (IllegalArgumentException e) {
      throw new TypeConversionException("'" + value + "' " + e.getMessage());
    }
  }
}

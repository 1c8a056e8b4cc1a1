package dev.respawn.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class GoDurationTest {
  @ParameterizedTest
  @CsvSource({"500ms, 500", "2s, 2000", "5m, 300000", "1h30m, 5400000", "1.5s, 1500", "0s, 0", "90s, 90000",
      "1h0m0.25s, 3600250", "100us, 0", "2µs, 0"})
  void parses(String text, long millis) {
    assertThat(GoDuration.parse(text).toMillis()).isEqualTo(millis);
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "5", "5x", "-1s", "ten seconds", "1d", "s", "1.s", " 1s", "1s "})
  void refusesWhatIsNotAGoDuration(String text) {
    assertThatThrownBy(() -> GoDuration.parse(text)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("must be a duration");
  }

  @ParameterizedTest
  @ValueSource(strings = {"9999999999h", "2562048h"})
  void refusesDurationsGoCannotHold(String text) {
    assertThatThrownBy(() -> GoDuration.parse(text)).hasMessageContaining("at most");
  }

  @ParameterizedTest
  @CsvSource({"0, 0s", "250, 250ms", "1500, 1.5s", "14000, 14s", "3723000, 1h2m3s", "120000, 2m0s"})
  void formats(long millis, String text) {
    assertThat(GoDuration.format(Duration.ofMillis(millis))).isEqualTo(text);
    assertThat(GoDuration.parse(text)).isEqualTo(Duration.ofMillis(millis));
  }

  @org.junit.jupiter.api.Test
  void formatsDurationsLongerThanGoCanHoldWithoutOverflow() {
    // totalRetryTime of maxRetries 1000 at maxDelay 2562047h: more than a long of nanoseconds
    assertThat(GoDuration.format(Duration.ofHours(2_562_047L).multipliedBy(1000)))
        .isEqualTo("2562047000h0m0s");
    assertThat(GoDuration.format(Duration.ofHours(2_562_047L).multipliedBy(3).plusMillis(1500)))
        .isEqualTo("7686141h0m1.5s");
  }

  /** What Go's time.Duration.String prints for these (go doc time.Duration.String). */
  @ParameterizedTest
  @CsvSource({"7, 7ns", "600000, 600µs", "1500, 1.5µs", "1500000, 1.5ms", "1234567, 1.234567ms",
      "1234500000, 1.2345s", "1000000001, 1.000000001s", "3723000000001, 1h2m3.000000001s", "60000000000, 1m0s"})
  void formatsBelowTheMillisecondAsGoDoes(long nanos, String text) {
    assertThat(GoDuration.format(Duration.ofNanos(nanos))).isEqualTo(text);
    assertThat(GoDuration.parse(text)).isEqualTo(Duration.ofNanos(nanos));
  }

  /** Go's time.Duration.String switches units at exactly 1µs and 1ms, and prints a negative duration with a sign. */
  @ParameterizedTest
  @CsvSource({"999, 999ns", "1000, 1µs", "999999, 999.999µs", "1000000, 1ms", "-2000000000, -2s"})
  void formatsTheUnitBoundariesAsGoDoes(long nanos, String text) {
    assertThat(GoDuration.format(Duration.ofNanos(nanos))).isEqualTo(text);
  }

  /** The longest duration Go can hold (2562047h47m16.854775807s, Long.MAX_VALUE ns) is itself a duration. */
  @org.junit.jupiter.api.Test
  void theLongestDurationGoCanHoldParses() {
    assertThat(GoDuration.parse("9223372036854775807ns")).isEqualTo(Duration.ofNanos(Long.MAX_VALUE));
    assertThat(GoDuration.parse("2562047h47m16.854775807s")).isEqualTo(Duration.ofNanos(Long.MAX_VALUE));
    assertThatThrownBy(() -> GoDuration.parse("9223372036854775808ns")).hasMessageContaining("at most");
  }
}

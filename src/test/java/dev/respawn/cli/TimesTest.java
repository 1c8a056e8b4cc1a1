package dev.respawn.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The CLI's times: {@code --since}, {@code restart_timestamp}, {@code restarting_in_seconds} and short ages. */
class TimesTest {
  static final Instant NOW = Instant.parse("2026-11-22T10:00:00Z");

  /**
   * README: verify-restarted's {@code --since} is RFC 3339 (also with a space, as {@code date --rfc-3339=seconds}
   * prints it), Unix seconds, or a duration ago.
   */
  @Test
  void sinceTakesRfc3339UnixSecondsOrADurationAgo() {
    assertThat(Times.since("2026-11-22T09:00:00Z", NOW)).isEqualTo(Instant.parse("2026-11-22T09:00:00Z"));
    assertThat(Times.since("2026-11-22 09:00:00+00:00", NOW)).isEqualTo(Instant.parse("2026-11-22T09:00:00Z"));
    assertThat(Times.since(" 1795257000.250 ", NOW)).isEqualTo(Instant.ofEpochMilli(1_795_257_000_250L));
    assertThat(Times.since("1795257000", NOW)).isEqualTo(Instant.ofEpochSecond(1_795_257_000L));
    assertThat(Times.since("5m", NOW)).isEqualTo(NOW.minusSeconds(300));
    assertThatThrownBy(() -> Times.since("yesterday", NOW)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'yesterday'").hasMessageContaining("RFC 3339");
    assertThatThrownBy(() -> Times.since(null, NOW)).isInstanceOf(IllegalArgumentException.class);
  }

  /** README: restart_timestamp is Unix seconds as a plain decimal ({@code 1795257000.250}). */
  @Test
  void aRestartTimestampIsUnixSecondsAsAPlainDecimal() {
    BigDecimal t = Times.epochSeconds(Instant.ofEpochMilli(1_795_257_000_250L));
    assertThat(t.toPlainString()).isEqualTo("1795257000.250");
    assertThat(t.toString()).as("never an exponent").isEqualTo("1795257000.250");
  }

  /** restarting_in_seconds: whole seconds until the restart, rounded up, never negative. */
  @Test
  void secondsUntilARestartAreRoundedUpAndNeverNegative() {
    assertThat(Times.secondsUntil(NOW.plusMillis(4_001), NOW)).isEqualTo(5);
    assertThat(Times.secondsUntil(NOW.plusSeconds(4), NOW)).isEqualTo(4);
    assertThat(Times.secondsUntil(NOW.plusMillis(1), NOW)).isEqualTo(1);
    assertThat(Times.secondsUntil(NOW, NOW)).isZero();
    assertThat(Times.secondsUntil(NOW.minusSeconds(30), NOW)).isZero();
  }

  /** kubectl-style short ages: 45s, 3m12s, 25m, 2h5m, 9h, 4d. */
  @Test
  void agesAreShortAsKubectlPrintsThem() {
    assertThat(Times.human(Duration.ofSeconds(-3))).isEqualTo("0s");
    assertThat(Times.human(Duration.ofSeconds(45))).isEqualTo("45s");
    assertThat(Times.human(Duration.ofSeconds(59))).isEqualTo("59s");
    assertThat(Times.human(Duration.ofSeconds(60))).isEqualTo("1m");
    assertThat(Times.human(Duration.ofSeconds(192))).isEqualTo("3m12s");
    assertThat(Times.human(Duration.ofSeconds(599))).isEqualTo("9m59s");
    assertThat(Times.human(Duration.ofMinutes(10))).isEqualTo("10m");
    assertThat(Times.human(Duration.ofMinutes(10).plusSeconds(30))).as("from 10m on, no seconds").isEqualTo("10m");
    assertThat(Times.human(Duration.ofMinutes(25).plusSeconds(30))).isEqualTo("25m");
    assertThat(Times.human(Duration.ofMinutes(59))).isEqualTo("59m");
    assertThat(Times.human(Duration.ofMinutes(60))).isEqualTo("1h");
    assertThat(Times.human(Duration.ofMinutes(125))).isEqualTo("2h5m");
    assertThat(Times.human(Duration.ofMinutes(479))).isEqualTo("7h59m");
    assertThat(Times.human(Duration.ofHours(8))).isEqualTo("8h");
    assertThat(Times.human(Duration.ofHours(8).plusMinutes(30))).as("from 8h on, no minutes").isEqualTo("8h");
    assertThat(Times.human(Duration.ofHours(9).plusMinutes(30))).isEqualTo("9h");
    assertThat(Times.human(Duration.ofHours(47))).isEqualTo("47h");
    assertThat(Times.human(Duration.ofHours(48))).isEqualTo("2d");
    assertThat(Times.human(Duration.ofDays(4).plusHours(5))).isEqualTo("4d");
  }
}

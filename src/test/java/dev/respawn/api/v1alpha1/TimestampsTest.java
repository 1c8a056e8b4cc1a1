package dev.respawn.api.v1alpha1;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import org.junit.jupiter.api.Test;

/** api.md: the timestamps in status, annotations and the CLI are RFC 3339. */
class TimestampsTest {

  @Test
  void anyOffsetReadsAsTheSameInstant() {
    Instant t = Instant.parse("2026-11-24T10:00:00Z");
    assertThat(Timestamps.parse("2026-11-24T10:00:00Z")).isEqualTo(t);
    assertThat(Timestamps.parse("2026-11-24T11:00:00+01:00")).isEqualTo(t);
    assertThat(Timestamps.parse("  2026-11-24T10:00:00Z \n")).isEqualTo(t);
  }

  @Test
  void absentOrUnreadableIsNull() {
    assertThat(Timestamps.parse(null)).isNull();
    assertThat(Timestamps.parse(" ")).isNull();
    assertThat(Timestamps.parse("yesterday")).isNull();
  }

  @Test
  void writtenInUtcWithMillisecondsAndReadBack() {
    Instant t = Instant.parse("2026-11-24T10:00:00.123Z");
    assertThat(Timestamps.format(t)).isEqualTo("2026-11-24T10:00:00.123Z");
    assertThat(Timestamps.parse(Timestamps.format(t))).isEqualTo(t);
    assertThat(Timestamps.format(null)).isNull();
  }
}

package dev.respawn.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.policy.RestartPolicy.RestartLimit;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class RestartWindowTest {
  static final Instant T0 = Instant.parse("2026-11-22T10:00:00Z");
  static final Optional<RestartLimit> THREE_PER_HOUR = Optional.of(new RestartLimit(3, Duration.ofHours(1)));

  @Test
  void fullAfterMaxRestartsInsideTheWindow() {
    List<Instant> times = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      assertThat(RestartWindow.isFull(times, THREE_PER_HOUR, T0.plusSeconds(i))).isFalse();
      times = RestartWindow.record(times, THREE_PER_HOUR, T0.plusSeconds(i));
    }
    assertThat(RestartWindow.isFull(times, THREE_PER_HOUR, T0.plusSeconds(10))).isTrue();
  }

  @Test
  void slidesOpenAgainWhenTheOldestLeavesTheWindow() {
    List<Instant> times = List.of(T0, T0.plusSeconds(60), T0.plusSeconds(120));
    assertThat(RestartWindow.isFull(times, THREE_PER_HOUR, T0.plus(Duration.ofMinutes(59)))).isTrue();
    assertThat(RestartWindow.isFull(times, THREE_PER_HOUR, T0.plus(Duration.ofMinutes(60)))).isFalse();
    assertThat(RestartWindow.inWindow(times, THREE_PER_HOUR, T0.plusSeconds(3630))).hasSize(2);
  }

  @Test
  void keepsAtMostMaxRestartsTimes() {
    List<Instant> times = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      times = RestartWindow.record(times, THREE_PER_HOUR, T0.plusSeconds(i));
    }
    assertThat(times).containsExactly(T0.plusSeconds(7), T0.plusSeconds(8), T0.plusSeconds(9));
  }

  @Test
  void noLimitKeepsNothingAndIsNeverFull() {
    assertThat(RestartWindow.record(List.of(T0), Optional.empty(), T0)).isEmpty();
    assertThat(RestartWindow.isFull(List.of(T0, T0, T0), Optional.empty(), T0)).isFalse();
  }

  /** README "A manual restart": a refusal with the window full says when a restart fits in the window again. */
  @Test
  void roomAtIsWhenTheOldestRestartThatMustLeaveHasLeftTheWindow() {
    List<Instant> times = List.of(T0.plusSeconds(120), T0, T0.plusSeconds(60)); // as status may hold them
    assertThat(RestartWindow.roomAt(times, THREE_PER_HOUR, T0.plusSeconds(600)))
        .contains(T0.plus(Duration.ofHours(1)));
    Optional<RestartLimit> twoPerHour = Optional.of(new RestartLimit(2, Duration.ofHours(1)));
    assertThat(RestartWindow.roomAt(times, twoPerHour, T0.plusSeconds(600)))
        .as("two of three must leave: the second oldest decides").contains(T0.plusSeconds(3660));
    assertThat(RestartWindow.roomAt(times.subList(0, 2), THREE_PER_HOUR, T0.plusSeconds(600)))
        .as("not full: now").contains(T0.plusSeconds(600));
  }
}

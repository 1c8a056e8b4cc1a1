package dev.respawn.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.policy.RestartPolicy.CircuitSettings;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class CircuitBreakerTest {
  static final Instant T0 = Instant.parse("2026-11-22T10:00:00Z");
  static final CircuitSettings FIVE = new CircuitSettings(5, Duration.ofMinutes(10), Duration.ofMinutes(5), false);

  @Test
  void opensAfterFiveConsecutiveFailuresWithThresholdFive() {
    CircuitSnapshot s = CircuitSnapshot.CLOSED;
    for (int i = 0; i < 4; i++) {
      s = CircuitBreaker.recordFailure(s, FIVE, T0.plusSeconds(i));
      assertThat(s.state()).isEqualTo(CircuitState.Closed);
    }
    s = CircuitBreaker.recordFailure(s, FIVE, T0.plusSeconds(4));
    assertThat(s.state()).isEqualTo(CircuitState.Open);
    assertThat(s.trips()).isEqualTo(1);
    assertThat(s.openedAt()).isEqualTo(T0.plusSeconds(4));
    assertThat(CircuitBreaker.failureCount(s, FIVE, T0.plusSeconds(4))).isEqualTo(5);
  }

  @Test
  void failuresOlderThanTheWindowAreForgotten() {
    CircuitSnapshot s = CircuitSnapshot.CLOSED;
    for (int i = 0; i < 4; i++) {
      s = CircuitBreaker.recordFailure(s, FIVE, T0.plus(Duration.ofMinutes(i)));
    }
    // the 5th failure comes 11 minutes after the first: only 4 are inside the window
    s = CircuitBreaker.recordFailure(s, FIVE, T0.plus(Duration.ofMinutes(11)));
    assertThat(s.state()).isEqualTo(CircuitState.Closed);
    assertThat(CircuitBreaker.failureCount(s, FIVE, T0.plus(Duration.ofMinutes(11)))).isEqualTo(3);
  }

  @Test
  void openGoesHalfOpenAfterOpenDurationAndAHalfOpenFailureReopens() {
    CircuitSnapshot s = open();
    assertThat(CircuitBreaker.trialAt(s, FIVE)).isEqualTo(s.openedAt().plus(Duration.ofMinutes(5)));
    Instant trial = CircuitBreaker.trialAt(s, FIVE);
    s = CircuitBreaker.startTrial(s, trial);
    assertThat(s.state()).isEqualTo(CircuitState.HalfOpen);
    assertThat(s.halfOpenAt()).isEqualTo(trial);
    assertThat(CircuitBreaker.trialDeadline(s, FIVE)).isEqualTo(trial.plus(Duration.ofMinutes(5)));
    s = CircuitBreaker.recordFailure(s, FIVE, trial.plusSeconds(30));
    assertThat(s.state()).isEqualTo(CircuitState.Open);
    assertThat(s.trips()).isEqualTo(2);
    assertThat(s.openedAt()).isEqualTo(trial.plusSeconds(30));
  }

  @Test
  void aHalfOpenSuccessClosesIt() {
    CircuitSnapshot s = CircuitBreaker.startTrial(open(), T0.plus(Duration.ofMinutes(6)));
    s = CircuitBreaker.recordSuccess(s, FIVE, T0.plus(Duration.ofMinutes(8)));
    assertThat(s.state()).isEqualTo(CircuitState.Closed);
    assertThat(s.failureTimes()).isEmpty();
    assertThat(s.lastSuccessAt()).isEqualTo(T0.plus(Duration.ofMinutes(8)));
    assertThat(s.trips()).isEqualTo(1);
  }

  @Test
  void aSuccessWhileClosedKeepsTheFailuresOfTheWindow() {
    // failures of several failure sequences add up within the window: the circuit counts failures
    CircuitSnapshot s = CircuitBreaker.recordFailure(CircuitSnapshot.CLOSED, FIVE, T0);
    for (int i = 1; i <= 3; i++) {
      s = CircuitBreaker.recordFailure(s, FIVE, T0.plusSeconds(i));
    }
    s = CircuitBreaker.recordSuccess(s, FIVE, T0.plus(Duration.ofMinutes(2)));
    assertThat(s.state()).isEqualTo(CircuitState.Closed);
    assertThat(s.failureTimes()).hasSize(4);
    assertThat(CircuitBreaker.recordFailure(s, FIVE, T0.plus(Duration.ofMinutes(3))).state())
        .as("the fifth failure within the window opens it").isEqualTo(CircuitState.Open);
    CircuitSnapshot later = CircuitBreaker.recordSuccess(s, FIVE, T0.plus(Duration.ofMinutes(11)));
    assertThat(later.failureTimes()).as("failures older than the window are forgotten").isEmpty();
  }

  @Test
  void startTrialOnlyLeavesOpen() {
    assertThat(CircuitBreaker.startTrial(CircuitSnapshot.CLOSED, T0)).isSameAs(CircuitSnapshot.CLOSED);
  }

  @Test
  void failureTimesNeverExceedTheThreshold() {
    CircuitSnapshot s = CircuitSnapshot.CLOSED;
    for (int i = 0; i < 50; i++) {
      s = CircuitBreaker.recordFailure(s, FIVE, T0.plusSeconds(i));
      assertThat(s.failureTimes()).hasSizeLessThanOrEqualTo(5);
    }
  }

  @Test
  void resetClosesAndKeepsTrips() {
    CircuitSnapshot s = CircuitBreaker.reset(open());
    assertThat(s.state()).isEqualTo(CircuitState.Closed);
    assertThat(s.trips()).isEqualTo(1);
    assertThat(s.failureTimes()).isEmpty();
  }

  private static CircuitSnapshot open() {
    CircuitSnapshot s = CircuitSnapshot.CLOSED;
    for (int i = 0; i < 5; i++) {
      s = CircuitBreaker.recordFailure(s, FIVE, T0.plusSeconds(i));
    }
    return s;
  }
}

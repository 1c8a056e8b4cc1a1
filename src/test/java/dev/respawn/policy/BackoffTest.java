package dev.respawn.policy;

import static dev.respawn.policy.Specs.backoff;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.respawn.api.v1alpha1.BackoffType;
import dev.respawn.policy.RestartPolicy.BackoffSettings;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class BackoffTest {
  private static BackoffSettings settings(BackoffType type, long initialMs, double multiplier, long maxMs,
      double jitter) {
    return new BackoffSettings(type, Duration.ofMillis(initialMs), multiplier, Duration.ofMillis(maxMs), jitter);
  }

  @Test
  void seedExponentialOneSecondDoubling() {
    BackoffSettings b = settings(BackoffType.Exponential, 1000, 2.0, 3_600_000, 0);
    assertThat(IntStream.rangeClosed(1, 5).mapToObj(n -> Backoff.delay(b, n).toSeconds()))
        .containsExactly(1L, 2L, 4L, 8L, 16L);
  }

  @Test
  void seedExponentialTwoSecondsCappedAt120() {
    BackoffSettings b = settings(BackoffType.Exponential, 2000, 2.0, 120_000, 0);
    assertThat(IntStream.rangeClosed(1, 8).mapToObj(n -> Backoff.delay(b, n)))
        .containsExactly(Duration.ofSeconds(2), Duration.ofSeconds(4), Duration.ofSeconds(8), Duration.ofSeconds(16),
            Duration.ofSeconds(32), Duration.ofSeconds(64), Duration.ofSeconds(120), Duration.ofSeconds(120));
  }

  @ParameterizedTest
  @CsvSource({
      "Immediate, 1, 0", "Immediate, 7, 0", "None, 3, 0",
      "Linear, 1, 1500", "Linear, 2, 3000", "Linear, 5, 7500", "Linear, 100, 60000",
      "Exponential, 3, 6000"})
  void delayByType(BackoffType type, int attempt, long expectedMs) {
    BackoffSettings b = settings(type, 1500, 2.0, 60_000, 0);
    assertThat(Backoff.delay(b, attempt)).isEqualTo(Duration.ofMillis(expectedMs));
  }

  @Test
  void noOverflowForAnyAttemptUpTo1000() {
    BackoffSettings exp = settings(BackoffType.Exponential, 3_600_000, 10.0, 3_600_000L * 24 * 365, 0);
    BackoffSettings lin = new BackoffSettings(BackoffType.Linear, GoDuration.parse("2562047h"), 1.0,
        GoDuration.parse("2562047h"), 0);
    for (int n = 1; n <= 1000; n++) {
      assertThat(Backoff.delay(exp, n)).isPositive().isLessThanOrEqualTo(exp.maxDelay());
      assertThat(Backoff.delay(lin, n)).isPositive().isLessThanOrEqualTo(lin.maxDelay());
    }
    assertThat(Backoff.delay(exp, 1000)).isEqualTo(exp.maxDelay());
  }

  @Test
  void aZeroInitialDelayStaysZeroForEveryAttemptEvenWhereTheMultiplierOverflows() throws Exception {
    // 10^(n-1) is infinite in a double from n = 310: 0 times it must still be 0, not the cap
    BackoffSettings b = settings(BackoffType.Exponential, 0, 10.0, 120_000, 0);
    assertThat(IntStream.rangeClosed(1, 1000).mapToObj(n -> Backoff.delay(b, n)).distinct())
        .containsExactly(Duration.ZERO);
    RestartPolicy policy = PolicyCompiler.compile(Specs.retries(backoff("Exponential", "0s", 10.0, "120s"), 1000));
    assertThat(Backoff.totalRetryTime(policy)).isZero();
  }

  @Test
  void jitterQuarterOnTenSecondsStaysWithinSeedBounds() {
    SplittableRandom random = new SplittableRandom(7);
    Duration ten = Duration.ofSeconds(10);
    var draws = IntStream.range(0, 100).mapToObj(i -> Backoff.jitter(ten, 0.25, random)).toList();
    assertThat(draws).allSatisfy(d -> assertThat(d).isBetween(Duration.ofMillis(7500), Duration.ofMillis(12500)));
    assertThat(draws.stream().distinct().count()).as("jitter actually varies").isGreaterThan(50);
  }

  @Test
  void jitterIsReproducibleWithTheSameSeed() {
    var a = IntStream.range(0, 20).mapToObj(i -> 0).toList();
    SplittableRandom r1 = new SplittableRandom(99);
    SplittableRandom r2 = new SplittableRandom(99);
    for (int i = 0; i < a.size(); i++) {
      assertThat(Backoff.jitter(Duration.ofSeconds(10), 0.5, r1))
          .isEqualTo(Backoff.jitter(Duration.ofSeconds(10), 0.5, r2));
    }
  }

  @Test
  void jitterIsAppliedAfterTheCap() {
    SplittableRandom random = new SplittableRandom(3);
    BackoffSettings b = settings(BackoffType.Exponential, 2000, 2.0, 120_000, 0.25);
    for (int i = 0; i < 200; i++) {
      Duration d = Backoff.jitter(Backoff.delay(b, 20), b.jitter(), random);
      assertThat(d).isBetween(Duration.ofSeconds(90), Duration.ofSeconds(150));
    }
  }

  @Test
  void attemptMustBePositive() {
    assertThatThrownBy(() -> Backoff.delay(settings(BackoffType.Linear, 1, 1, 1, 0), 0))
        .hasMessageContaining("attempt");
  }

  @Test
  void totalRetryTimeSumsTheDelaysWithoutJitter() {
    RestartPolicy p = AgentSim.policy(backoff("Exponential", "2s", 2.0, "120s"));
    assertThat(Backoff.totalRetryTime(p)).isEqualTo(Duration.ofSeconds(14)); // 2 + 4 + 8, maxRetries 3
    assertThat(Backoff.totalRetryTime(AgentSim.policy(backoff("None", "2s", 2.0, "120s")))).isZero();
  }
}

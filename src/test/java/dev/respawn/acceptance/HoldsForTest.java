package dev.respawn.acceptance;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The harness's "nothing happens" check holds from its start: a condition false at first and true later is not
 * "held for the whole window" (await().during() alone passed it, and a check that a manual restart never shows
 * Backoff passed while Backoff was shown for seconds).
 */
class HoldsForTest {

  @Test
  void aConditionFalseAtFirstDoesNotHold() {
    long start = System.nanoTime();
    assertThatThrownBy(() -> OperatorScenario.holdsFor(Duration.ofMillis(500),
        () -> System.nanoTime() - start > Duration.ofMillis(700).toNanos())).isInstanceOf(Throwable.class);
  }

  @Test
  void aConditionThatBreaksWithinTheWindowDoesNotHold() {
    long start = System.nanoTime();
    assertThatThrownBy(() -> OperatorScenario.holdsFor(Duration.ofSeconds(1),
        () -> System.nanoTime() - start < Duration.ofMillis(400).toNanos())).isInstanceOf(Throwable.class);
  }

  @Test
  void aConditionTrueThroughoutHolds() {
    assertThatCode(() -> OperatorScenario.holdsFor(Duration.ofMillis(500), () -> true)).doesNotThrowAnyException();
  }
}

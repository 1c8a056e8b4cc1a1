package dev.respawn.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.testsupport.ManualClock;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class RecentDeletionsTest {
  @Test
  void aPodDeletedAMomentAgoIsNotDeletedAgainUntilTheCacheCouldHaveHeard() {
    ManualClock clock = new ManualClock(Instant.parse("2026-11-25T10:00:00Z"));
    RecentDeletions recent = new RecentDeletions(clock);
    assertThat(recent.deleted("uid-1")).isFalse();
    recent.record("uid-1");
    assertThat(recent.deleted("uid-1")).isTrue();
    assertThat(recent.deleted("uid-2")).isFalse();
    clock.advance(RecentDeletions.REMEMBERED);
    assertThat(recent.deleted("uid-1")).as("still within the time remembered").isTrue();
    clock.advance(Duration.ofMillis(1));
    assertThat(recent.deleted("uid-1")).as("forgotten: nothing stays of a deleted pod").isFalse();
  }

  @Test
  void itRemembersAtMostItsBound() {
    ManualClock clock = new ManualClock(Instant.parse("2026-11-25T10:00:00Z"));
    RecentDeletions recent = new RecentDeletions(clock);
    for (int i = 0; i <= RecentDeletions.MAX_ENTRIES; i++) {
      recent.record("uid-" + i);
    }
    assertThat(recent.deleted("uid-0")).as("the oldest made room").isFalse();
    assertThat(recent.deleted("uid-" + RecentDeletions.MAX_ENTRIES)).isTrue();
  }
}

package dev.respawn.testsupport;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.concurrent.atomic.AtomicReference;

/** A clock that moves only when told to; thread-safe. */
public final class ManualClock implements InstantSource {
  private final AtomicReference<Instant> now;

  public ManualClock(Instant start) {
    now = new AtomicReference<>(start);
  }

  public static ManualClock at(String instant) {
    return new ManualClock(Instant.parse(instant));
  }

  @Override
  public Instant instant() {
    return now.get();
  }

  public Instant advance(Duration by) {
    return now.updateAndGet(t -> t.plus(by));
  }

  public void set(Instant instant) {
    now.set(instant);
  }
}

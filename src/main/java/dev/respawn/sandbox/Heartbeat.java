package dev.respawn.sandbox;

import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/** A periodic Lease renewal of the simulated kubelet; stop it to let the heartbeat go stale. */
public final class Heartbeat implements AutoCloseable {
  private final Future<?> future;
  private final AtomicInteger renewals;

  Heartbeat(Future<?> future, AtomicInteger renewals) {
    this.future = future;
    this.renewals = renewals;
  }

  /** Successful renewals so far. */
  public int renewals() {
    return renewals.get();
  }

  public boolean isStopped() {
    return future.isCancelled();
  }

  public void stop() {
    future.cancel(false);
  }

  @Override
  public void close() {
    stop();
  }
}

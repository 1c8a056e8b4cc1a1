package dev.respawn.controller;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * Lets reconciles run until the operator stops, and lets it stop only once none runs. JOSDK stops the
 * informers (which empties their caches) before the reconcilers' threads: a reconcile still running or
 * queued then decides on caches that show no pod and no policy status, and acts on it (a pod created for
 * a run whose pod still runs, a shared circuit closed because no instance seems to wait for it). Once
 * closed, a reconcile does nothing; the next operator process takes over from status.
 */
final class ReconcileGate {
  /** How long a stop waits for the reconciles already running. */
  static final Duration DRAIN = Duration.ofSeconds(10);

  private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
  private volatile boolean closed;

  /** Enters a reconcile: false once the gate is closed (the reconcile must then do nothing). */
  boolean enter() {
    if (closed || !lock.readLock().tryLock()) {
      return false;
    }
    if (closed) {
      lock.readLock().unlock();
      return false;
    }
    return true;
  }

  /** False once shut or closed: no reconcile acts any more. */
  boolean open() {
    return !closed;
  }

  /** Leaves a reconcile that {@link #enter() entered}. */
  void exit() {
    lock.readLock().unlock();
  }

  /** No reconcile enters from now on (those inside finish); does not wait for them. */
  void shut() {
    closed = true;
  }

  /** No reconcile enters from now on; waits at most {@code timeout} for those inside. True when none is left. */
  boolean close(Duration timeout) {
    closed = true;
    try {
      return lock.writeLock().tryLock(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }
}

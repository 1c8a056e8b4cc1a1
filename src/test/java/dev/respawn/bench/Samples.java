package dev.respawn.bench;

import java.util.Arrays;
import java.util.List;

/** A set of measured values (nanoseconds, or any unit) and their nearest-rank percentiles. */
final class Samples {
  private long[] values = new long[64];
  private int size;

  synchronized void add(long value) {
    if (size == values.length) {
      values = Arrays.copyOf(values, size * 2);
    }
    values[size++] = value;
  }

  synchronized int size() {
    return size;
  }

  /** The nearest-rank percentile, p in 0..100; 0 when empty. */
  synchronized long percentile(double p) {
    if (size == 0) {
      return 0;
    }
    long[] sorted = Arrays.copyOf(values, size);
    Arrays.sort(sorted);
    int rank = (int) Math.ceil(p / 100.0 * size);
    return sorted[Math.max(0, Math.min(size - 1, rank - 1))];
  }

  long p50() {
    return percentile(50);
  }

  long p99() {
    return percentile(99);
  }

  synchronized long max() {
    return size == 0 ? 0 : Arrays.stream(values, 0, size).max().getAsLong();
  }

  synchronized long min() {
    return size == 0 ? 0 : Arrays.stream(values, 0, size).min().getAsLong();
  }

  synchronized long count(java.util.function.LongPredicate which) {
    return Arrays.stream(values, 0, size).filter(which).count();
  }

  /** The median of a few values (e.g. the per-round results of a repeated measurement). */
  static long median(long... xs) {
    long[] sorted = xs.clone();
    Arrays.sort(sorted);
    int n = sorted.length;
    return n == 0 ? 0 : n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  }

  /** The most of {@code nanoTimes} in any span shorter than a second. */
  static long peakInAnySecond(List<Long> nanoTimes) {
    List<Long> times = nanoTimes.stream().sorted().toList();
    long peak = 0;
    int first = 0;
    for (int last = 0; last < times.size(); last++) {
      while (times.get(last) - times.get(first) >= 1_000_000_000L) {
        first++;
      }
      peak = Math.max(peak, last - first + 1);
    }
    return peak;
  }
}

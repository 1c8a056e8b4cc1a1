package dev.respawn.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The benchmark results: one Markdown table (a row per figure: Respawn's value, the physical limit's
 * where there is one, their ratio, the goal and whether it was met), notes per measurement, and the
 * machine it ran on. Written to target/bench/results.md and printed.
 */
final class Results {
  /** One figure. {@code limit} and {@code ratio} are "" where there is no bare-loop counterpart. */
  record Row(String measurement, String figure, String respawn, String limit, String ratio, String goal,
      String result) {}

  /** The order of the issue: measurements not listed come last. */
  static final List<String> ORDER = List.of("decision cost", "reaction latency", "mass failure",
      "restart punctuality", "scale", "heartbeats", "at rest", "API economy", "churn", "cache footprint",
      "shared dependency");
  static final String MET = "met";
  static final String MISSED = "**missed**";

  private final List<Row> rows = new ArrayList<>();
  private final Map<String, List<String>> notes = new LinkedHashMap<>();

  synchronized void row(String measurement, String figure, String respawn, String limit, String ratio, String goal,
      String result) {
    rows.add(new Row(measurement, figure, respawn, limit, ratio, goal, result));
    System.out.printf("  %-18s %-44s %s%s%n", measurement, figure, respawn, limit.isEmpty() ? ""
        : "   (bare loop " + limit + ", ratio " + ratio + ")");
  }

  /** A figure without a goal. */
  void info(String measurement, String figure, String value) {
    row(measurement, figure, value, "", "", "", "");
  }

  /** A figure with a goal: met when {@code met}. */
  void goal(String measurement, String figure, String value, String goal, boolean met) {
    row(measurement, figure, value, "", "", goal, met ? MET : MISSED);
  }

  synchronized void note(String measurement, String text) {
    notes.computeIfAbsent(measurement, k -> new ArrayList<>()).add(text);
    System.out.println("  note (" + measurement + "): " + text);
  }

  void failed(String measurement, Throwable e) {
    row(measurement, "measurement failed", e.getClass().getSimpleName() + ": " + String.valueOf(e.getMessage())
        .replace('\n', ' ').replace('|', '/'), "", "", "", "failed");
  }

  synchronized List<Row> rows() {
    return List.copyOf(rows);
  }

  synchronized String markdown(Machine start, Machine end, String mode, long wallSeconds) {
    StringBuilder md = new StringBuilder();
    md.append("# Respawn benchmark results\n\n");
    md.append(String.format(Locale.ROOT, "- run: `make bench%s`, %s, %d min %02d s%n",
        mode.equals("full") ? "" : " BENCH=" + mode, start.at(), wallSeconds / 60, wallSeconds % 60));
    md.append(String.format(Locale.ROOT, "- machine: %d cores (%s), %s memory, %s, %s%n", start.cores(), start.cpu(),
        mib(start.memoryBytes()), start.os(), start.jvm()));
    md.append(String.format(Locale.ROOT, "- harness JVM max heap %s; load average (1/5/15 min) at start %s, at end %s%n",
        mib(start.maxHeapBytes()), start.loadAverage(), end.loadAverage()));
    md.append("- API server: fabric8 kubernetes-server-mock 7.5.2 (CRUD mode) in the harness's JVM; ")
        .append("\"bare loop\" = a plain fabric8 informer that creates the replacement pod the moment it sees one ")
        .append("terminate, run side by side on the same server\n\n");
    md.append("| measurement | figure | Respawn | bare loop (limit) | ratio | goal | result |\n");
    md.append("|---|---|---|---|---|---|---|\n");
    List<Row> ordered = new ArrayList<>(rows);
    ordered.sort(java.util.Comparator.comparingInt(r -> order(r.measurement())));
    for (Row r : ordered) {
      md.append("| ").append(String.join(" | ", r.measurement(), r.figure(), r.respawn(), r.limit(), r.ratio(),
          r.goal(), r.result())).append(" |\n");
    }
    if (!notes.isEmpty()) {
      md.append("\n## Notes\n\n");
      notes.entrySet().stream().sorted(java.util.Comparator.comparingInt(e -> order(e.getKey()))).forEach(e ->
          e.getValue().forEach(n -> md.append("- **").append(e.getKey()).append("**: ").append(n).append('\n')));
    }
    return md.toString();
  }

  private static int order(String measurement) {
    int i = ORDER.indexOf(measurement);
    return i < 0 ? ORDER.size() : i;
  }

  void write(Path file, String markdown) {
    try {
      Files.createDirectories(file.getParent());
      Files.writeString(file, markdown);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static String ms(long nanos) {
    double ms = nanos / 1e6;
    return String.format(Locale.ROOT, ms < 10 ? "%.2f ms" : ms < 100 ? "%.1f ms" : "%.0f ms", ms);
  }

  static String seconds(long nanos) {
    return String.format(Locale.ROOT, "%.1f s", nanos / 1e9);
  }

  static String ratio(double respawn, double limit) {
    return limit <= 0 ? "n/a" : String.format(Locale.ROOT, "%.2f×", respawn / limit);
  }

  static String mib(long bytes) {
    return bytes < 0 ? "?" : String.format(Locale.ROOT, "%.0f MiB", bytes / 1048576.0);
  }

  static String number(double x) {
    return x >= 100 ? String.format(Locale.ROOT, "%,.0f", x) : String.format(Locale.ROOT, "%.2f", x);
  }
}

package dev.respawn.bench;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/** Folds the JMH run's JSON (target/jmh-result.json, sample-time mode) into the results: p50/p99 per decision. */
final class JmhResults {
  static final String MEASUREMENT = "decision cost";

  private JmhResults() {}

  static void fold(Path json, Results results) {
    if (!Files.isRegularFile(json)) {
      results.note(MEASUREMENT, "no JMH results at " + json + " (run `make bench`, which runs JMH first)");
      return;
    }
    try {
      JsonNode root = Serialization.jsonMapper().readTree(Files.readString(json));
      for (JsonNode b : root) {
        String name = b.path("benchmark").asText();
        String shortName = name.substring(name.lastIndexOf('.') + 1);
        JsonNode metric = b.path("primaryMetric");
        JsonNode pct = metric.path("scorePercentiles");
        String unit = metric.path("scoreUnit").asText().replace("/op", "").replace("us", "µs");
        double p50 = pct.path("50.0").asDouble();
        double p99 = pct.path("99.0").asDouble();
        String figure = switch (shortName) {
          case "failureDecision" -> "failure decision (full policy), p50 / p99";
          case "heartbeatCheck" -> "steady-state heartbeat check, p50 / p99";
          default -> shortName + ", p50 / p99";
        };
        boolean met = !"µs".equals(unit) || p99 < 10;
        results.row(MEASUREMENT, figure, String.format(Locale.ROOT, "%.2f / %.2f %s", p50, p99, unit), "", "",
            "p99 < 10 µs (seed: 10 ms)", met ? Results.MET : Results.MISSED);
      }
      results.note(MEASUREMENT, "JMH sample-time mode, 1 fork; " + root.path(0).path("warmupIterations").asInt()
          + " × " + root.path(0).path("warmupTime").asText() + " warm-up, " + root.path(0).path("measurementIterations")
          .asInt() + " × " + root.path(0).path("measurementTime").asText() + " measured (" + json.getFileName() + ")");
    } catch (IOException | RuntimeException e) {
      results.failed(MEASUREMENT, e);
    }
  }
}

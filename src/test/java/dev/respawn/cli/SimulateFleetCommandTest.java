package dev.respawn.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code kubectl respawn simulate-fleet}: the fleet story with and without shared dependencies. */
class SimulateFleetCommandTest {
  static final String POLICY = """
      apiVersion: respawn.dev/v1alpha1
      kind: AgentRestartPolicy
      metadata: {name: fleet, namespace: agents}
      spec:
        backoff: {type: Exponential, initialDelay: 2s, maxDelay: 120s}
        maxRetries: 3
        dependencies:
        - name: model-api
          match: {messageContains: ["model API"]}
      """;

  @TempDir
  Path tmp;

  static String[] run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cli = new CommandLine(RespawnCommand.class);
    cli.setOut(new PrintWriter(out));
    cli.setErr(new PrintWriter(err));
    int code = cli.execute(args);
    return new String[] {String.valueOf(code), out.toString(), err.toString()};
  }

  @Test
  void aFleetOfFiftyThroughAFourMinuteOutage() throws Exception {
    Path policy = Files.writeString(tmp.resolve("fleet.yaml"), POLICY);
    String[] r = run("simulate-fleet", "-f", policy.toString(), "--instances", "50", "--outage-end", "4m");
    assertThat(r[0]).as(r[2]).isEqualTo("0");
    assertThat(r[1]).startsWith("50 instances; the upstream is down from +10s to +4m0s")
        .contains("model-api Closed -> Open", "HalfOpen -> Closed")
        .containsPattern("instances escalated\\s+0\\s+50")
        .containsPattern("failures counted against agents \\(retries\\)\\s+2\\s+200")
        .containsPattern("all running again after the recovery\\s+\\+1m\\d+(\\.\\d+)?s\\s+never");
  }

  /** api.md §11: the fleet story shows when each instance restarts. */
  @Test
  void theStoryShowsWhenEachInstanceRestarts() throws Exception {
    Path policy = Files.writeString(tmp.resolve("fleet.yaml"), POLICY);
    String[] r = run("simulate-fleet", "-f", policy.toString(), "--instances", "3", "--outage-end", "1m");
    assertThat(r[0]).as(r[2]).isEqualTo("0");
    String timeline = r[1].substring(r[1].indexOf("When each instance restarts"));
    java.util.List<String> lines = timeline.lines().skip(1).filter(l -> !l.isBlank()).toList();
    assertThat(lines).hasSize(3);
    java.util.regex.Matcher into = java.util.regex.Pattern.compile("restarts into the outage\\s+(\\d+)")
        .matcher(r[1]);
    assertThat(into.find()).isTrue();
    long starred = 0;
    for (int i = 0; i < 3; i++) {
      String line = lines.get(i);
      assertThat(line).as(timeline).startsWith("  agent-00" + i + " ").matches(".*\\+[0-9hms.]+.*");
      // every instance runs again once the upstream is back: one restart of it is not into the outage
      assertThat(line.split("\\s+")).as(line).anyMatch(t -> t.startsWith("+") && !t.endsWith("*"));
      starred += line.chars().filter(c -> c == '*').count();
    }
    assertThat(starred).as("restarts marked * against the table's figure").isEqualTo(Long.parseLong(into.group(1)));
  }

  @Test
  void aPolicyWithoutDependenciesIsRefusedClearly() throws Exception {
    Path policy = Files.writeString(tmp.resolve("plain.yaml"), POLICY.substring(0, POLICY.indexOf("  dependencies:")));
    String[] r = run("simulate-fleet", "-f", policy.toString());
    assertThat(r[0]).isEqualTo("2");
    assertThat(r[2]).isEqualTo("error: AgentRestartPolicy fleet names no spec.dependencies\n");
  }
}

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
    CommandLine cli = RespawnCommand.withUsageErrors(RespawnCommand.withFleetStory(
        new CommandLine(RespawnCommand.class)));
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

  /** api.md §11 "kubectl respawn simulate can play a fleet story": the same story as {@code simulate fleet}. */
  @Test
  void simulateFleetIsTheSameStory() throws Exception {
    Path policy = Files.writeString(tmp.resolve("fleet.yaml"), POLICY);
    String[] fleet = run("simulate", "fleet", "-f", policy.toString(), "--instances", "3", "--outage-end", "1m");
    assertThat(fleet[0]).as(fleet[2]).isEqualTo("0");
    String[] dashed = run("simulate-fleet", "-f", policy.toString(), "--instances", "3", "--outage-end", "1m");
    assertThat(fleet[1]).contains("When each instance restarts").isEqualTo(dashed[1]);
    String[] missing = run("simulate", "fleet");
    assertThat(missing[2]).contains("see 'respawn simulate fleet --help'");
    String[] story = run("simulate", "-f", policy.toString());
    assertThat(story[0]).isEqualTo("2");
    assertThat(story[2]).contains("--story", "simulate fleet");
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

  /** --help: --instances is 1..1000; anything else is a usage error (exit 2, as for simulate), one error line. */
  @Test
  void anInstanceCountOutOfRangeExitsTwo() throws Exception {
    Path policy = Files.writeString(tmp.resolve("fleet.yaml"), POLICY);
    for (String n : new String[] {"0", "1001", "-3"}) {
      String[] r = run("simulate-fleet", "-f", policy.toString(), "--instances", n);
      assertThat(r[0]).as(n).isEqualTo("2");
      assertThat(r[1]).as(n).isEmpty();
      assertThat(r[2]).as(n).isEqualTo("error: --instances must be 1..1000\n");
    }
  }

  /** The bounds themselves are allowed: one instance, and a thousand. */
  @Test
  void oneInstanceAndAThousandAreAllowed() throws Exception {
    Path policy = Files.writeString(tmp.resolve("fleet.yaml"), POLICY);
    String[] one = run("simulate-fleet", "-f", policy.toString(), "--instances", "1", "--outage-end", "1m");
    assertThat(one[0]).as(one[2]).isEqualTo("0");
    assertThat(one[1]).startsWith("1 instance").contains("the upstream is down from +10s to +1m0s");
    String[] thousand = run("simulate-fleet", "-f", policy.toString(), "--instances", "1000", "--outage-end", "20s");
    assertThat(thousand[0]).as(thousand[2]).isEqualTo("0");
    assertThat(thousand[1]).startsWith("1000 instances; ").contains("  agent-999 ");
  }

  /** docs/simulate.md: exit codes as for simulate, every error one "error: ..." line: a missing file exits 2. */
  @Test
  void aMissingFileExitsTwoWithOneLine() {
    String missing = tmp.resolve("nope.yaml").toString();
    String[] r = run("simulate-fleet", "-f", missing);
    assertThat(r[0]).isEqualTo("2");
    assertThat(r[2]).startsWith("error: cannot read " + missing).endsWith("\n");
    assertThat(r[2].lines()).hasSize(1);
  }

  /**
   * docs/simulate.md: durations are Go durations; a bad one is a usage error: exit 2, one error line that names the
   * option, the value and the rule (as simulate names a bad "@5q" with its step and value).
   */
  @Test
  void aBadDurationExitsTwoNamingTheOptionAndTheValue() throws Exception {
    Path policy = Files.writeString(tmp.resolve("fleet.yaml"), POLICY);
    String[] r = run("simulate-fleet", "-f", policy.toString(), "--outage-end", "4q");
    assertThat(r[0]).isEqualTo("2");
    assertThat(r[1]).isEmpty();
    assertThat(r[2]).startsWith("error: ").contains("--outage-end", "4q", "must be a duration");
    assertThat(r[2].lines()).hasSize(1);
  }

  /** docs/simulate.md: the policy is validated with the operator's rules; invalid exits 2 naming field and rule. */
  @Test
  void anInvalidPolicyExitsTwoNamingTheField() throws Exception {
    Path policy = Files.writeString(tmp.resolve("bad.yaml"), POLICY.replace("maxDelay: 120s", "maxDelay: 1s"));
    String[] r = run("simulate-fleet", "-f", policy.toString());
    assertThat(r[0]).isEqualTo("2");
    assertThat(r[2]).startsWith("error: ").contains("spec.backoff.maxDelay");
    assertThat(r[2].lines()).hasSize(1);
  }
}

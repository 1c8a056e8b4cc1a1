package dev.respawn.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * README "Shared dependencies" shows a policy and what {@code simulate-fleet} prints for it: every line it shows
 * (an elision "..." aside) is a line the command prints for that policy and those flags.
 */
class ReadmeFleetStoryTest {
  static final String COMMAND = "$ kubectl respawn simulate-fleet -f policy.yaml ";

  @TempDir
  Path tmp;

  @Test
  void theOutputTheReadmeShowsIsWhatTheCommandPrints() throws Exception {
    String readme = Files.readString(Path.of("README.md"));
    int section = readme.indexOf("### Shared dependencies: one circuit for the fleet");
    assertThat(section).isNotNegative();
    int policyStart = readme.indexOf("```yaml\n", section) + "```yaml\n".length();
    Path policy = Files.writeString(tmp.resolve("policy.yaml"),
        readme.substring(policyStart, readme.indexOf("```", policyStart)));
    int command = readme.indexOf(COMMAND, section);
    assertThat(command).isNotNegative();
    String commandLine = readme.substring(command + COMMAND.length(), readme.indexOf('\n', command));
    List<String> args = new java.util.ArrayList<>(List.of("simulate-fleet", "-f", policy.toString()));
    args.addAll(List.of(commandLine.trim().split("\\s+")));
    String[] r = SimulateFleetCommandTest.run(args.toArray(String[]::new));
    assertThat(r[0]).as(r[2]).isEqualTo("0");
    int blockStart = readme.indexOf('\n', command) + 1;
    List<String> shown = readme.substring(blockStart, readme.indexOf("```", blockStart)).lines()
        .filter(l -> !l.isBlank() && !l.trim().equals("...")).toList();
    assertThat(shown).hasSizeGreaterThan(5);
    List<String> printed = r[1].lines().toList();
    for (String line : shown) {
      assertThat(printed).as("README shows %s; the command printed:%n%s", line, r[1]).contains(line);
    }
  }
}

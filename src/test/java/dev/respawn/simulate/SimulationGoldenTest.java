package dev.respawn.simulate;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.policy.Tier;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Golden files: for every examples/*.yaml with an AgentRestartPolicy, the simulator's table for two
 * fixed stories must equal src/test/resources/simulate/golden/&lt;example&gt;.txt. A change to the
 * decision core, the examples or the table shows up here; when it is intended, regenerate the files with
 * {@code mvn -o test -Dtest=SimulationGoldenTest -Drespawn.updateGolden=true} and review the diff.
 */
class SimulationGoldenTest {
  /** The issue's story. */
  static final String STORY = "exit:1,exit:1,oom,exit:42,heartbeat-stall,ok:15m,exit:1";
  /** A longer story that gets past the OOM cap: resets, eviction, deadline, a signal, then a stall. */
  static final String TOUR = "exit:42,exit:1,exit:1:network_timeout@30s,ok,evicted,deadline@2m,ok:15m,exit:137,"
      + "heartbeat-stall";
  static final long SEED = 7;
  static final Path EXAMPLES = Path.of(System.getProperty("basedir", "."), "examples");
  static final Path GOLDEN = Path.of(System.getProperty("basedir", "."), "src/test/resources/simulate/golden");
  static final boolean UPDATE = Boolean.getBoolean("respawn.updateGolden");

  @TestFactory
  Stream<DynamicTest> everyExamplePolicyMatchesItsGoldenFile() throws IOException {
    List<Path> examples = examplesWithAPolicy();
    assertThat(examples).as("examples/*.yaml with an AgentRestartPolicy").isNotEmpty();
    return examples.stream().map(example -> DynamicTest.dynamicTest(example.getFileName().toString(), () -> {
      String actual = render(example);
      Path golden = GOLDEN.resolve(example.getFileName().toString().replaceAll("\\.yaml$", ".txt"));
      if (UPDATE) {
        Files.createDirectories(GOLDEN);
        Files.writeString(golden, actual, StandardCharsets.UTF_8);
        // a run that rewrites what it compares with passes nothing: review the diff, run again without the flag
        throw new AssertionError("golden file " + golden + " written: review it, then run without "
            + "-Drespawn.updateGolden");
      }
      assertThat(golden).as("golden file %s is missing: run with -Drespawn.updateGolden=true and check it", golden)
          .exists();
      assertThat(actual).as("simulation of %s differs from %s; if intended, regenerate with "
          + "-Drespawn.updateGolden=true and review the diff", example, golden)
          .isEqualTo(Files.readString(golden, StandardCharsets.UTF_8));
    }));
  }

  /** What the golden file of an example holds: the command line and its table, for each story. */
  static String render(Path example) throws Exception {
    String relative = "examples/" + example.getFileName();
    PolicyFile.Loaded policy = PolicyFile.read(Files.readString(example, StandardCharsets.UTF_8), relative, null);
    StringBuilder sb = new StringBuilder();
    for (String story : List.of(STORY, TOUR)) {
      if (sb.length() > 0) {
        sb.append('\n');
      }
      sb.append("$ kubectl respawn simulate -f ").append(relative).append(" --story ").append(story)
          .append(" --seed ").append(SEED).append("\n");
      sb.append(Simulation.simulate(policy, StoryParser.parse(story), Tier.Enterprise, SEED).toTable());
    }
    return sb.toString();
  }

  static List<Path> examplesWithAPolicy() throws IOException {
    try (Stream<Path> files = Files.list(EXAMPLES)) {
      return files.filter(f -> f.getFileName().toString().endsWith(".yaml")).sorted().filter(f -> {
        try {
          return Files.readString(f).lines().anyMatch(l -> l.strip().equals("kind: AgentRestartPolicy"));
        } catch (IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
      }).toList();
    }
  }
}

package dev.respawn.simulate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class StoryYamlTest {

  @Test
  void aListOfRunsWithLeaseAnnotations() throws Exception {
    Story story = StoryYaml.parse("""
        - ending: exit
          exitCode: 1
          message: "network_timeout, then more"
          after: 30s
          checkpoint: ckpt-3
          checkpointStatus: in_progress
          stepIdempotent: true
          artifactsReady: true
        - {ending: "ok:15m"}
        - {ending: evicted, reason: Preempting}
        - {ending: "exit:42@1m"}
        - {ending: oom}
        """, "story.yaml");

    StoryStep first = story.steps().get(0);
    assertThat(first.type()).isEqualTo(EndingType.EXIT);
    assertThat(first.exitCode()).isEqualTo(1);
    assertThat(first.message()).isEqualTo("network_timeout, then more");
    assertThat(first.after()).isEqualTo(Duration.ofSeconds(30));
    assertThat(first.lease()).isEqualTo(new StoryStep.LeaseNotes("ckpt-3", "in_progress", true, true));
    assertThat(story.steps().get(2).effectiveReason()).isEqualTo("Preempting");
    assertThat(story.text()).isEqualTo("exit:1@30s,ok:15m,evicted,exit:42@1m,oom");
  }

  @Test
  void anObjectWithRuns() throws Exception {
    Story story = StoryYaml.parse("runs:\n- ending: crashed\n  message: tool loop\n", "s.yaml");

    assertThat(story.steps()).singleElement().satisfies(s -> {
      assertThat(s.type()).isEqualTo(EndingType.CRASHED);
      assertThat(s.message()).isEqualTo("tool loop");
    });
  }

  @Test
  void mistakesAreNamed() {
    assertThatThrownBy(() -> StoryYaml.parse("- {ending: exit, exitcode: 1}", "s.yaml"))
        .isInstanceOf(StoryException.class).hasMessageContaining("story file s.yaml, run 1")
        .hasMessageContaining("unknown field \"exitcode\"").hasMessageContaining("exitCode");
    assertThatThrownBy(() -> StoryYaml.parse("- {ending: exit}", "s.yaml"))
        .hasMessageContaining("exit needs an exit code");
    assertThatThrownBy(() -> StoryYaml.parse("- {exitCode: 1}", "s.yaml")).hasMessageContaining("ending is required");
    assertThatThrownBy(() -> StoryYaml.parse("- {ending: explode}", "s.yaml"))
        .hasMessageContaining("unknown story token \"explode\" (story file s.yaml, run 1)")
        .hasMessageContaining("heartbeat-stall");
    assertThatThrownBy(() -> StoryYaml.parse("- {ending: ok}\n- {ending: exit, exitCode: abc}", "s.yaml"))
        .hasMessageContaining("run 2").hasMessageContaining("exitCode");
    assertThatThrownBy(() -> StoryYaml.parse("- {ending: heartbeat-stall, exitCode: 1}", "s.yaml"))
        .hasMessageContaining("exitCode does not apply to heartbeat-stall");
    assertThatThrownBy(() -> StoryYaml.parse("- {ending: exit, exitCode: 1, checkpointStatus: done}", "s.yaml"))
        .hasMessageContaining("checkpointStatus must be one of in_progress, failed, complete");
    assertThatThrownBy(() -> StoryYaml.parse("- {ending: \"exit:1@5s\", after: 5s}", "s.yaml"))
        .hasMessageContaining("given twice");
    assertThatThrownBy(() -> StoryYaml.parse("[]", "s.yaml")).hasMessageContaining("non-empty list of runs");
    assertThatThrownBy(() -> StoryYaml.parse("a: [", "s.yaml")).hasMessageContaining("not valid YAML");
  }

  /**
   * docs/simulate.md: a message is the termination message of an ending Kubernetes reports (or the detail of
   * stalled/crashed); a heartbeat stall has none, and a message given both in ending and in message is refused.
   */
  @Test
  void aMessageOnlyWhereItApplies() throws Exception {
    assertThat(StoryYaml.parse("- {ending: deleted, message: by a person}", "s.yaml").steps().get(0).message())
        .isEqualTo("by a person");
    assertThat(StoryYaml.parse("- {ending: stalled, message: loop}", "s.yaml").steps().get(0).message())
        .isEqualTo("loop");
    assertThatThrownBy(() -> StoryYaml.parse("- {ending: heartbeat-stall, message: x}", "s.yaml"))
        .isInstanceOf(StoryException.class).hasMessageContaining("run 1")
        .hasMessageContaining("message does not apply to heartbeat-stall");
    assertThatThrownBy(() -> StoryYaml.parse("- {ending: never-started, message: x}", "s.yaml"))
        .hasMessageContaining("message does not apply to never-started");
    assertThatThrownBy(() -> StoryYaml.parse("- {ending: \"exit:1:boom\", message: other}", "s.yaml"))
        .hasMessageContaining("the message is given twice");
  }
}

package dev.respawn.simulate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class StoryParserTest {

  @Test
  void theIssuesStoryParsesStepByStep() throws Exception {
    Story story = StoryParser.parse("exit:1,exit:1,oom,exit:42,heartbeat-stall,ok:15m,exit:1");

    assertThat(story.steps()).extracting(StoryStep::type).containsExactly(EndingType.EXIT, EndingType.EXIT,
        EndingType.OOM, EndingType.EXIT, EndingType.HEARTBEAT_STALL, EndingType.OK, EndingType.EXIT);
    assertThat(story.steps().get(3).exitCode()).isEqualTo(42);
    assertThat(story.steps().get(5).after()).isEqualTo(Duration.ofMinutes(15));
    assertThat(story.text()).isEqualTo("exit:1,exit:1,oom,exit:42,heartbeat-stall,ok:15m,exit:1");
  }

  @Test
  void everyEndingHasItsCompactForm() throws Exception {
    Story story = StoryParser.parse("exit:0, oom ,deadline,evicted,deleted,node-lost,no-state,heartbeat-stall,"
        + "stalled,crashed,never-started,ok");

    assertThat(story.steps()).extracting(StoryStep::type).containsExactly(EndingType.values());
    assertThat(story.steps().get(1).effectiveExitCode()).isEqualTo(137);
    assertThat(story.steps().get(1).effectiveReason()).isEqualTo("OOMKilled");
    assertThat(story.steps().get(0).effectiveReason()).isEqualTo("Completed");
    assertThat(story.steps().get(11).after()).as("ok: the policy's resetAfter").isNull();
  }

  @Test
  void messagesAndDurations() throws Exception {
    Story story = StoryParser.parse("exit:1:network_timeout: upstream@30s,exit:2:user@host,oom@1m30s,ok:2h");

    StoryStep first = story.steps().get(0);
    assertThat(first.exitCode()).isEqualTo(1);
    assertThat(first.message()).isEqualTo("network_timeout: upstream");
    assertThat(first.after()).isEqualTo(Duration.ofSeconds(30));
    StoryStep second = story.steps().get(1);
    assertThat(second.message()).as("@ inside a message that is no duration").isEqualTo("user@host");
    assertThat(second.after()).isNull();
    assertThat(story.steps().get(2).after()).isEqualTo(Duration.ofSeconds(90));
    assertThat(story.steps().get(3).after()).isEqualTo(Duration.ofHours(2));
  }

  @Test
  void anUnknownTokenIsNamedWithTheAcceptedForms() {
    assertThatThrownBy(() -> StoryParser.parse("exit:1,segfault,ok"))
        .isInstanceOf(StoryException.class)
        .hasMessageContaining("unknown story token \"segfault\" (step 2)")
        .hasMessageContaining("exit:N[:MESSAGE], oom, deadline, evicted, deleted, node-lost, no-state, "
            + "heartbeat-stall, stalled, crashed, never-started, ok[:DURATION]")
        .hasMessageContaining("@DURATION");
  }

  @ParameterizedTest
  @ValueSource(strings = {"exit", "exit:", "exit:x", "exit:256", "exit:-1", "oom:3", "ok@5m", "ok:5q", "exit:1@5q",
      "never-started@1m", "exit:1,,oom", "exit:1,", " "})
  void badStepsAreRefused(String story) {
    assertThatThrownBy(() -> StoryParser.parse(story)).isInstanceOf(StoryException.class);
  }

  @Test
  void badStepsSayWhatIsWrong() {
    assertThatThrownBy(() -> StoryParser.parse("exit:x")).hasMessageContaining("step 1 (\"exit:x\")")
        .hasMessageContaining("exit code must be a number 0..255");
    assertThatThrownBy(() -> StoryParser.parse("exit:300")).hasMessageContaining("exitCode must be 0..255");
    assertThatThrownBy(() -> StoryParser.parse("ok@5m")).hasMessageContaining("ok:5m");
    assertThatThrownBy(() -> StoryParser.parse("oom@5q")).hasMessageContaining("must be a duration");
    assertThatThrownBy(() -> StoryParser.parse("ok,never-started")).hasMessageContaining("cannot follow ok");
    assertThatThrownBy(() -> StoryParser.parse("exit:1,,oom")).hasMessageContaining("step 2 of the story is empty");
  }

  @Test
  void namesAreCaseInsensitive() throws Exception {
    assertThat(StoryParser.parse("OOM,Heartbeat-Stall").steps()).extracting(StoryStep::token)
        .containsExactly("oom", "heartbeat-stall");
  }

  /** docs/simulate.md: a bad story is refused naming the step; the order rule names the later step. */
  @Test
  void theOrderRuleNamesTheStepThatBreaksIt() {
    assertThatThrownBy(() -> StoryParser.parse("exit:1,ok:5m,never-started"))
        .hasMessageStartingWith("step 3 (\"never-started\"): never-started cannot follow ok");
  }

  /** docs/simulate.md: exit:N:MESSAGE carries the termination message, even a one-character one. */
  @Test
  void aOneCharacterMessageIsKeptAnEmptyOneIsNone() throws Exception {
    assertThat(StoryParser.parse("exit:1:x").steps().get(0).message()).isEqualTo("x");
    assertThat(StoryParser.parse("exit:1").steps().get(0).message()).isNull();
    assertThat(StoryParser.parse("exit:1:").steps().get(0).message()).as("an empty message is none").isNull();
  }

  /** docs/simulate.md: exit:N takes an exit code 0..255, both ends included. */
  @Test
  void exitCodesZeroAndTwoFiftyFiveAreAccepted() throws Exception {
    assertThat(StoryParser.parse("exit:255,exit:0").steps()).extracting(StoryStep::exitCode).containsExactly(255, 0);
  }
}

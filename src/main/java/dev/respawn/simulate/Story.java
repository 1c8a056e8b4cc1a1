package dev.respawn.simulate;

import java.util.List;
import java.util.stream.Collectors;

/** A scripted sequence of run endings, in order; {@link #text()} is its compact form. */
public record Story(List<StoryStep> steps) {
  public Story {
    steps = List.copyOf(steps);
  }

  /** The story in the compact form (the steps' tokens joined by commas). */
  public String text() {
    return steps.stream().map(StoryStep::token).collect(Collectors.joining(","));
  }
}

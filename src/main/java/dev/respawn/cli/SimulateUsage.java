package dev.respawn.cli;

import dev.respawn.simulate.EndingType;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** The footer of {@code simulate --help}: the story grammar, the file form, the exit codes, the fleet story. */
final class SimulateUsage {
  private SimulateUsage() {}

  /** The story grammar, the file form and the exit codes, for --help (lines fit 80 columns). */
  static String[] footer() {
    List<String> lines = new ArrayList<>();
    lines.add("");
    lines.add("Story, compact form: steps separated by commas; each ends the current run.");
    for (EndingType t : EndingType.values()) {
      wrap(lines, String.format(Locale.ROOT, "  %-17s ", t.form()), t.description());
    }
    wrap(lines, "  ", "An ending may end in @DURATION: how long the run lasted before it (default 0s), e.g. "
        + "exit:1@30s. DURATION is a Go duration: 500ms, 30s, 15m, 1h30m. Exit code 0 ends the story "
        + "(Succeeded); the policy's restartRequestExitCode (default 42) asks for a restart, not a failure.");
    lines.add("  Example: --story exit:1,exit:1,oom,exit:42,heartbeat-stall,ok:15m,exit:1");
    lines.add("");
    lines.add("Story, file form (STORY is an existing file or ends in .yaml/.yml), a list:");
    lines.add("  - ending: exit          # an ending above; also \"exit:1@30s\", \"ok:15m\"");
    lines.add("    exitCode: 1           # exit (required), oom (137), deadline, evicted");
    lines.add("    reason: Error         # container/pod reason: exit, evicted, no-state");
    lines.add("    message: \"...\"        # termination message (stalled, crashed: detail)");
    lines.add("    after: 30s            # how long the run lasted (ok: how long healthy)");
    lines.add("    checkpoint: ckpt-3    # Lease annotations of the run: checkpoint,");
    lines.add("    checkpointStatus: in_progress   # in_progress | failed | complete,");
    lines.add("    stepIdempotent: true  # step-idempotent,");
    lines.add("    artifactsReady: true  # artifacts-ready");
    lines.add("");
    wrap(lines, "", "Each row: the run, its story step, when it ended (AT, from t=0), class/failureReason, "
        + "the decision and its reason code, the delay and the time of the next start, attempt/limit, circuit "
        + "and phase. A terminal phase (Escalated, Failed, Succeeded), or a run the operator cannot see ending, "
        + "stops the story: the remaining steps are listed as not reached. Without jitter the output never "
        + "changes.");
    lines.add("");
    lines.add("Exit codes: 0 simulated; 2 invalid policy, story or usage; 1 cluster error.");
    lines.add("");
    wrap(lines, "", "A fleet story (N instances of one policy, an outage of a shared dependency): simulate fleet "
        + "-f FILE [--instances N] [--outage-start D] [--outage-end D] (see simulate fleet --help).");
    return lines.toArray(String[]::new);
  }

  /** Adds {@code text} after {@code head}, wrapped at 79 columns, continuation lines aligned with it. */
  private static void wrap(List<String> lines, String head, String text) {
    String indent = " ".repeat(head.length());
    StringBuilder line = new StringBuilder(head);
    for (String word : text.split(" ")) {
      if (line.length() > head.length() && line.length() + 1 + word.length() > 79) {
        lines.add(line.toString());
        line = new StringBuilder(indent);
      }
      if (line.length() > indent.length()) {
        line.append(' ');
      }
      line.append(word);
    }
    lines.add(line.toString());
  }
}

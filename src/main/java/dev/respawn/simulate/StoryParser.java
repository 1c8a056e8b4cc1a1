package dev.respawn.simulate;

import dev.respawn.policy.GoDuration;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The compact story form: steps separated by commas.
 *
 * <pre>
 * story  := step ("," step)*
 * step   := ending ["@" DURATION]          the run lasted DURATION (default 0s) before it ended so
 *         | "ok" [":" DURATION]            the run stays healthy DURATION (default resetAfter), goes on
 * ending := "exit:" N [":" MESSAGE] | "oom" | "deadline" | "evicted" | "deleted" | "node-lost"
 *         | "no-state" | "heartbeat-stall" | "stalled" | "crashed" | "never-started"
 * </pre>
 *
 * DURATION is a Go duration ({@code 500ms}, {@code 30s}, {@code 15m}, {@code 1h30m}). never-started
 * takes no duration. A MESSAGE cannot hold commas; use a story file for those.
 */
public final class StoryParser {
  private StoryParser() {}

  /** The accepted forms, for error messages and help. */
  public static String acceptedForms() {
    return Arrays.stream(EndingType.values()).map(EndingType::form).collect(Collectors.joining(", "))
        + "; an ending may end in @DURATION (how long the run lasted, e.g. exit:1@30s)";
  }

  /** Parses a compact story such as {@code exit:1,exit:1,oom,exit:42,heartbeat-stall,ok:15m,exit:1}. */
  public static Story parse(String text) throws StoryException {
    if (text == null || text.isBlank()) {
      throw new StoryException("the story is empty; accepted forms: " + acceptedForms());
    }
    List<StoryStep> steps = new ArrayList<>();
    String[] tokens = text.split(",", -1);
    for (int i = 0; i < tokens.length; i++) {
      String token = tokens[i].strip();
      String where = "step " + (i + 1);
      if (token.isEmpty()) {
        throw new StoryException("step " + (i + 1) + " of the story is empty (two commas in a row, or a "
            + "trailing comma?)");
      }
      steps.add(parseToken(token, where));
    }
    return checked(steps);
  }

  /** Parses one step; {@code place} names it in error messages (e.g. "step 3"). */
  static StoryStep parseToken(String token, String place) throws StoryException {
    String where = place + " (\"" + token + "\")";
    String body = token;
    Duration after = null;
    int at = token.lastIndexOf('@');
    if (at >= 0) {
      String suffix = token.substring(at + 1);
      boolean exitWithMessage = token.regionMatches(true, 0, "exit:", 0, 5)
          && token.substring(5, at).contains(":");
      try {
        after = GoDuration.parse(suffix);
        body = token.substring(0, at);
      } catch (IllegalArgumentException e) {
        if (!exitWithMessage) { // in a message, '@' is just a character
          throw new StoryException(where + ": \"" + suffix + "\" after @ " + e.getMessage());
        }
      }
    }
    int colon = body.indexOf(':');
    String name = colon < 0 ? body : body.substring(0, colon);
    String value = colon < 0 ? null : body.substring(colon + 1);
    EndingType type = EndingType.named(name).orElse(null);
    if (type == null) {
      throw new StoryException("unknown story token \"" + token + "\" (" + place + "); accepted forms: "
          + acceptedForms());
    }
    Integer exitCode = null;
    String message = null;
    switch (type) {
      case EXIT -> {
        if (value == null || value.isEmpty()) {
          throw new StoryException(where + ": exit needs an exit code, e.g. exit:1 or exit:1:network_timeout");
        }
        int c2 = value.indexOf(':');
        String code = c2 < 0 ? value : value.substring(0, c2);
        try {
          exitCode = Integer.parseInt(code);
        } catch (NumberFormatException e) {
          throw new StoryException(where + ": the exit code must be a number 0..255 (got \"" + code + "\")");
        }
        message = c2 < 0 || c2 == value.length() - 1 ? null : value.substring(c2 + 1);
      }
      case OK -> {
        if (after != null) {
          throw new StoryException(where + ": ok takes its duration after a colon: ok:" + suffixOf(token));
        }
        if (value != null) {
          try {
            after = GoDuration.parse(value);
          } catch (IllegalArgumentException e) {
            throw new StoryException(where + ": \"" + value + "\" " + e.getMessage());
          }
        }
      }
      default -> {
        if (value != null) {
          throw new StoryException(where + ": " + type.token() + " takes no value (accepted forms: "
              + acceptedForms() + ")");
        }
      }
    }
    String shown = type == EndingType.EXIT || type == EndingType.OK ? token : token.toLowerCase(java.util.Locale.ROOT);
    return new StoryStep(shown, type, exitCode, null, message, after, null).validated(where);
  }

  private static String suffixOf(String token) {
    return token.substring(token.lastIndexOf('@') + 1);
  }

  /** Checks the order of the steps. */
  static Story checked(List<StoryStep> steps) throws StoryException {
    if (steps.isEmpty()) {
      throw new StoryException("the story is empty; accepted forms: " + acceptedForms());
    }
    for (int i = 1; i < steps.size(); i++) {
      if (steps.get(i).type() == EndingType.NEVER_STARTED && steps.get(i - 1).type() == EndingType.OK) {
        throw new StoryException("step " + (i + 1) + " (\"" + steps.get(i).token() + "\"): never-started cannot "
            + "follow ok (that run already started)");
      }
    }
    return new Story(steps);
  }
}

package dev.respawn.observability;

import java.io.PrintStream;
import java.util.Locale;

/**
 * {@code RESPAWN_LOG_FORMAT}: {@code text} (the default) or {@code json}, any case. logback.xml includes the file
 * the value names, so a value it has no file for ({@code JSON}, {@code Json}, a typo) would leave the operator
 * without a single log line, the audit trail of api.md §8 included. Before logback starts, the value is read
 * here, told on stderr when it is neither, and handed to logback as the system property of the same name (which
 * logback looks up before the environment).
 */
public final class LogFormat {
  public static final String VARIABLE = "RESPAWN_LOG_FORMAT";

  private LogFormat() {}

  /** The format logback is given for {@code value}: json for json in any case, text for anything else. */
  public static String of(String value) {
    return value != null && value.trim().toLowerCase(Locale.ROOT).equals("json") ? "json" : "text";
  }

  /** Sets the system property from the environment; call before anything logs. */
  public static void apply(String environmentValue, PrintStream err) {
    if (environmentValue == null) {
      return;
    }
    String format = of(environmentValue);
    if (!environmentValue.trim().equalsIgnoreCase(format)) {
      err.println("warning: " + VARIABLE + "=" + environmentValue + " is neither text nor json; logging as text");
    }
    System.setProperty(VARIABLE, format);
  }
}

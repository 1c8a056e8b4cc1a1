package dev.respawn.observability;

import dev.respawn.policy.Bounds;
import dev.respawn.policy.Decision.Notice;
import dev.respawn.policy.EventType;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

/**
 * The operator's log lines about restart decisions, in the seed's templates (§6.1, prefix
 * {@code [RST]}), on the logger {@value #LOGGER_NAME}. A notice whose message already starts with
 * {@code [RST]} is logged as given; any other as {@code [RST] <reason>: <message>}. The level comes
 * from the reason: RestartExhausted ERROR; RestartFailed WARN; CircuitBreakerStateChanged WARN when
 * it reports an opened circuit (a Warning notice), else INFO; RestartScheduled, RestartStarted,
 * RestartSucceeded INFO; any other reason WARN for a Warning notice, INFO for a Normal one. Each line
 * carries the key-value pairs namespace, instance, reason and type (fields in JSON output).
 */
public final class DecisionLog {
  public static final String LOGGER_NAME = "respawn.decision";
  static final String PREFIX = "[RST]";

  private final Logger log;

  public DecisionLog() {
    this(LoggerFactory.getLogger(LOGGER_NAME));
  }

  DecisionLog(Logger log) {
    this.log = Objects.requireNonNull(log);
  }

  /** Logs a decision's notice about the instance. */
  public void notice(String namespace, String instance, Notice notice) {
    log.atLevel(levelOf(notice)).addKeyValue("namespace", namespace).addKeyValue("instance", instance)
        .addKeyValue("reason", notice.reason().name()).addKeyValue("type", notice.type().name()).log(text(notice));
  }

  static Level levelOf(Notice notice) {
    boolean warning = notice.type() == EventType.Warning;
    return switch (notice.reason()) {
      case RestartExhausted -> Level.ERROR;
      case RestartFailed -> Level.WARN;
      case RestartScheduled, RestartStarted, RestartSucceeded -> Level.INFO;
      default -> warning ? Level.WARN : Level.INFO;
    };
  }

  static String text(Notice notice) {
    String message = Bounds.oneLine(notice.message() == null ? "" : notice.message());
    return message.startsWith(PREFIX) ? message : PREFIX + " " + notice.reason() + ": " + message;
  }
}

package dev.respawn.observability;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.List;
import org.slf4j.LoggerFactory;

/**
 * Captures what one logback logger writes, at a given level and only there (not passed on to the
 * console), until closed, which restores the logger.
 */
final class LogCapture implements AutoCloseable {
  private final Logger logger;
  private final Level previousLevel;
  private final boolean previousAdditivity;
  private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

  LogCapture(String loggerName, Level level) {
    logger = (Logger) LoggerFactory.getLogger(loggerName);
    previousLevel = logger.getLevel();
    previousAdditivity = logger.isAdditive();
    logger.setLevel(level);
    logger.setAdditive(false);
    appender.setContext(logger.getLoggerContext());
    appender.start();
    logger.addAppender(appender);
  }

  List<ILoggingEvent> events() {
    return List.copyOf(appender.list);
  }

  @Override
  public void close() {
    logger.detachAppender(appender);
    appender.stop();
    logger.setLevel(previousLevel);
    logger.setAdditive(previousAdditivity);
  }
}

package dev.respawn.chaos;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.LoggerFactory;

/**
 * Chaos makes the operator and the client warn about every fault on purpose (failed reconciles with
 * their stack traces, refused Event writes, dropped WebSockets, the decisions' [RST] warnings): only
 * errors are logged while it is open; the levels are restored when it is closed.
 */
final class QuietLogs implements AutoCloseable {
  static final List<String> NOISY = List.of("io.javaoperatorsdk", "io.fabric8.kubernetes.client",
      "dev.respawn.observability", "dev.respawn.controller", "respawn.decision", "respawn.audit");
  private final Map<Logger, Level> before = new LinkedHashMap<>();

  QuietLogs() {
    for (String name : NOISY) {
      if (LoggerFactory.getLogger(name) instanceof Logger l) {
        before.put(l, l.getLevel());
        l.setLevel(Level.ERROR);
      }
    }
  }

  @Override
  public void close() {
    before.forEach(Logger::setLevel);
  }
}

package dev.respawn.observability;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import dev.respawn.policy.Decision.Notice;
import java.time.Duration;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class DecisionLogTest {
  LogCapture capture;

  @BeforeEach
  void capture() {
    capture = new LogCapture(DecisionLog.LOGGER_NAME, Level.DEBUG);
  }

  @AfterEach
  void release() {
    capture.close();
  }

  ILoggingEvent onlyEvent() {
    assertThat(capture.events()).hasSize(1);
    return capture.events().get(0);
  }

  static Map<String, Object> keyValues(ILoggingEvent e) {
    return e.getKeyValuePairs().stream().collect(Collectors.toMap(kv -> kv.key, kv -> kv.value));
  }

  @ParameterizedTest(name = "{0} {1} -> {2}")
  @CsvSource({
      "Normal, RestartScheduled, INFO",
      "Normal, RestartStarted, INFO",
      "Normal, RestartSucceeded, INFO",
      "Warning, RestartFailed, WARN",
      "Normal, RestartFailed, WARN",
      "Warning, CircuitBreakerStateChanged, WARN",
      "Normal, CircuitBreakerStateChanged, INFO",
      "Warning, RestartExhausted, ERROR",
      "Normal, RestartExhausted, ERROR",
      "Warning, Escalated, WARN",
      "Warning, HeartbeatStale, WARN",
      "Normal, ResumeDecision, INFO",
      "Normal, RestartRequested, INFO",
      "Warning, RestartRequested, WARN",
      "Warning, PolicyInvalid, WARN"
  })
  void logsANoticeAtTheLevelOfItsReason(String type, String reason, String level) {
    new DecisionLog().notice("agents", "coder", new Notice(dev.respawn.policy.EventType.valueOf(type), dev.respawn.policy.EventReason.valueOf(reason),
        "something happened"));

    assertThat(onlyEvent().getLevel()).isEqualTo(Level.toLevel(level));
  }

  @Test
  void logsSeedTemplateMessagesAsGiven() {
    String message = "[RST] Restart scheduled for coder at 2026-11-21T10:35:04Z (attempt 2)";

    new DecisionLog().notice("agents", "coder", Notice.normal(dev.respawn.policy.EventReason.RestartScheduled, message));

    ILoggingEvent e = onlyEvent();
    assertThat(e.getFormattedMessage()).isEqualTo(message);
    assertThat(e.getLoggerName()).isEqualTo("respawn.decision");
    assertThat(keyValues(e)).containsOnly(Map.entry("namespace", "agents"), Map.entry("instance", "coder"),
        Map.entry("reason", "RestartScheduled"), Map.entry("type", "Normal"));
  }

  @Test
  void prefixesOtherMessagesWithTheTagAndReason() {
    new DecisionLog().notice("agents", "coder",
        Notice.normal(dev.respawn.policy.EventReason.ResumeDecision, "Resume eligible: resume_allowed (checkpoint ckpt-17)"));

    assertThat(onlyEvent().getFormattedMessage())
        .isEqualTo("[RST] ResumeDecision: Resume eligible: resume_allowed (checkpoint ckpt-17)");
  }

  @Test
  void keepsBracesInMessagesLiteral() {
    new DecisionLog().notice("a", "b", Notice.warning(dev.respawn.policy.EventReason.RestartFailed, "[RST] Restart failed for b: {} {0}"));

    assertThat(onlyEvent().getFormattedMessage()).isEqualTo("[RST] Restart failed for b: {} {0}");
  }

  /**
   * An agent's termination message quoted in a notice cannot start a log line of its own: a forged audit line after
   * a line break (black-box tester), a carriage return, a NUL.
   */
  @Test
  void writesWhatAgentsWroteOnOneLine() {
    String forged = "{\"event\":\"restart_decision\",\"instance\":\"control\",\"reason_code\":\"forged\"}";
    new DecisionLog().notice("a", "evil", Notice.warning(dev.respawn.policy.EventReason.RestartFailed,
        "[RST] Restart failed for evil: exit 1 \"boom\n" + forged + "\r\u0000\tend\u2028\""));

    assertThat(onlyEvent().getFormattedMessage()).doesNotContain("\n", "\r", "\u0000", "\u2028")
        .isEqualTo("[RST] Restart failed for evil: exit 1 \"boom\\n" + forged + "\\r\\u0000\\tend\\u2028\"");
  }

  @Test
  void logsAtInfoWithDebugOff() {
    capture.close();
    capture = new LogCapture(DecisionLog.LOGGER_NAME, Level.INFO);
    DecisionLog log = new DecisionLog();

    log.notice("agents", "coder", Notice.normal(dev.respawn.policy.EventReason.RestartStarted, "Restart started for coder"));

    assertThat(capture.events()).extracting(ILoggingEvent::getFormattedMessage)
        .containsExactly("[RST] RestartStarted: Restart started for coder");
  }
}

package dev.respawn.observability;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import ch.qos.logback.classic.util.LogbackMDCAdapter;
import ch.qos.logback.core.status.Status;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.respawn.api.v1alpha1.InterruptionClass;
import dev.respawn.policy.Decision.AuditRecord;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * The production logback.xml (src/main/resources), loaded into a private logger context with
 * RESPAWN_LOG_FORMAT given as a context property (which logback looks up before the environment).
 */
class LogbackConfigTest {
  static final ObjectMapper JSON = new ObjectMapper();
  static final AuditRecord RECORD = new AuditRecord("restart_decision", "agents", "coder", 3,
      InterruptionClass.ToolFailure, null, dev.respawn.policy.ReasonCode.RESTART_SCHEDULED, 0, 2, 3, Instant.parse("2026-11-21T10:35:04Z"),
      "respawn-operator");

  /** Configures a fresh context from logback.xml, runs the body against it, returns stdout's lines. */
  static List<String> output(String format, Consumer<LoggerContext> body) throws Exception {
    return output(format, body, true);
  }

  static List<String> output(String format, Consumer<LoggerContext> body, boolean requireClean)
      throws Exception {
    URL config = LogbackConfigTest.class.getClassLoader().getResource("logback.xml");
    assertThat(config).as("logback.xml on the classpath").isNotNull();
    LoggerContext context = new LoggerContext();
    context.setMDCAdapter(new LogbackMDCAdapter()); // what logback's SLF4J provider does for its context
    if (format != null) {
      context.putProperty("RESPAWN_LOG_FORMAT", format);
    }
    PrintStream original = System.out;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
    try {
      JoranConfigurator configurator = new JoranConfigurator();
      configurator.setContext(context);
      configurator.doConfigure(config);
      // a warning would make logback print its whole status list at every start
      List<Status> problems = context.getStatusManager().getCopyOfStatusList().stream()
          .filter(s -> s.getLevel() >= Status.WARN).toList();
      if (requireClean) {
        assertThat(problems).isEmpty();
      } else {
        assertThat(problems).anySatisfy(s -> assertThat(s.getMessage()).contains("respawn-logging-" + format));
      }
      body.accept(context);
      if (requireClean) { // e.g. no appender failed
        assertThat(context.getStatusManager().getCopyOfStatusList()).noneMatch(s -> s.getLevel() >= Status.WARN);
      }
    } finally {
      System.setOut(original);
      context.stop();
    }
    return captured.toString(StandardCharsets.UTF_8).lines().toList();
  }

  static void logSome(LoggerContext context) {
    context.getLogger("dev.respawn.controller.Reconciler").info("reconciled {} in {} ms", "agents/coder", 3);
    context.getLogger("io.fabric8.kubernetes.client.informers.impl").info("watch started");
    context.getLogger("io.fabric8.kubernetes.client.informers.impl").warn("watch closed");
    context.getLogger("dev.respawn.controller.Reconciler").debug("not shown at INFO");
    new AuditLog(context.getLogger(AuditLog.LOGGER_NAME)).write(RECORD);
  }

  @Test
  void textModePrintsReadableLinesAndTheRawAuditLine() throws Exception {
    List<String> lines = output("text", LogbackConfigTest::logSome);

    assertThat(lines).hasSize(3);
    assertThat(lines.get(0))
        .matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}\\S+ INFO  \\[.+\\] dev\\.respawn\\.controller\\.Reconciler"
            + " - reconciled agents/coder in 3 ms");
    assertThat(lines.get(1)).contains("WARN").endsWith("- watch closed");
    assertThat(lines.get(2)).isEqualTo(AuditLog.line(RECORD));
    assertThat(JSON.readTree(lines.get(2)).get("event").asText()).isEqualTo("restart_decision");
  }

  @Test
  void textIsTheDefault() throws Exception {
    List<String> lines = output(null, context -> context.getLogger("dev.respawn.x").info("hello"));

    // without the context property, logback reads the environment variable; unset means text
    if ("json".equalsIgnoreCase(System.getenv("RESPAWN_LOG_FORMAT"))) {
      assertThat(JSON.readTree(lines.get(0)).get("message").asText()).isEqualTo("hello");
    } else {
      assertThat(lines).singleElement().satisfies(l -> assertThat(l).endsWith("INFO  [main] dev.respawn.x - hello"));
    }
  }

  @Test
  void jsonModeWritesOneJsonObjectPerLine() throws Exception {
    List<String> lines = output("json", LogbackConfigTest::logSome);

    assertThat(lines).hasSize(3);
    JsonNode info = JSON.readTree(lines.get(0));
    assertThat(info.get("level").asText()).isEqualTo("INFO");
    assertThat(info.get("loggerName").asText()).isEqualTo("dev.respawn.controller.Reconciler");
    assertThat(info.get("message").asText()).isEqualTo("reconciled {} in {} ms");
    assertThat(info.get("arguments").toString()).isEqualTo("[\"agents/coder\",\"3\"]");
    assertThat(info.has("timestamp")).isTrue();
    assertThat(info.has("sequenceNumber")).isFalse();
    assertThat(info.has("context")).isFalse();
    assertThat(JSON.readTree(lines.get(1)).get("level").asText()).isEqualTo("WARN");

    JsonNode audit = JSON.readTree(lines.get(2));
    assertThat(audit.get("loggerName").asText()).isEqualTo("respawn.audit");
    assertThat(audit.get("message").asText()).isEqualTo(AuditLog.line(RECORD));
    assertThat(JSON.readTree(audit.get("message").asText()).get("reason_code").asText())
        .isEqualTo("restart_scheduled");
  }

  /** A decision's text line names its namespace and instance: same-named instances of two namespaces differ. */
  @Test
  void textModeNamesTheDecisionsNamespaceAndInstance() throws Exception {
    List<String> lines = output("text", context -> new DecisionLog(context.getLogger(DecisionLog.LOGGER_NAME))
        .notice("team-b", "coder", dev.respawn.policy.Decision.Notice.warning(
            dev.respawn.policy.EventReason.RestartFailed, "[RST] Restart failed for coder: ToolFailure exit 1")));

    assertThat(lines).singleElement().satisfies(l -> assertThat(l)
        .contains(" WARN  [").contains(" respawn.decision - [RST] Restart failed for coder: ToolFailure exit 1 {")
        .endsWith("{namespace=team-b instance=coder reason=RestartFailed type=Warning}"));
  }

  @Test
  void jsonModeCarriesTheDecisionLogsKeyValues() throws Exception {
    List<String> lines = output("json", context -> new DecisionLog(context.getLogger(DecisionLog.LOGGER_NAME))
        .notice("agents", "coder", dev.respawn.policy.Decision.Notice.warning(dev.respawn.policy.EventReason.RestartExhausted,
            "[RST] Restart attempts exhausted for coder after 3 attempts")));

    JsonNode line = JSON.readTree(lines.get(0));
    assertThat(lines).hasSize(1);
    assertThat(line.get("level").asText()).isEqualTo("ERROR");
    assertThat(line.get("message").asText()).isEqualTo("[RST] Restart attempts exhausted for coder after 3 attempts");
    assertThat(line.get("kvpList").toString()).contains("\"instance\":\"coder\"").contains("\"namespace\":\"agents\"");
  }

  @Test
  void anUnknownFormatIsReportedAtStartup() throws Exception {
    List<String> lines = output("yaml", context -> context.getLogger("dev.respawn.x").info("hello"), false);

    assertThat(lines).noneMatch(l -> l.contains("hello"));
  }
}

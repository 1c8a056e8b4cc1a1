package dev.respawn.observability;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.respawn.api.v1alpha1.InterruptionClass;
import dev.respawn.policy.Decision.AuditRecord;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class AuditLogTest {
  static final ObjectMapper JSON = new ObjectMapper();
  static final List<String> KEYS = List.of("event", "namespace", "instance", "run", "interruption_class", "eligible",
      "reason_code", "cooldown_seconds_remaining", "attempt", "max_attempts", "at", "actor");

  LogCapture capture;

  @BeforeEach
  void capture() {
    capture = new LogCapture(AuditLog.LOGGER_NAME, Level.INFO);
  }

  @AfterEach
  void release() {
    capture.close();
  }

  JsonNode onlyLine() throws Exception {
    assertThat(capture.events()).hasSize(1);
    ILoggingEvent event = capture.events().get(0);
    assertThat(event.getLevel()).isEqualTo(Level.INFO);
    assertThat(event.getLoggerName()).isEqualTo("respawn.audit");
    assertThat(event.getFormattedMessage()).isEqualTo(event.getMessage()).doesNotContain("\n");
    return JSON.readTree(event.getFormattedMessage());
  }

  static List<String> keys(JsonNode node) {
    List<String> keys = new ArrayList<>();
    node.fieldNames().forEachRemaining(keys::add);
    return keys;
  }

  @Test
  void writesOneJsonLineWithEveryKeyAndValue() throws Exception {
    new AuditLog().write(new AuditRecord("resume_decision", "agents", "coder", 4, InterruptionClass.ToolFailure,
        true, dev.respawn.policy.ReasonCode.RESUME_BLOCKED_COOLDOWN, 27, 2, 3, Instant.parse("2026-11-21T10:35:04.250Z"), "respawn-operator"));

    JsonNode line = onlyLine();
    assertThat(keys(line)).containsExactlyElementsOf(KEYS);
    assertThat(line.get("event").asText()).isEqualTo("resume_decision");
    assertThat(line.get("namespace").asText()).isEqualTo("agents");
    assertThat(line.get("instance").asText()).isEqualTo("coder");
    assertThat(line.get("run").isInt()).isTrue();
    assertThat(line.get("run").asInt()).isEqualTo(4);
    assertThat(line.get("interruption_class").asText()).isEqualTo("ToolFailure");
    assertThat(line.get("eligible").isBoolean()).isTrue();
    assertThat(line.get("eligible").asBoolean()).isTrue();
    assertThat(line.get("reason_code").asText()).isEqualTo("resume_blocked_cooldown");
    assertThat(line.get("cooldown_seconds_remaining").isIntegralNumber()).isTrue();
    assertThat(line.get("cooldown_seconds_remaining").asLong()).isEqualTo(27L);
    assertThat(line.get("attempt").asInt()).isEqualTo(2);
    assertThat(line.get("max_attempts").asInt()).isEqualTo(3);
    assertThat(line.get("at").asText()).isEqualTo("2026-11-21T10:35:04.250Z");
    assertThat(line.get("actor").asText()).isEqualTo("respawn-operator");
  }

  @Test
  void writesMissingValuesAsNull() throws Exception {
    new AuditLog().write(new AuditRecord("restart_decision", "agents", "coder", 1, null, null, dev.respawn.policy.ReasonCode.RESTART_SCHEDULED, 0,
        1, 3, null, null));

    JsonNode line = onlyLine();
    assertThat(keys(line)).containsExactlyElementsOf(KEYS);
    assertThat(line.get("interruption_class").isNull()).isTrue();
    assertThat(line.get("at").isNull()).isTrue();
    assertThat(line.get("actor").isNull()).isTrue();
    assertThat(line.get("eligible").isBoolean()).as("no resume verdict: not eligible, never null").isTrue();
    assertThat(line.get("eligible").asBoolean()).isFalse();
  }

  @Test
  void writesTimesAsRfc3339Utc() throws Exception {
    new AuditLog().write(new AuditRecord("restart_decision", "a", "b", 2, InterruptionClass.Timeout, false,
        dev.respawn.policy.ReasonCode.RESTART_SCHEDULED, 0, 1, 2, Instant.parse("2026-11-21T10:35:04Z"), "kubectl-respawn"));

    JsonNode line = onlyLine();
    assertThat(line.get("at").asText()).isEqualTo("2026-11-21T10:35:04Z");
    assertThat(line.get("eligible").asBoolean()).isFalse();
    assertThat(line.get("interruption_class").asText()).isEqualTo("Timeout");
  }

  @Test
  void escapesTextAndDoesNotTreatBracesAsPlaceholders() throws Exception {
    new AuditLog().write(new AuditRecord("restart_decision", "a", "quote\"and\nnewline", 1, null, null,
        dev.respawn.policy.ReasonCode.RESTART_SCHEDULED, 0, 0, 0, null, "user {} {\"x\":1}"));

    JsonNode line = onlyLine();
    assertThat(line.get("instance").asText()).isEqualTo("quote\"and\nnewline");
    assertThat(line.get("actor").asText()).isEqualTo("user {} {\"x\":1}");
  }

  @Test
  void writesNothingWhenTheAuditLoggerIsOff() {
    capture.close();
    capture = new LogCapture(AuditLog.LOGGER_NAME, Level.OFF);

    new AuditLog().write(new AuditRecord("restart_decision", "a", "b", 1, null, null, dev.respawn.policy.ReasonCode.CLEAN_EXIT, 0, 0, 0, null, null));

    assertThat(capture.events()).isEmpty();
  }

  @Test
  void anInstanceRefusedForItsPolicyIsALineWithEveryKeyNotEligible() throws Exception {
    dev.respawn.api.v1alpha1.AgentInstance coder = new dev.respawn.api.v1alpha1.AgentInstance();
    coder.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withNamespace("agents")
        .withName("coder").build());
    coder.setStatus(new dev.respawn.api.v1alpha1.AgentInstanceStatus());
    coder.getStatus().run = 3;
    coder.getStatus().attempt = 1;
    new AuditLog().refused(coder, dev.respawn.controller.Refusal.PolicyNotFound, Instant.parse("2026-11-25T08:00:00Z"));

    JsonNode line = onlyLine();
    assertThat(keys(line)).containsExactlyElementsOf(KEYS);
    assertThat(line.get("event").asText()).isEqualTo("policy_invalid");
    assertThat(line.get("instance").asText()).isEqualTo("coder");
    assertThat(line.get("run").asInt()).isEqualTo(3);
    assertThat(line.get("attempt").asInt()).isEqualTo(1);
    assertThat(line.get("eligible").asBoolean()).isFalse();
    assertThat(line.get("reason_code").asText()).isEqualTo("policy_not_found");
    assertThat(line.get("at").asText()).isEqualTo("2026-11-25T08:00:00Z");
    assertThat(line.get("actor").asText()).isEqualTo("system");
  }

  @Test
  void aRefusedPolicyIsALineNamingThePolicy() throws Exception {
    dev.respawn.api.v1alpha1.AgentRestartPolicy policy = new dev.respawn.api.v1alpha1.AgentRestartPolicy();
    policy.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withNamespace("agents")
        .withName("fleet").build());
    new AuditLog().rejected(policy, dev.respawn.controller.Refusal.InvalidSpec, Instant.parse("2026-11-25T08:00:00Z"));

    JsonNode line = onlyLine();
    assertThat(keys(line)).startsWith(KEYS.toArray(String[]::new)).contains("policy");
    assertThat(line.get("event").asText()).isEqualTo("policy_invalid");
    assertThat(line.get("policy").asText()).isEqualTo("fleet");
    assertThat(line.get("reason_code").asText()).isEqualTo("invalid_spec");
    assertThat(line.get("eligible").asBoolean()).isFalse();
  }

  @Test
  void aSharedCircuitsTransitionIsALineWithEveryKeyAndTheDependency() throws Exception {
    new AuditLog().dependency("agents", "fleet", "model-api", new dev.respawn.policy.DependencyCircuit.Transition(
        dev.respawn.api.v1alpha1.CircuitState.Closed, dev.respawn.api.v1alpha1.CircuitState.Open,
        Instant.parse("2026-11-25T08:00:00Z"), "3 instances failed on it within 1m"));

    JsonNode line = onlyLine();
    assertThat(keys(line)).startsWith(KEYS.toArray(String[]::new)).contains("policy", "dependency", "from", "to");
    assertThat(line.get("event").asText()).isEqualTo("dependency_circuit");
    assertThat(line.get("instance").isNull()).isTrue();
    assertThat(line.get("to").asText()).isEqualTo("Open");
    assertThat(line.get("at").asText()).isEqualTo("2026-11-25T08:00:00Z");
  }
}

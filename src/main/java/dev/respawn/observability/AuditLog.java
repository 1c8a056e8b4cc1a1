package dev.respawn.observability;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentInstanceStatus;
import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import dev.respawn.controller.Refusal;
import dev.respawn.policy.Decision.AuditRecord;
import dev.respawn.policy.EventReason;
import io.fabric8.kubernetes.api.model.HasMetadata;
import dev.respawn.policy.DependencyCircuit;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The audit trail of api.md §8: one JSON line per decision, at INFO, on the logger
 * {@value #LOGGER_NAME} (logback.xml prints it as the raw line in text mode, as the message in JSON
 * mode). Keys, in this order: event, namespace, instance, run, interruption_class, eligible,
 * reason_code, cooldown_seconds_remaining, attempt, max_attempts, at (RFC 3339, UTC), actor; a missing
 * value is written as null.
 */
public final class AuditLog {
  public static final String LOGGER_NAME = "respawn.audit";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Logger LOG = LoggerFactory.getLogger(AuditLog.class);

  private final Logger audit;

  public AuditLog() {
    this(LoggerFactory.getLogger(LOGGER_NAME));
  }

  AuditLog(Logger audit) {
    this.audit = Objects.requireNonNull(audit);
  }

  /** Writes the record's line. Never throws. */
  public void write(AuditRecord record) {
    if (!audit.isInfoEnabled()) {
      return;
    }
    try {
      audit.info(line(record));
    } catch (JsonProcessingException | RuntimeException e) {
      LOG.error("Could not write the audit line of {}", record, e);
    }
  }

  /** Writes the line of a shared circuit's transition (api.md §11). Never throws. */
  public void dependency(String namespace, String policy, String dependency, DependencyCircuit.Transition t) {
    if (!audit.isInfoEnabled()) {
      return;
    }
    try {
      ObjectNode node = policyLine("dependency_circuit", namespace, policy, null, t.at());
      node.put("dependency", dependency);
      node.put("from", t.from().name());
      node.put("to", t.to().name());
      node.put("reason", t.why());
      audit.info(JSON.writeValueAsString(node));
    } catch (JsonProcessingException | RuntimeException e) {
      LOG.error("Could not write the audit line of dependency {}", dependency, e);
    }
  }

  /**
   * Writes the line of an instance the operator refuses to serve (its spec or policy is invalid, its policy
   * missing): event {@code policy_invalid}, not eligible, the run and attempt its status shows. Never throws.
   */
  public void refused(AgentInstance instance, Refusal reason, Instant at) {
    AgentInstanceStatus s = instance.getStatus();
    ObjectNode node = JSON.createObjectNode();
    node.put("event", EventReason.PolicyInvalid.auditEvent());
    node.put("namespace", instance.getMetadata().getNamespace());
    node.put("instance", instance.getMetadata().getName());
    node.put("run", s == null || s.run == null ? 0 : s.run);
    node.putNull("interruption_class");
    node.put("eligible", false);
    node.put("reason_code", reason.code());
    node.put("cooldown_seconds_remaining", 0);
    node.put("attempt", s == null || s.attempt == null ? 0 : s.attempt);
    node.putNull("max_attempts");
    node.put("at", rfc3339(at));
    node.put("actor", "system");
    info(node, instance);
  }

  /** Writes the line of a policy refused as invalid or tier-restricted. Never throws. */
  public void rejected(AgentRestartPolicy policy, Refusal reason, Instant at) {
    ObjectNode node = policyLine(EventReason.PolicyInvalid.auditEvent(), policy.getMetadata().getNamespace(),
        policy.getMetadata().getName(), reason.code(), at);
    node.put("eligible", false);
    info(node, policy);
  }

  /**
   * A line about a policy rather than one instance: every key of an instance's line (those without a value
   * null, so a reader can rely on them), then {@code policy}.
   */
  private static ObjectNode policyLine(String event, String namespace, String policy, String reasonCode, Instant at) {
    ObjectNode node = JSON.createObjectNode();
    node.put("event", event);
    node.put("namespace", namespace);
    node.putNull("instance");
    node.putNull("run");
    node.putNull("interruption_class");
    node.putNull("eligible");
    node.put("reason_code", reasonCode);
    node.putNull("cooldown_seconds_remaining");
    node.putNull("attempt");
    node.putNull("max_attempts");
    node.put("at", rfc3339(at));
    node.put("actor", "system");
    node.put("policy", policy);
    return node;
  }

  private void info(ObjectNode line, HasMetadata about) {
    if (!audit.isInfoEnabled()) {
      return;
    }
    try {
      audit.info(JSON.writeValueAsString(line));
    } catch (JsonProcessingException | RuntimeException e) {
      LOG.error("Could not write the audit line of {}", about.getMetadata().getName(), e);
    }
  }

  /** The JSON line of a record. */
  public static String line(AuditRecord r) throws JsonProcessingException {
    ObjectNode node = JSON.createObjectNode();
    node.put("event", r.event());
    node.put("namespace", r.namespace());
    node.put("instance", r.instance());
    node.put("run", r.run());
    node.put("interruption_class", r.interruptionClass() == null ? null : r.interruptionClass().name());
    node.put("eligible", r.eligible());
    node.put("reason_code", r.reasonCode() == null ? null : r.reasonCode().code());
    node.put("cooldown_seconds_remaining", r.cooldownSecondsRemaining());
    node.put("attempt", r.attempt());
    node.put("max_attempts", r.maxAttempts());
    node.put("at", rfc3339(r.at()));
    node.put("actor", r.actor());
    return JSON.writeValueAsString(node);
  }

  private static String rfc3339(Instant at) {
    return at == null ? null : DateTimeFormatter.ISO_INSTANT.format(at);
  }
}

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
    info(new Keys(EventReason.PolicyInvalid.auditEvent(), instance.getMetadata().getNamespace(),
        instance.getMetadata().getName(), s == null || s.run == null ? 0 : s.run, null, false, reason.code(), 0L,
        s == null || s.attempt == null ? 0 : s.attempt, null, at, "system").node(), instance);
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
    ObjectNode node = new Keys(event, namespace, null, null, null, null, reasonCode, null, null, null, at, "system")
        .node();
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
    return JSON.writeValueAsString(new Keys(r.event(), r.namespace(), r.instance(), r.run(),
        r.interruptionClass() == null ? null : r.interruptionClass().name(), r.eligible(),
        r.reasonCode() == null ? null : r.reasonCode().code(), r.cooldownSecondsRemaining(), r.attempt(),
        r.maxAttempts(), r.at(), r.actor()).node());
  }

  /** The keys every audit line has (api.md §8), in this order; a missing value is written as null. */
  private record Keys(String event, String namespace, String instance, Integer run, String interruptionClass,
      Boolean eligible, String reasonCode, Long cooldownSecondsRemaining, Integer attempt, Integer maxAttempts,
      Instant at, String actor) {
    ObjectNode node() {
      ObjectNode node = JSON.createObjectNode();
      node.put("event", event);
      node.put("namespace", namespace);
      node.put("instance", instance);
      node.put("run", run);
      node.put("interruption_class", interruptionClass);
      node.put("eligible", eligible);
      node.put("reason_code", reasonCode);
      node.put("cooldown_seconds_remaining", cooldownSecondsRemaining);
      node.put("attempt", attempt);
      node.put("max_attempts", maxAttempts);
      node.put("at", rfc3339(at));
      node.put("actor", actor);
      return node;
    }
  }

  private static String rfc3339(Instant at) {
    return at == null ? null : DateTimeFormatter.ISO_INSTANT.format(at);
  }
}

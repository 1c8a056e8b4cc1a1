package dev.respawn.observability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.api.v1alpha1.InterruptionClass;
import dev.respawn.controller.Refusal;
import dev.respawn.policy.Decision;
import dev.respawn.policy.Decision.AuditRecord;
import dev.respawn.policy.Decision.Liveness;
import dev.respawn.policy.Decision.Notice;
import dev.respawn.policy.DependencyCircuit;
import dev.respawn.policy.EventReason;
import dev.respawn.policy.InstanceState;
import dev.respawn.policy.ReasonCode;
import dev.respawn.testsupport.ManualClock;
import dev.respawn.testsupport.MockApi;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.events.v1.Event;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * api.md §8 / README "Events, logs, audit", "Metrics": what the operator's sink makes of a decision, a refusal and a
 * shared circuit's transition: one Event (written on its own thread: {@link ReportingSink#close()} waits for it),
 * an [RST] log line per notice, the JSON audit line, and the metrics.
 */
class ReportingSinkTest {
  @RegisterExtension
  static final MockApi API = new MockApi();
  static final AtomicInteger NAMESPACES = new AtomicInteger();
  static final ObjectMapper JSON = new ObjectMapper();
  static final Instant T0 = Instant.parse("2026-11-21T10:00:00Z");

  final String ns = "sink-" + NAMESPACES.incrementAndGet();
  final ManualClock clock = ManualClock.at("2026-11-21T10:00:00Z");
  final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  KubeEventRecorder recorder;
  ReportingSink sink;
  LogCapture decisionLog;
  LogCapture auditLog;

  @BeforeEach
  void start() {
    recorder = new KubeEventRecorder(API.client(), "respawn-operator-7d9f", clock);
    sink = new ReportingSink(recorder, new RestartMetrics(registry));
    decisionLog = new LogCapture(DecisionLog.LOGGER_NAME, Level.INFO);
    auditLog = new LogCapture(AuditLog.LOGGER_NAME, Level.INFO);
  }

  @AfterEach
  void stop() {
    sink.close();
    decisionLog.close();
    auditLog.close();
  }

  List<Event> events() {
    return API.client().events().v1().events().inNamespace(ns).list().getItems();
  }

  List<JsonNode> auditLines() {
    return auditLog.events().stream().map(e -> {
      try {
        return JSON.readTree(e.getFormattedMessage());
      } catch (Exception x) {
        throw new AssertionError("not JSON: " + e.getFormattedMessage(), x);
      }
    }).toList();
  }

  List<String> decisionLines() {
    return decisionLog.events().stream().map(ILoggingEvent::getFormattedMessage).toList();
  }

  AgentRestartPolicy createPolicy(String name) {
    AgentRestartPolicy p = new AgentRestartPolicy();
    p.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(ns).build());
    p.setSpec(new AgentRestartPolicySpec());
    return API.client().resource(p).create();
  }

  /** A failed run of coder (ToolFailure) and the restart scheduled for it, with its audit record. */
  Decision failedAndScheduled() {
    InstanceState s = new InstanceState();
    s.lastFailure = new InstanceState.FailureInfo("coder-1", "u1", InterruptionClass.ToolFailure,
        "UnhandledException", "Error", 1, null, "", true, T0, null);
    AuditRecord audit = new AuditRecord("restart_decision", ns, "coder", 1, InterruptionClass.ToolFailure, true,
        ReasonCode.RESTART_SCHEDULED, 0, 1, 3, T0, "system");
    return new Decision(s, List.of(), Optional.empty(), false, false, false, null, Optional.empty(),
        List.of(Notice.normal(EventReason.RestartScheduled, "[RST] Restart scheduled for coder at 2026-11-21T10:00:02Z"),
            Notice.warning(EventReason.RestartFailed, "[RST] Restart failed for coder: ToolFailure/UnhandledException")),
        0, Optional.of(audit), new Liveness(false, "PodNotRunning", ""));
  }

  @Test
  void aDecisionIsOneEventOfItsWeightiestNoticeALogLinePerNoticeItsAuditLineAndItsMetrics() {
    AgentInstance coder = KubeEventRecorderTest.createInstance(API.client(), ns, "coder");

    sink.decided(coder, failedAndScheduled(), null);
    sink.close();

    assertThat(events()).singleElement().satisfies(e -> {
      assertThat(e.getReason()).isEqualTo("RestartFailed");
      assertThat(e.getType()).isEqualTo("Warning");
      assertThat(e.getRegarding().getName()).isEqualTo("coder");
      assertThat(e.getNote()).startsWith("[RST] Restart failed for coder")
          .contains(" | RestartScheduled: [RST] Restart scheduled for coder");
    });
    assertThat(decisionLines()).hasSize(2).anySatisfy(l -> assertThat(l).startsWith("[RST] Restart failed for coder"))
        .anySatisfy(l -> assertThat(l).startsWith("[RST] Restart scheduled for coder"));
    assertThat(auditLines()).singleElement().satisfies(l -> {
      assertThat(l.get("event").asText()).isEqualTo("restart_decision");
      assertThat(l.get("instance").asText()).isEqualTo("coder");
      assertThat(l.get("interruption_class").asText()).isEqualTo("ToolFailure");
    });
    assertThat(registry.get("respawn.restart.attempts").tag("result", "failed").tag("class", "ToolFailure")
        .counter().count()).isEqualTo(1.0);
  }

  @Test
  void theTimeADecisionTookIsTheDecisionDurationMetric() {
    sink.decisionTook(Duration.ofMillis(40));

    assertThat(registry.get("respawn.decision.duration").timer().count()).isEqualTo(1);
  }

  @Test
  void anInstanceRefusedForItsPolicyIsAPolicyInvalidWarningALogLineAndAnAuditLine() {
    AgentInstance coder = KubeEventRecorderTest.createInstance(API.client(), ns, "coder");

    sink.policyRefused(coder, Refusal.PolicyNotFound, "agentrestartpolicy \"gone\" not found", T0);
    sink.close();

    assertThat(events()).singleElement().satisfies(e -> {
      assertThat(e.getReason()).isEqualTo("PolicyInvalid");
      assertThat(e.getType()).isEqualTo("Warning");
      assertThat(e.getRegarding().getKind()).isEqualTo("AgentInstance");
      assertThat(e.getNote()).contains("PolicyNotFound").contains("\"gone\" not found");
    });
    assertThat(decisionLines()).singleElement().asString().contains("\"gone\" not found");
    assertThat(auditLines()).singleElement().satisfies(l -> {
      assertThat(l.get("event").asText()).isEqualTo("policy_invalid");
      assertThat(l.get("instance").asText()).isEqualTo("coder");
      assertThat(l.get("reason_code").asText()).isEqualTo("policy_not_found");
      assertThat(l.get("eligible").asBoolean()).isFalse();
    });
  }

  @Test
  void aRefusalToldWithinADecisionIsOnlyItsAuditLine() {
    AgentInstance coder = KubeEventRecorderTest.createInstance(API.client(), ns, "coder");

    sink.refusalInDecision(coder, Refusal.InvalidSpec, T0);
    sink.close();

    assertThat(auditLines()).singleElement().satisfies(l -> {
      assertThat(l.get("event").asText()).isEqualTo("policy_invalid");
      assertThat(l.get("reason_code").asText()).isEqualTo("invalid_spec");
    });
    assertThat(events()).isEmpty();
    assertThat(decisionLines()).isEmpty();
  }

  @Test
  void aRejectedPolicyIsAPolicyInvalidEventOnThePolicyAndAnAuditLineNamingIt() {
    AgentRestartPolicy fleet = createPolicy("fleet");

    sink.policyRejected(fleet, Refusal.TierRestricted, "sharedDependencies need the team tier", T0);
    sink.close();

    assertThat(events()).singleElement().satisfies(e -> {
      assertThat(e.getReason()).isEqualTo("PolicyInvalid");
      assertThat(e.getRegarding().getKind()).isEqualTo("AgentRestartPolicy");
      assertThat(e.getRegarding().getName()).isEqualTo("fleet");
      assertThat(e.getNote()).contains("TierRestricted").contains("sharedDependencies need the team tier");
    });
    assertThat(decisionLines()).singleElement().asString().contains("sharedDependencies need the team tier");
    assertThat(auditLines()).singleElement().satisfies(l -> {
      assertThat(l.get("policy").asText()).isEqualTo("fleet");
      assertThat(l.get("reason_code").asText()).isEqualTo("tier_restricted");
    });
  }

  @Test
  void aSharedCircuitOpeningIsAWarningALogLineAnAuditLineAndATripAndItsTrialAndClosingNormalEvents() {
    AgentRestartPolicy fleet = createPolicy("fleet");
    opened(fleet);
    assertThat(registry.get("respawn.dependency.trips").counter().count()).isEqualTo(1.0);
    assertThat(registry.get("respawn.dependency.circuits").tag("state", "Open").gauge().value()).isEqualTo(1.0);
    assertThat(registry.get("respawn.dependency.waiting").gauge().value()).isEqualTo(4.0);
    sink.dependencies(fleet, List.of(DependencyCircuit.closed("model-api")), Map.of("model-api", List.of(
        new DependencyCircuit.Transition(CircuitState.Open, CircuitState.HalfOpen, T0.plusSeconds(60),
            "open for its openDuration: 1 probe(s)"),
        new DependencyCircuit.Transition(CircuitState.HalfOpen, CircuitState.Closed, T0.plusSeconds(90),
            "probe coder was healthy for resetAfter"))));
    sink.close();

    assertThat(registry.get("respawn.dependency.trips").counter().count()).as("closing is no trip").isEqualTo(1.0);
    assertThat(registry.get("respawn.dependency.circuits").tag("state", "Open").gauge().value()).isZero();
    assertThat(events()).hasSize(3).allSatisfy(e -> {
      assertThat(e.getReason()).isEqualTo("DependencyCircuitChanged");
      assertThat(e.getRegarding().getName()).isEqualTo("fleet");
      assertThat(e.getNote()).contains("model-api");
    }).anySatisfy(e -> {
      assertThat(e.getType()).isEqualTo("Warning");
      assertThat(e.getNote()).contains("Closed -> Open");
    }).anySatisfy(e -> {
      assertThat(e.getType()).as("a trial step, as the instance's own circuit tells it").isEqualTo("Normal");
      assertThat(e.getNote()).contains("Open -> HalfOpen");
    }).anySatisfy(e -> {
      assertThat(e.getType()).isEqualTo("Normal");
      assertThat(e.getNote()).contains("HalfOpen -> Closed");
    });
    assertThat(decisionLines()).hasSize(3);
    assertThat(auditLines()).hasSize(3).allSatisfy(l -> {
      assertThat(l.get("event").asText()).isEqualTo("dependency_circuit");
      assertThat(l.get("policy").asText()).isEqualTo("fleet");
      assertThat(l.get("dependency").asText()).isEqualTo("model-api");
    });
  }

  @Test
  void aDeletedInstanceLeavesNoTraceInTheCircuitGaugeOrTheEventMemory() {
    AgentInstance coder = KubeEventRecorderTest.createInstance(API.client(), ns, "coder");
    sink.decided(coder, failedAndScheduled(), null);
    assertThat(registry.get("respawn.circuit.breakers").tag("state", "Closed").gauge().value()).isEqualTo(1.0);

    sink.forget(coder);
    sink.close();

    assertThat(registry.get("respawn.circuit.breakers").tag("state", "Closed").gauge().value()).isZero();
    assertThat(recorder.remembered()).isZero();
  }

  @Test
  void aDeletedPolicyLeavesNoTraceInTheDependencyGaugesOrTheEventMemory() {
    AgentRestartPolicy fleet = createPolicy("fleet");
    opened(fleet);

    sink.forget(fleet);
    sink.close();

    assertThat(registry.get("respawn.dependency.circuits").tag("state", "Open").gauge().value()).isZero();
    assertThat(registry.get("respawn.dependency.waiting").gauge().value()).isZero();
    assertThat(recorder.remembered()).isZero();
  }

  @Test
  void aRepeatedDecisionIsInItsEventsSeriesOnceFlushedWithoutStopping() {
    AgentInstance coder = KubeEventRecorderTest.createInstance(API.client(), ns, "coder");
    sink.decided(coder, failedAndScheduled(), null);
    sink.decided(coder, failedAndScheduled(), null); // the same instant: within the series interval, counted

    sink.flushPending();

    await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(events()).singleElement()
        .satisfies(e -> assertThat(e.getSeries()).isNotNull().satisfies(s -> assertThat(s.getCount()).isEqualTo(2))));
  }

  /** The sink is told that model-api opened on the policy (3 distinct instances, 4 waiting). */
  private void opened(AgentRestartPolicy fleet) {
    DependencyCircuit open = new DependencyCircuit("model-api", CircuitState.Open, 1, T0, null, null, T0, List.of(),
        List.of(), List.of(), 4, 3);
    sink.dependencies(fleet, List.of(open), Map.of("model-api", List.of(new DependencyCircuit.Transition(
        CircuitState.Closed, CircuitState.Open, T0, "failures of 3 distinct instances within 1m"))));
  }
}

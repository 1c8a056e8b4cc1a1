package dev.respawn.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentInstanceStatus;
import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.api.v1alpha1.HealthVerdict;
import dev.respawn.api.v1alpha1.InterruptionClass;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.api.v1alpha1.TerminalReason;
import dev.respawn.policy.CircuitSnapshot;
import dev.respawn.policy.InstanceState;
import dev.respawn.policy.InstanceState.DecisionInfo;
import dev.respawn.policy.InstanceState.FailureInfo;
import dev.respawn.policy.InstanceState.HeartbeatInfo;
import dev.respawn.policy.InstanceState.RestartInfo;
import dev.respawn.policy.InstanceState.ResumeInfo;
import dev.respawn.policy.InstanceState.RunInfo;
import dev.respawn.policy.ReasonCode;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.random.RandomGenerator;
import java.util.SplittableRandom;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

/**
 * The core's state is what status says: status -> state -> status (through JSON, as the API server
 * keeps it) gives the same state back, for states of every shape.
 */
public class StatusRoundTripProperties {
  static final Instant T0 = Instant.parse("2026-11-24T10:00:00Z");

  @Property(tries = 300, seed = "26112731")
  void stateSurvivesStatusAndJson(@ForAll long seed) {
    InstanceState s = state(new SplittableRandom(seed));
    AgentInstanceStatus status = StatusMapper.toStatus(s);
    AgentInstanceStatus read = Serialization.unmarshal(Serialization.asJson(status), AgentInstanceStatus.class);
    assertThat(StatusMapper.toState(read)).as("%s", s).isEqualTo(s);
    assertThat(StatusMapper.toStatus(StatusMapper.toState(read))).usingRecursiveComparison().isEqualTo(status);
  }

  @org.junit.jupiter.api.Test
  void nullItemsInAHandEditedStatusAreLeftOut() {
    AgentInstanceStatus read = Serialization.unmarshal("""
        {"run": 2, "history": [null, {"run": 1, "pod": "agent-1"}], "recentRestarts": [null],
         "earlierRequests": {"restart": [null, "a"]}, "handledRequests": {"restart": null},
         "conditions": [null, {"type": "Ready", "status": "True"}]}
        """, AgentInstanceStatus.class);
    InstanceState s = StatusMapper.toState(read);
    assertThat(s.run).isEqualTo(2);
    assertThat(s.history).singleElement().satisfies(h -> assertThat(h.pod()).isEqualTo("agent-1"));
    assertThat(s.recentRestarts).isEmpty();
    assertThat(s.earlierRequests.get(dev.respawn.api.v1alpha1.OperatorRequest.RESTART)).containsExactly("a");
    assertThat(s.handledRequests).isEmpty();
    assertThat(Conditions.find(read.conditions, "Ready").status).isEqualTo("True");
  }

  @org.junit.jupiter.api.Test
  void aCircuitsEmptyProbesReadBackAbsentAreWhatTheOperatorWrote() {
    var written = Serialization.jsonMapper().valueToTree(DependencyStatuses.toStatus(
        dev.respawn.policy.DependencyCircuit.closed("model-api")));
    assertThat(written.path("probes").isArray()).as("%s", written).isTrue();
    var dropped = Serialization.jsonMapper().createObjectNode();
    dropped.putArray("dependencies").add(written.deepCopy());
    ((com.fasterxml.jackson.databind.node.ObjectNode) dropped.path("dependencies").get(0)).remove("probes");
    var wrote = Serialization.jsonMapper().createObjectNode();
    wrote.putArray("dependencies").add(written);
    assertThat(DependencyStatuses.withProbesShown(dropped)).isEqualTo(wrote);
  }

  @org.junit.jupiter.api.Test
  void nullItemsInAHandEditedPolicyStatusAreLeftOut() {
    dev.respawn.api.v1alpha1.AgentRestartPolicy policy = new dev.respawn.api.v1alpha1.AgentRestartPolicy();
    policy.setStatus(Serialization.unmarshal("""
        {"dependencies": [null, {"name": "model-api", "state": "Open", "probes": [null, "a0"],
          "releaseOrder": [null], "recentBlame": [null, {"instance": "a1", "at": "2026-11-24T10:00:00Z"}]}]}
        """, dev.respawn.api.v1alpha1.AgentRestartPolicyStatus.class));
    dev.respawn.policy.DependencyCircuit c = DependencyStatuses.of(policy).get("model-api");
    assertThat(c.probes()).containsExactly("a0");
    assertThat(c.releaseOrder()).isEmpty();
    assertThat(c.recentBlame()).singleElement().satisfies(b -> assertThat(b.instance()).isEqualTo("a1"));
    assertThat(DependencyDecisions.changed(policy, new dev.respawn.api.v1alpha1.AgentRestartPolicy())).isTrue();
  }

  /** A state of a random shape: every field set or not, lists empty to full. */
  public static InstanceState state(RandomGenerator r) {
    InstanceState s = new InstanceState();
    s.phase = pick(r, Phase.values());
    s.run = r.nextInt(0, 50);
    s.currentPod = s.run == 0 ? null : "agent-" + s.run;
    s.runStartedAt = maybe(r, time(r));
    s.attempt = r.nextInt(0, 5);
    s.firstFailureAt = maybe(r, time(r));
    s.restarts = r.nextInt(0, 100);
    s.nextRestartAt = maybe(r, time(r));
    s.waitingFor = maybe(r, "model-api");
    if (r.nextBoolean()) {
      s.lastFailure = new FailureInfo("agent-1", "uid-1", pick(r, InterruptionClass.values()), "UnhandledException",
          maybe(r, "Error"), maybe(r, r.nextInt(0, 256)), maybe(r, "network_timeout"), r.nextBoolean() ? "" : "rule",
          r.nextBoolean(), time(r), maybe(r, "model-api"), r.nextBoolean(), r.nextBoolean());
    }
    if (r.nextBoolean()) {
      s.refusedRequests.put(pick(r, dev.respawn.api.v1alpha1.OperatorRequest.values()),
          new InstanceState.RefusedRequest("req-" + r.nextInt(0, 9), "phase Running is not Escalated"));
    }
    if (r.nextBoolean()) {
      s.lastDecision = new DecisionInfo(pick(r, dev.respawn.policy.DecisionAction.values()),
          maybe(r, pick(r, ReasonCode.values())), r.nextInt(0, 5), r.nextInt(0, 5), r.nextBoolean(),
          r.nextInt(0, 1000) / 4.0, time(r), r.nextBoolean() ? null : "the server said no " + r.nextInt(100));
    }
    if (r.nextBoolean()) {
      List<Instant> failures = new ArrayList<>();
      for (int i = r.nextInt(0, 4); i > 0; i--) {
        failures.add(time(r));
      }
      s.circuit = new CircuitSnapshot(pick(r, CircuitState.values()), failures, r.nextInt(0, 9), maybe(r, time(r)),
          maybe(r, time(r)), maybe(r, time(r)), maybe(r, time(r)));
    }
    if (r.nextBoolean()) {
      s.heartbeat = new HeartbeatInfo(pick(r, HealthVerdict.values()), time(r), maybe(r, "step 3"));
    }
    if (r.nextBoolean()) {
      s.resume = new ResumeInfo(maybe(r, "ckpt-1"), maybe(r, "in_progress"), maybe(r, r.nextBoolean()),
          maybe(r, r.nextBoolean()), maybe(r, pick(r, ReasonCode.values())), r.nextInt(0, 300), r.nextInt(0, 3));
    }
    if (r.nextBoolean()) {
      s.lastRestart = new RestartInfo(pick(r, dev.respawn.policy.RestartKind.values()),
          maybe(r, "why"), maybe(r, "agent-1"), maybe(r, "agent-2"), maybe(r, time(r)), maybe(r, time(r)),
          r.nextBoolean() ? "" : "req-1", maybe(r, "ckpt-1"), maybe(r, pick(r, InterruptionClass.values())));
    }
    s.terminalReason = maybe(r, pick(r, TerminalReason.values()));
    for (int i = r.nextInt(0, 4); i > 0; i--) {
      s.recentRestarts.add(time(r));
    }
    for (int i = r.nextInt(0, 4); i > 0; i--) {
      s.addHistory(new RunInfo(i, "agent-" + i, "uid-" + i, maybe(r, time(r)), maybe(r, time(r)), dev.respawn.policy.RunOutcome.Failure,
          maybe(r, pick(r, InterruptionClass.values())), maybe(r, r.nextInt(0, 256)),
          maybe(r, pick(r, ReasonCode.values()))));
    }
    java.util.Optional.ofNullable(maybe(r, "restart-1")).ifPresent(id -> s.handledRequests.put(
        dev.respawn.api.v1alpha1.OperatorRequest.RESTART, id));
    java.util.Optional.ofNullable(maybe(r, "resume-1")).ifPresent(id -> s.handledRequests.put(
        dev.respawn.api.v1alpha1.OperatorRequest.RESUME, id));
    for (dev.respawn.api.v1alpha1.OperatorRequest kind : dev.respawn.api.v1alpha1.OperatorRequest.values()) {
      for (int i = r.nextInt(0, 4); i > 0; i--) {
        s.handle(kind, kind.statusKey() + "-" + r.nextInt(0, 100));
      }
    }
    return s;
  }

  private static Instant time(RandomGenerator r) {
    return T0.plusMillis(r.nextLong(0, 86_400_000L)).plusNanos(r.nextInt(0, 1000) * 1000L);
  }

  private static <T> T maybe(RandomGenerator r, T value) {
    return r.nextInt(4) == 0 ? null : value;
  }

  private static <T> T pick(RandomGenerator r, T[] values) {
    return values[r.nextInt(values.length)];
  }

  /**
   * A run is healthy since its Ready condition turned True (what resetAfter counts from, api.md §3.5); a Ready=False
   * condition's transition time is when it stopped being healthy, never a healthy-since.
   */
  @org.junit.jupiter.api.Test
  void onlyAReadyConditionThatIsTrueSaysSinceWhenTheRunIsHealthy() {
    AgentInstanceStatus ready = Serialization.unmarshal("""
        {"run": 2, "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-24T10:00:05Z"}]}
        """, AgentInstanceStatus.class);
    assertThat(StatusMapper.toState(ready).readySince).isEqualTo(Instant.parse("2026-11-24T10:00:05Z"));
    AgentInstanceStatus notReady = Serialization.unmarshal("""
        {"run": 2, "conditions": [{"type": "Ready", "status": "False", "reason": "StaleHeartbeat",
          "lastTransitionTime": "2026-11-24T10:00:05Z"}]}
        """, AgentInstanceStatus.class);
    assertThat(StatusMapper.toState(notReady).readySince).isNull();
    assertThat(StatusMapper.toState(null).phase).as("no status yet: Pending").isEqualTo(Phase.Pending);
  }
}

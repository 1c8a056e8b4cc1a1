package dev.respawn.simulate;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.policy.PolicyCompiler;
import dev.respawn.policy.RestartPolicy;
import dev.respawn.simulate.FleetSimulation.FleetStory;
import dev.respawn.simulate.FleetSimulation.Outcome;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** A fleet meets a four-minute outage of the model API, with and without a shared dependency. */
class FleetSimulationTest {
  static final String POLICY = """
      backoff: {type: Exponential, initialDelay: 2s, maxDelay: 120s}
      maxRetries: 3
      resetAfter: 60s
      dependencies:
      - name: model-api
        match: {messageContains: ["model API"]}
        failureThreshold: 3
        openDuration: 30s
        probes: 1
        releaseRate: 5
      """;
  static final FleetStory STORY = new FleetStory(20, Duration.ofSeconds(10), Duration.ofMinutes(4),
      Duration.ofSeconds(5), Duration.ofMillis(200), "upstream model API answered HTTP 503");

  static RestartPolicy policy(boolean dependencies) throws Exception {
    AgentRestartPolicySpec spec = Serialization.unmarshal(POLICY, AgentRestartPolicySpec.class);
    if (!dependencies) {
      spec.dependencies = null;
    }
    return PolicyCompiler.compile(spec);
  }

  @Test
  void theSharedCircuitSavesTheFleetsRetriesAndTheUpstream() throws Exception {
    Outcome with = new FleetSimulation(policy(true), STORY, 7).run();
    Outcome without = new FleetSimulation(policy(false), STORY, 7).run();

    assertThat(without.escalated()).as("alone, every agent burns its retries in the outage").isEqualTo(20);
    assertThat(with.escalated()).as("with the shared circuit nobody escalates").isZero();
    assertThat(with.failuresCounted()).as("only the failures before the circuit opened count").isEqualTo(2);
    assertThat(without.failuresCounted()).isEqualTo(80);
    // into the outage: the two counted agents' backoff restarts, then one probe per openDuration
    assertThat(with.restartsIntoOutage()).isLessThanOrEqualTo(2 + (int) (Duration.ofMinutes(4).toSeconds() / 30) + 1);
    assertThat(without.restartsIntoOutage()).isEqualTo(60);
    assertThat(with.peakRestartsPerSecond()).as("released at 5 per second").isLessThanOrEqualTo(5);
    assertThat(with.allRunningAfterRecovery()).isLessThan(Duration.ofMinutes(2));
    assertThat(with.transitions()).anySatisfy(t -> assertThat(t).contains("Closed -> Open"))
        .anySatisfy(t -> assertThat(t).contains("HalfOpen -> Closed"));
  }

  /**
   * As the operator (which tells a shared circuit's change to every instance of the policy): an agent whose
   * failure was counted before the circuit opened leaves its Backoff for the wait when it opens, and having waited
   * longest it is the first probe, before its own backoff would have ended (examples tester: the simulation had it
   * restart at the end of its 20 s backoff, the operator probed with it at halfOpenAt).
   */
  @Test
  void anAgentCountedBeforeTheCircuitOpenedWaitsWithTheOthersAndProbesFirst() throws Exception {
    AgentRestartPolicySpec spec = Serialization.unmarshal("""
        backoff: {type: Exponential, initialDelay: 20s, maxDelay: 5m, jitter: 0}
        maxRetries: 5
        resetAfter: 5s
        dependencies:
        - {name: model-api, match: {messageContains: ["model API"]}, failureThreshold: 3, openDuration: 5s}
        """, AgentRestartPolicySpec.class);
    FleetStory story = new FleetStory(4, Duration.ofSeconds(10), Duration.ofSeconds(20), Duration.ofSeconds(5),
        Duration.ofMillis(200), "upstream model API answered HTTP 503");

    Outcome o = new FleetSimulation(PolicyCompiler.compile(spec), story, 7).run();

    assertThat(o.transitions()).first().asString().contains("Closed -> Open");
    Duration opened = Duration.ofMillis(10_400);
    assertThat(o.restarts()).first().satisfies(r -> {
      assertThat(r.instance()).isEqualTo("agent-000");
      assertThat(r.at()).as("its probe at halfOpenAt, not at its own backoff's end (+30.0s)")
          .isEqualTo(opened.plusSeconds(5));
    });
  }

  @Test
  void theSameSeedGivesTheSameStory() throws Exception {
    assertThat(new FleetSimulation(policy(true), STORY, 3).run())
        .isEqualTo(new FleetSimulation(policy(true), STORY, 3).run());
  }
}

package dev.respawn.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.api.v1alpha1.HealthVerdict;
import dev.respawn.api.v1alpha1.Phase;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A start whose status write waits (its pod carries it) while a shared dependency changes its mind. */
class DeferredStartTest {
  static final AgentRestartPolicySpec DEP = io.fabric8.kubernetes.client.utils.Serialization.unmarshal("""
      backoff: {type: Exponential, initialDelay: 2s}
      heartbeat: {timeout: 30s, startupGrace: 2m}
      dependencies:
      - name: model-api
        match: {messageContains: ["HTTP 503"]}
      """, AgentRestartPolicySpec.class);

  /**
   * A healthy run fails with {@code message}; at nextRestartAt the next pod is made, its start status deferred (it
   * waits for the run's first sign) and not written: status still shows the failure's Backoff.
   */
  static AgentSim restartStatusUnwritten(String message) {
    AgentSim s = new AgentSim(AgentSim.policy(DEP)).started();
    s.heartbeat(HealthVerdict.Healthy);
    s.reconcile();
    s.exit(1, "Error", message);
    assertThat(s.state.phase).isEqualTo(Phase.Backoff);
    InstanceState shown = s.state.copy();
    s.now = s.state.nextRestartAt;
    Decision create = s.reconcile();
    assertThat(create.start()).isPresent();
    assertThat(create.deferStatus()).isTrue();
    s.state = shown; // status was not written
    return s;
  }

  /** A restart whose status write waits for the first renewal; meanwhile the shared circuit opens. */
  @Test
  void deferredStartThenDependencyOpensLeavesItsPodRunningUnaccounted() {
    AgentSim s = restartStatusUnwritten("upstream model API answered HTTP 503");
    s.advance(Duration.ofSeconds(1));
    Instant opened = s.now.minusMillis(200);
    s.modelApiOpen(1, opened);
    Decision d = s.running(); // coder-2 runs; its agent has not renewed yet
    // the pod coder-2 is live: status must account for it (or it must be deleted)
    boolean accounted = d.state().currentPod.equals("coder-2")
        || d.deletions().stream().anyMatch(x -> x.name().equals("coder-2"));
    assertThat(accounted).as("live pod coder-2 is neither the current run nor deleted; status says " + d.state().phase)
        .isTrue();
  }

  /** A probe whose start waits for its first renewal while another probe reopens the circuit. */
  @Test
  void deferredProbeStartThenReopenLeavesAnUncountedProbeRun() {
    AgentSim s = new AgentSim(AgentSim.policy(DEP)).started();
    s.exit(1, "Error", "upstream model API answered HTTP 503");
    Instant opened = s.now.plusMillis(300);
    s.modelApiOpen(1, opened);
    s.now = s.state.nextRestartAt;
    s.reconcile();
    assertThat(s.state.phase).isEqualTo(Phase.CircuitOpen);
    s.now = opened.plusSeconds(30);
    s.dependencies.put("model-api", new DependencyCircuit("model-api", CircuitState.HalfOpen, 1, opened,
        opened.plusSeconds(30), null, s.now, List.of("coder", "other"), List.of(), List.of(), 3, 3));
    InstanceState shown = s.state.copy();
    Decision create = s.reconcile();
    assertThat(create.start()).isPresent();
    s.state = shown;
    s.advance(Duration.ofSeconds(1));
    Instant reopened = s.now.minusMillis(100); // "other" failed again
    s.modelApiOpen(2, reopened);
    Decision d = s.running();
    // the fleet's view of this instance: it waits, so the circuit does not keep it as a probe
    DependencyCircuit.Step step = DependencyCircuit.advance(s.policy.dependency("model-api").get(),
        new DependencyCircuit("model-api", CircuitState.HalfOpen, 1, opened, opened.plusSeconds(30), null,
            opened.plusSeconds(30), List.of("coder", "other"), List.of(), List.of(), 3, 3),
        List.of(), List.of(new DependencyCircuit.Waiter("coder", d.state().lastFailure.at())),
        java.util.Map.of("coder", DependencyCircuit.ProbeOutcome.RUNNING, "other", DependencyCircuit.ProbeOutcome.FAILED),
        java.util.Map.of("other", reopened), s.now);
    boolean accounted = d.state().currentPod.equals("coder-2")
        || d.deletions().stream().anyMatch(x -> x.name().equals("coder-2"));
    assertThat(accounted).as("live probe pod coder-2 unaccounted; status " + d.state().phase).isTrue();
  }

  /**
   * §3.3: a run whose start status still waits (its pod carries it) and that asks for its restart (exit 42) before
   * then is restarted at once: the decision that takes its start up and decides the exit leaves a restart due now,
   * which the next look makes (black-box story tester: Backoff with nextRestartAt in the past and no pod, for good).
   */
  @Test
  void aDeferredStartWhoseRunAsksForItsRestartIsRestartedAtOnce() {
    AgentSim s = restartStatusUnwritten("tool failed");
    s.advance(Duration.ofMillis(300));
    Decision asked = s.exit(42);
    assertThat(asked.start()).as("the start taken up").hasValueSatisfying(p -> assertThat(p.run()).isEqualTo(2));
    assertThat(s.state.phase).isEqualTo(Phase.Backoff);
    assertThat(asked.wakeAt()).as("the restart due now comes with the next look").contains(s.now.plusMillis(1));
    Decision next = s.wake();
    assertThat(next.start()).as("restarted: %s", s.state.phase).hasValueSatisfying(p -> assertThat(p.run())
        .isEqualTo(3));
    assertThat(s.state.run).isEqualTo(3);
  }
}

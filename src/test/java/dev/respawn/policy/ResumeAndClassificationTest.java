package dev.respawn.policy;

import static dev.respawn.policy.Fleet.modelApiPolicy;
import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.HealthVerdict;
import dev.respawn.api.v1alpha1.InterruptionClass;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.simulate.SimulatedPods;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Resume (api.md §7) and classification (§4) where they meet a circuit, a shared dependency, and the bounds. */
class ResumeAndClassificationTest {
  static AgentSim sim(dev.respawn.api.v1alpha1.AgentRestartPolicySpec spec) {
    return new AgentSim(AgentSim.policy(spec));
  }

  /** §5: respawn.dev/checkpoint is <= 256 bytes; a longer one must not be resumed from as a cut-off prefix. */
  @Test
  void anOverlongCheckpointIsNeverHandedToTheNextRunTruncated() {
    String full = "ckpt-" + "a".repeat(295); // 300 bytes
    AgentSim s = sim(Specs.spec()).started();
    s.checkpoint(full, "in_progress", true, true);
    s.exit(1, "Error", "network_timeout");
    s.now = s.state.nextRestartAt;
    Decision d = s.reconcile();
    assertThat(d.start()).hasValueSatisfying(p -> assertThat(p.resumeCheckpoint())
        .as("RESPAWN_RESUME_CHECKPOINT must name the agent's checkpoint, or be absent")
        .satisfiesAnyOf(c -> assertThat(c).isEmpty(), c -> assertThat(c).contains(full)));
  }

  /** §1 resume.cooldowns: "minimum delay before a resume, per interruption class". */
  @Test
  void aResumeAfterACircuitOpenWaitStillRespectsTheClassCooldown() {
    AgentSim s = sim(Specs.circuit(Specs.retries(Specs.spec(), 5), 1, "10m", "5s", false)).started();
    s.checkpoint("ckpt-17", "in_progress", true, true);
    Instant failedAt = s.now;
    s.exit(1, "Error", "network_timeout"); // ToolFailure: resume cooldown 30s; circuit opens (threshold 1)
    assertThat(s.state.phase).isEqualTo(Phase.CircuitOpen);
    s.now = s.state.nextRestartAt;
    Decision d = s.reconcile();
    assertThat(d.start()).hasValueSatisfying(p -> {
      if (p.resumeCheckpoint().isPresent()) {
        assertThat(Duration.between(failedAt, s.now)).as("resume started before the ToolFailure cool-down (30s)")
            .isGreaterThanOrEqualTo(Duration.ofSeconds(30));
      }
    });
  }

  /** §4: the *termination message* refines the class; a Stalled verdict is Timeout: "retry, at most 2 retries". */
  @Test
  void aStalledHeartbeatWhoseDetailMentionsAPermanentTokenIsStillRetried() {
    AgentSim s = sim(Specs.heartbeat(Specs.spec(), "60s", "120s")).started();
    s.leaseHolder = s.pod.name();
    s.lease = new LeaseView(s.now, s.now, HealthVerdict.Stalled, "blocked: waiting on git_conflict resolution",
        null, null, null, null);
    s.reconcile();
    assertThat(s.state.lastFailure).isNotNull();
    assertThat(s.state.lastFailure.interruptionClass()).isEqualTo(InterruptionClass.Timeout);
    assertThat(s.state.phase).as("Timeout is retried (up to 2 times)").isEqualTo(Phase.Backoff);
  }

  /** §3 last paragraph: the Escalated message carries the remediation checklist, whatever the names' lengths. */
  @Test
  void theEscalationMessageKeepsTheRemediationChecklistForLongNames() {
    String ns = "n".repeat(63);
    String name = "i".repeat(61); // pod name i...i-1 stays a valid 63-char label
    SimulatedPods pods = new SimulatedPods(ns, name);
    RestartPolicy policy = AgentSim.policy(Specs.spec());
    RestartEvaluator ev = RestartEvaluator.builtIn();
    SplittableRandom random = new SplittableRandom(1);
    Instant now = AgentSim.T0;
    InstanceState state = new InstanceState();
    Decision d = ev.decide(policy, state, pods.sighting(false, Map.of()), now, random);
    pods.apply(d, now);
    state = d.state();
    PodView pod = pods.pod(state.currentPod).orElseThrow();
    String msg = "syntax_error: " + "x".repeat(498); // a 512-byte termination message
    RunEnding e = new RunEnding(pod.name(), pod.uid(), EndingKind.TERMINATED, 1, "Error", msg, now);
    pods.update(new PodView(pod.name(), pod.uid(), PodView.Stage.FINISHED, now, now, null, null, false), e);
    d = ev.decide(policy, state, pods.sighting(false, Map.of()), now, random);
    assertThat(d.state().phase).isEqualTo(Phase.Failed);
    assertThat(d.notices()).anySatisfy(n -> {
      assertThat(n.reason()).isEqualTo(EventReason.Escalated);
      assertThat(n.message()).contains("kubectl logs " + name + "-1", "respawn.dev/resume",
          "kubectl respawn resume " + name + " --force");
    });
    assertThat(d.liveness().message()).contains("kubectl respawn resume " + name + " --force");
  }

  /**
   * §7 "Prefer: eligible -> restart with RESPAWN_RESUME_CHECKPOINT"; a dependency outage (§3 d2) is the textbook
   * resume case.
   */
  @Test
  void aRunInterruptedByASharedDependencyOutageResumesFromItsEligibleCheckpoint() {
    Fleet f = new Fleet(modelApiPolicy("resume: {mode: Prefer}\n",
        "failureThreshold: 1\nopenDuration: 30s\n"), "a");
    f.startAll();
    Fleet.Member a = f.m("a");
    f.now = Fleet.T0.plusSeconds(10);
    a.pods.lease(new LeaseView(f.now, f.now, HealthVerdict.Healthy, null, "ckpt-17", "in_progress", true, true),
        a.state.currentPod);
    f.fail("a", Fleet.OUTAGE);
    assertThat(a.state.waitingFor).isEqualTo("model-api");
    f.settle();
    f.runUntil(Fleet.T0.plusSeconds(120));
    assertThat(a.podsCreated).as("the probe restart happened").hasSize(2);
    assertThat(a.state.lastRestart.resumeCheckpoint()).as("RESPAWN_RESUME_CHECKPOINT of the restarted run")
        .isEqualTo("ckpt-17");
  }

  /**
   * §7 "Require: not eligible (cooldown aside) -> phase Escalated with that code", also when a dependency is
   * blamed.
   */
  @Test
  void requireWithoutACheckpointNeverRestartsFreshAfterADependencyOutage() {
    Fleet f = new Fleet(modelApiPolicy("resume: {mode: Require}\n",
        "failureThreshold: 1\nopenDuration: 30s\n"), "a");
    f.startAll();
    f.now = Fleet.T0.plusSeconds(10);
    f.fail("a", Fleet.OUTAGE); // no checkpoint on the Lease at all
    f.settle();
    f.runUntil(Fleet.T0.plusSeconds(120));
    Fleet.Member a = f.m("a");
    assertThat(a.podsCreated.size() == 1 || a.state.lastRestart.resumeCheckpoint() != null)
        .as("Require restarted %s without a checkpoint (pods created at %s)", a.state.currentPod, a.podsCreated)
        .isTrue();
  }
}

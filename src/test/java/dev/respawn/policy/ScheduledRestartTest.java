package dev.respawn.policy;

import static dev.respawn.policy.EvaluatorFixture.sim;
import static dev.respawn.policy.Specs.backoff;
import static dev.respawn.policy.Specs.circuit;
import static dev.respawn.policy.Specs.retries;
import static dev.respawn.policy.Specs.rule;
import static dev.respawn.policy.Specs.rules;
import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.api.v1alpha1.FailureRule;
import dev.respawn.policy.Decision.Notice;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * api.md §3 step k and the last paragraph: the next run is due at nextRestartAt (the backoff with jitter, a rule's
 * cooldown as a minimum) and starts then, once, also by an operator that restarted meanwhile.
 */
class ScheduledRestartTest {
  @Test
  void kTheExponentialScheduleIsVisibleInNextRestartAt() {
    AgentSim s = sim(circuit(retries(backoff("Exponential", "1s", 2.0, "1h"), 5), 10, "10m", "5m", false)).started();
    List<Long> delays = new java.util.ArrayList<>();
    for (int i = 0; i < 5; i++) {
      s.exit(1);
      delays.add(Duration.between(s.now, s.state.nextRestartAt).toSeconds());
      assertThat(s.last.notices()).filteredOn(n -> n.reason() == dev.respawn.policy.EventReason.RestartScheduled).singleElement()
          .extracting(Notice::message).isEqualTo("[RST] Restart scheduled for coder at " + s.state.nextRestartAt
              + " (attempt " + (i + 1) + ")");
      s.restartAndRun();
    }
    assertThat(delays).containsExactly(1L, 2L, 4L, 8L, 16L);
  }

  @Test
  void kARuleCooldownIsAMinimumDelay() {
    FailureRule slow = rule("rate-limited", "Retry");
    slow.match.messageContains = List.of("429");
    slow.cooldown = "45s";
    AgentSim s = sim(rules(Specs.spec(), slow)).started();
    s.exit(1, "Error", "HTTP 429 from provider");
    assertThat(Duration.between(s.now, s.state.nextRestartAt)).isEqualTo(Duration.ofSeconds(45));
    assertThat(s.state.lastFailure.rule()).isEqualTo("rate-limited");
    assertThat(s.state.lastDecision.reasonCode()).isEqualTo(dev.respawn.policy.ReasonCode.RESTART_SCHEDULED);
  }

  @Test
  void theSameInputsGiveTheSameDecision() {
    AgentSim s = new AgentSim(AgentSim.policy(jittered())).started();
    Sighting o = s.sighting(new RunEnding("coder-1", s.pod.uid(), EndingKind.TERMINATED, 1, "Error",
        "network_timeout", s.now));
    RestartEvaluator ev = RestartEvaluator.builtIn();
    Decision a = ev.decide(s.policy, s.state, o, s.now, new java.util.SplittableRandom(5));
    Decision b = ev.decide(s.policy, s.state, o, s.now, new java.util.SplittableRandom(5));
    assertThat(a).isEqualTo(b);
  }

  private AgentRestartPolicySpec jittered() {
    AgentRestartPolicySpec spec = backoff("Exponential", "10s", 2.0, "120s");
    spec.backoff.jitter = 0.5;
    return spec;
  }

  @Test
  void restartedOperatorWaitsForNextRestartAtAndStartsOnce() {
    AgentSim s = sim(Specs.spec()).started();
    s.exit(1);
    var due = s.state.nextRestartAt;
    // a fresh operator process reconciles early: nothing happens, it wakes at nextRestartAt
    s.advance(Duration.ofMillis(500));
    Decision early = s.reconcile();
    assertThat(early.start()).isEmpty();
    assertThat(early.wakeAt()).contains(due);
    s.now = due;
    assertThat(s.reconcile().start()).isPresent();
    assertThat(s.reconcile().start()).isEmpty(); // the new pod is live: never a second one
    assertThat(s.starts).hasSize(2);
  }

  /**
   * §3 "a restart scheduled before the operator died happens at nextRestartAt, once": a start whose status write was
   * lost is taken up from its pod, and dated no earlier than it was due, although the pod's creationTimestamp (whole
   * seconds) reads earlier.
   */
  @Test
  void aStartTakenUpFromItsPodIsNeverDatedBeforeItWasDue() {
    AgentSim s = sim(Specs.window(backoff("Exponential", "1500ms", 2.0, "120s"), 10, "1h")).started();
    s.exit(1);
    Instant due = s.state.nextRestartAt;
    assertThat(due).isEqualTo(AgentSim.T0.plusMillis(1500));
    InstanceState stale = s.state.copy(); // the status write of the start below is lost
    s.restartStillPending();
    s.pod = new PodView(s.pod.name(), s.pod.uid(), PodView.Stage.PENDING,
        due.truncatedTo(java.time.temporal.ChronoUnit.SECONDS), null, null, null, false);
    s.state = stale;
    s.advance(Duration.ofSeconds(2));
    Decision d = s.reconcile();
    assertThat(d.startsExisting()).as("coder-2 is taken up, not made again").isTrue();
    assertThat(s.state.run).isEqualTo(2);
    assertThat(s.state.restarts).isEqualTo(1);
    assertThat(s.state.lastRestart.startedAt()).isEqualTo(due);
    assertThat(s.state.recentRestarts).containsExactly(due);
  }
}

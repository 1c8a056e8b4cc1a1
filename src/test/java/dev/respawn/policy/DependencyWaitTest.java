package dev.respawn.policy;

import static dev.respawn.policy.EvaluatorFixture.refused;
import static dev.respawn.policy.EvaluatorFixture.sim;
import static dev.respawn.policy.Specs.retries;
import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.policy.Decision.Notice;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * api.md §3 step d2 for one instance: a failure blamed on a shared dependency whose circuit is Open waits for it
 * (CircuitOpen, waitingFor), is released in its turn or probes it, and a request by hand restarts it now.
 */
class DependencyWaitTest {
  final AgentRestartPolicySpec spec = io.fabric8.kubernetes.client.utils.Serialization.unmarshal("""
      backoff: {type: Exponential, initialDelay: 2s}
      dependencies:
      - name: model-api
        match: {messageContains: ["HTTP 503"]}
      """, AgentRestartPolicySpec.class);

  @Test
  void aFailureCountedWhileTheCircuitWasClosedWaitsOnceItOpensInsteadOfRestartingIntoTheOutage() {
    AgentSim s = sim(spec).started();
    s.exit(1, "Error", "upstream model API answered HTTP 503");
    // the first failure of the fleet: the circuit is Closed, so it is counted and scheduled as usual
    assertThat(s.state.phase).isEqualTo(Phase.Backoff);
    assertThat(s.state.attempt).isEqualTo(1);
    assertThat(s.state.lastFailure.dependency()).isEqualTo("model-api");
    // meanwhile two other instances failed: the policy's one writer opened the shared circuit
    java.time.Instant opened = s.now.plusMillis(300);
    s.modelApiOpen(1, opened);
    s.now = s.state.nextRestartAt;
    Decision d = s.reconcile();
    assertThat(d.start()).isEmpty();
    assertThat(s.state.phase).isEqualTo(Phase.CircuitOpen);
    assertThat(s.state.waitingFor).isEqualTo("model-api");
    assertThat(s.state.nextRestartAt).isEqualTo(opened.plusSeconds(30));
    assertThat(d.reasonCode()).isEqualTo(ReasonCode.DEPENDENCY_CIRCUIT_OPEN);
    assertThat(s.state.attempt).as("counted once, when it was decided; not again").isEqualTo(1);
    assertThat(d.notices()).singleElement().extracting(Notice::message).asString()
        .contains("waits for dependency model-api (circuit Open) instead of its scheduled restart");
  }

  @Test
  void aProbeWhosePodIsRefusedWaitsOutTheRetryInsteadOfTryingAtEveryDecision() {
    AgentSim s = sim(spec).started();
    s.exit(1, "Error", "upstream model API answered HTTP 503");
    java.time.Instant opened = s.now.plusMillis(300);
    s.modelApiOpen(1, opened);
    s.now = s.state.nextRestartAt;
    s.reconcile();
    assertThat(s.state.waitingFor).isEqualTo("model-api");
    s.now = opened.plusSeconds(30);
    s.dependencies.put("model-api", new DependencyCircuit("model-api", CircuitState.HalfOpen, 1, opened,
        opened.plusSeconds(30), null, s.now, List.of("coder"), List.of(), List.of(), 3, 3));
    assertThat(s.evaluator.decide(s.policy, s.state, s.sighting(null), s.now, s.random).start())
        .as("the probe is due").isPresent();
    refused(s);
    java.time.Instant retry = s.state.nextRestartAt;
    assertThat(retry).isAfter(s.now);
    s.now = s.now.plusMillis(100);
    assertThat(s.reconcile().start()).as("not before the retry").isEmpty();
    assertThat(s.state.nextRestartAt).isEqualTo(retry);
    s.now = retry;
    assertThat(s.reconcile().start()).isPresent();
  }

  /** coder waits in CircuitOpen for model-api, opened by its own and others' failures. */
  AgentSim waiting(java.time.Instant[] opened) {
    return waiting(opened, spec);
  }

  AgentSim waiting(java.time.Instant[] opened, AgentRestartPolicySpec of) {
    AgentSim s = sim(of).started();
    s.exit(1, "Error", "upstream model API answered HTTP 503");
    opened[0] = s.now.plusMillis(300);
    s.modelApiOpen(1, opened[0]);
    s.now = s.state.nextRestartAt;
    s.reconcile();
    assertThat(s.state.phase).isEqualTo(Phase.CircuitOpen);
    return s;
  }

  /** openDuration after it opened, the circuit goes HalfOpen with coder as its probe. */
  DependencyCircuit halfOpen(AgentSim s, java.time.Instant opened) {
    s.now = opened.plusSeconds(30);
    DependencyCircuit c = new DependencyCircuit("model-api", CircuitState.HalfOpen, 1, opened,
        opened.plusSeconds(30), null, s.now, List.of("coder"), List.of(), List.of(), 3, 3);
    s.dependencies.put("model-api", c);
    return c;
  }

  @Test
  void aBlameThatOnlyAgedOutOfTheWindowLeavesTheCircuitAsStatusShowsIt() {
    AgentSim s = sim(spec).started();
    s.exit(1, "Error", "upstream model API answered HTTP 503"); // Closed: counted, and recorded for model-api
    DependencyCircuit recorded = FleetCircuits.step(s.policy, java.util.Map.of(),
        List.of(new FleetCircuits.Member("coder", s.state, false)), s.now).circuits().get(0);
    assertThat(recorded.blamed()).isEqualTo(1);
    // minutes later, nothing else happened: time passing is no change to write (api.md §12)
    java.time.Instant later = s.now.plus(Duration.ofMinutes(5));
    assertThat(FleetCircuits.step(s.policy, java.util.Map.of("model-api", recorded),
        List.of(new FleetCircuits.Member("coder", s.state, false)), later).circuits()).containsExactly(recorded);
    // a real change (another instance waits) shows the blames of the window only
    DependencyCircuit changed = FleetCircuits.step(s.policy, java.util.Map.of("model-api", recorded),
        List.of(new FleetCircuits.Member("coder", s.state, false), new FleetCircuits.Member("other",
            blamedAt(s.state, later), false)), later).circuits().get(0);
    assertThat(changed.blamed()).isEqualTo(1);
    assertThat(changed.recentBlame()).extracting(DependencyCircuit.Blame::instance).containsExactly("other");
  }

  private static InstanceState blamedAt(InstanceState like, java.time.Instant at) {
    InstanceState s = like.copy();
    InstanceState.FailureInfo f = like.lastFailure;
    s.lastFailure = new InstanceState.FailureInfo(f.pod(), f.podUid(), f.interruptionClass(), f.failureReason(),
        f.reason(), f.exitCode(), f.message(), f.rule(), f.retryable(), at, "model-api");
    return s;
  }

  @Test
  void aReleasedInstanceShowsItsReleaseTimeInStatusBeforeItRestarts() {
    java.time.Instant[] opened = new java.time.Instant[1];
    AgentSim s = waiting(opened);
    // HalfOpen with another probe: coder waits without a time of its own
    s.now = opened[0].plusSeconds(30);
    s.dependencies.put("model-api", new DependencyCircuit("model-api", CircuitState.HalfOpen, 1, opened[0],
        opened[0].plusSeconds(30), null, s.now, List.of("other"), List.of(), List.of(), 2, 2));
    assertThat(s.reconcile().start()).isEmpty();
    assertThat(s.state.nextRestartAt).isNull();
    // the probe closed it: coder is the first of the release, its turn is closedAt
    java.time.Instant closedAt = s.now.plusSeconds(5);
    s.dependencies.put("model-api", new DependencyCircuit("model-api", CircuitState.Closed, 1, opened[0],
        opened[0].plusSeconds(30), closedAt, closedAt, List.of(), List.of("coder", "late"), List.of(), 1, 0));
    s.now = closedAt;
    Decision shows = s.reconcile();
    assertThat(shows.start()).as("not before status shows its time").isEmpty();
    assertThat(s.state.nextRestartAt).isEqualTo(closedAt);
    assertThat(shows.wakeAt()).hasValueSatisfying(t -> assertThat(t).isBefore(closedAt.plusMillis(10)));
    s.now = shows.wakeAt().get();
    assertThat(s.reconcile().start()).as("status showed it: its turn").isPresent();
    assertThat(s.state.run).isEqualTo(2);
  }

  @Test
  void aReleasedInstanceSeenAfterItsTurnShowsItsTimeFirstAlsoWithoutARate() {
    for (String rate : List.of("5", "0")) {
      java.time.Instant[] opened = new java.time.Instant[1];
      AgentSim s = waiting(opened, io.fabric8.kubernetes.client.utils.Serialization.unmarshal("""
          backoff: {type: Exponential, initialDelay: 2s}
          dependencies:
          - name: model-api
            match: {messageContains: ["HTTP 503"]}
            releaseRate: %s
          """.formatted(rate), AgentRestartPolicySpec.class));
      assertThat(s.policy.dependency("model-api").get().releaseRate()).isEqualTo(Double.parseDouble(rate));
      java.time.Instant closedAt = opened[0].plusSeconds(40);
      s.dependencies.put("model-api", new DependencyCircuit("model-api", CircuitState.Closed, 1, opened[0],
          opened[0].plusSeconds(30), closedAt, closedAt, List.of(), List.of("first", "coder"), List.of(), 1, 0));
      java.time.Instant turn = s.policy.dependency("model-api").get().releaseAt(closedAt, 1);
      s.now = turn.plusSeconds(2); // a late look (the operator restarted)
      Decision shows = s.reconcile();
      assertThat(shows.start()).as("releaseRate %s", rate).isEmpty();
      assertThat(s.state.nextRestartAt).isEqualTo(turn);
      s.now = shows.wakeAt().orElseThrow();
      assertThat(s.reconcile().start()).as("releaseRate %s", rate).isPresent();
    }
  }

  @Test
  void aProbeThatExitsCleanlyWaitsForNothingAndTheCircuitPicksAnotherProbe() {
    java.time.Instant[] opened = new java.time.Instant[1];
    AgentSim s = waiting(opened);
    InstanceState other = s.state.copy(); // another instance, waiting the same way
    DependencyCircuit halfOpen = halfOpen(s, opened[0]);
    assertThat(s.reconcile().start()).as("the probe runs").isPresent();
    s.running();
    s.advance(Duration.ofSeconds(5));
    s.exit(0);
    assertThat(s.state.phase).isEqualTo(Phase.Succeeded);
    assertThat(s.state.waitingFor).as("a finished probe waits for nothing").isNull();
    FleetCircuits.Result fleet = FleetCircuits.step(s.policy, java.util.Map.of("model-api", halfOpen),
        List.of(new FleetCircuits.Member("coder", s.state, false), new FleetCircuits.Member("other", other, false)),
        s.now);
    assertThat(fleet.circuits()).singleElement().satisfies(c -> {
      assertThat(c.state()).isEqualTo(CircuitState.HalfOpen);
      assertThat(c.probes()).as("the next waiter probes instead").containsExactly("other");
    });
    // a status written before the fix (Succeeded, still waitingFor) does not hold the circuit either
    InstanceState old = s.state.copy();
    old.waitingFor = "model-api";
    assertThat(FleetCircuits.step(s.policy, java.util.Map.of("model-api", halfOpen),
        List.of(new FleetCircuits.Member("coder", old, false), new FleetCircuits.Member("other", other, false)),
        s.now).circuits().get(0).probes()).containsExactly("other");
  }

  @Test
  void aProbeHealthyForResetAfterIsOneSuccessOneNotice() {
    java.time.Instant[] opened = new java.time.Instant[1];
    AgentSim s = waiting(opened);
    halfOpen(s, opened[0]);
    s.reconcile();
    s.running();
    s.now = s.state.runStartedAt.plus(s.policy.resetAfter());
    Decision healed = s.reconcile();
    assertThat(s.state.waitingFor).isNull();
    assertThat(healed.notices()).filteredOn(n -> n.reason() == EventReason.RestartSucceeded)
        .as("counted once in respawn.restart.attempts{result=succeeded}").singleElement()
        .extracting(Notice::message).asString().contains("probed dependency model-api");
  }

  @Test
  void aRestartRequestWhileWaitingForAnOpenDependencyRestartsNow() {
    AgentSim s = waiting(new java.time.Instant[1]);
    s.now = s.now.plusSeconds(1);
    s.restartRequest = new Request("r-1", "upstream is back for us");
    Decision d = s.reconcile();
    assertThat(d.start()).as("api.md §6: restart now").isPresent();
    assertThat(s.state.phase).isEqualTo(Phase.Starting);
    assertThat(s.state.waitingFor).isNull();
    assertThat(s.state.lastRestart.kind()).isEqualTo(RestartKind.Manual);
  }

  @Test
  void aProbeRestartedByHandStaysTheProbeAndProvesNothingYet() {
    java.time.Instant[] opened = new java.time.Instant[1];
    AgentSim s = waiting(opened);
    DependencyCircuit halfOpen = halfOpen(s, opened[0]);
    s.reconcile();
    s.running();
    s.advance(Duration.ofSeconds(2));
    s.restartRequest = new Request("r-1", null);
    assertThat(s.reconcile().deletePod()).isTrue();
    assertThat(s.reconcile().start()).as("the next reconcile, the pod gone").isPresent();
    s.running();
    assertThat(s.state.waitingFor).isEqualTo("model-api");
    FleetCircuits.Result fleet = FleetCircuits.step(s.policy, java.util.Map.of("model-api", halfOpen),
        List.of(new FleetCircuits.Member("coder", s.state, false)), s.now);
    assertThat(fleet.circuits().get(0).state()).as("not closed by a run that was not healthy for resetAfter")
        .isEqualTo(CircuitState.HalfOpen);
    assertThat(fleet.circuits().get(0).probes()).containsExactly("coder");
  }

  @Test
  void aProbeWhoseStartWasRefusedAndThatIsRestartedByHandStartsAsTheProbe() {
    java.time.Instant[] opened = new java.time.Instant[1];
    AgentSim s = waiting(opened);
    DependencyCircuit halfOpen = halfOpen(s, opened[0]);
    refused(s); // its probe run's pod was refused: it waits for the retry, still CircuitOpen
    assertThat(s.state.phase).isEqualTo(Phase.CircuitOpen);
    s.now = s.now.plusMillis(100);
    s.restartRequest = new Request("r-1", null);
    assertThat(s.reconcile().start()).isPresent();
    assertThat(s.state.waitingFor).as("it runs as the probe").isEqualTo("model-api");
    s.running();
    FleetCircuits.Result fleet = FleetCircuits.step(s.policy, java.util.Map.of("model-api", halfOpen),
        List.of(new FleetCircuits.Member("coder", s.state, false)), s.now);
    assertThat(fleet.circuits().get(0).state()).as("a run of no time proves nothing").isEqualTo(CircuitState.HalfOpen);
  }

  @Test
  void aResumeOfAnInstanceEscalatedByAFailureBlamedOnANowOpenDependencyRestartsNow() {
    AgentSim s = sim(retries(spec, 0)).started();
    s.exit(1, "Error", "upstream model API answered HTTP 503"); // the circuit was still Closed: counted
    assertThat(s.state.phase).isEqualTo(Phase.Escalated);
    assertThat(s.state.lastFailure.dependency()).isEqualTo("model-api");
    java.time.Instant opened = s.now.plusMillis(300);
    s.modelApiOpen(1, opened);
    s.now = opened.plusSeconds(1);
    s.resumeRequest = new Request("go", null);
    Decision d = s.reconcile();
    assertThat(d.start()).as("api.md §6: a new lifecycle, restarted now").isPresent();
    assertThat(s.state.phase).isEqualTo(Phase.Starting);
    assertThat(s.state.waitingFor).isNull();
  }

  @Test
  void aBackoffBlamedOnAClosedCircuitRestartsAsScheduled() {
    AgentSim s = sim(spec).started();
    s.exit(1, "Error", "upstream model API answered HTTP 503");
    s.now = s.state.nextRestartAt;
    assertThat(s.reconcile().start()).isPresent();
    assertThat(s.state.waitingFor).isNull();
  }

  /**
   * README (shared dependencies): a respawn.dev/restart of an agent that waits for the dependency restarts it now,
   * outside the dependency's release; also while the circuit is HalfOpen with another probe, where it runs as no
   * probe and waits for nothing any more.
   */
  @Test
  void aWaiterRestartedByHandDuringHalfOpenRunsOutsideTheDependency() {
    AgentSim s = sim(io.fabric8.kubernetes.client.utils.Serialization.unmarshal("""
        backoff: {type: Exponential, initialDelay: 2s}
        dependencies:
        - name: model-api
          match: {messageContains: ["HTTP 503"]}
        """, AgentRestartPolicySpec.class)).started();
    s.exit(1, "Error", "upstream model API answered HTTP 503");
    Instant opened = s.now.plusMillis(300);
    s.modelApiOpen(1, opened);
    s.now = s.state.nextRestartAt;
    s.reconcile();
    assertThat(s.state.waitingFor).isEqualTo("model-api");
    s.now = opened.plusSeconds(30);
    s.dependencies.put("model-api", new DependencyCircuit("model-api", CircuitState.HalfOpen, 1, opened,
        opened.plusSeconds(30), null, s.now, List.of("other"), List.of(), List.of(), 2, 2));
    assertThat(s.reconcile().start()).as("another instance probes").isEmpty();
    s.advance(Duration.ofSeconds(1));
    s.restartRequest = new Request("r-1", null);
    Decision d = s.reconcile();
    assertThat(d.start()).isPresent();
    assertThat(s.state.waitingFor).as("restarted by a person: it waits for nothing").isNull();
    assertThat(s.state.lastRestart.kind()).isEqualTo(RestartKind.Manual);
  }

  /**
   * README (shared dependencies): a failure counted while the circuit was Closed waits with the others once it opens;
   * its decision shows the wait until the circuit's halfOpenAt and keeps the sequence's maxAttempts.
   */
  @Test
  void aCountedFailureHeldForTheOpenDependencyShowsItsWaitInLastDecision() {
    AgentSim s = sim(io.fabric8.kubernetes.client.utils.Serialization.unmarshal("""
        backoff: {type: Exponential, initialDelay: 2s}
        maxRetries: 4
        dependencies:
        - name: model-api
          match: {messageContains: ["HTTP 503"]}
        """, AgentRestartPolicySpec.class)).started();
    s.exit(1, "Error", "upstream model API answered HTTP 503");
    Instant opened = s.now.plusMillis(300);
    s.modelApiOpen(1, opened);
    s.now = s.state.nextRestartAt;
    s.reconcile();
    assertThat(s.state.lastDecision.reasonCode()).isEqualTo(ReasonCode.DEPENDENCY_CIRCUIT_OPEN);
    assertThat(s.state.lastDecision.maxAttempts()).isEqualTo(4);
    assertThat(s.state.lastDecision.delaySeconds())
        .isEqualTo(Duration.between(s.now, opened.plusSeconds(30)).toMillis() / 1000.0);
  }
}

package dev.respawn.controller;

import static dev.respawn.controller.OperatorFixture.at;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.api.v1alpha1.DependencyStatus;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.sandbox.Run;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A shared dependency's circuit across a fleet of instances (api.md §3 d2, §11), on the mock API server. */
class DependencyScenarioTest extends MockClusterScenario {
  static final String FLEET = """
      backoff: {type: Exponential, initialDelay: 20s, maxDelay: 20s}
      maxRetries: 3
      resetAfter: 1s
      dependencies:
      - name: model-api
        match: {messageContains: ["model API"]}
        failureThreshold: 3
        window: 1m
        openDuration: 1500ms
        probes: 1
        releaseRate: 4
      """;

  static DependencyStatus modelApi(AgentRestartPolicy p) {
    return p.getStatus() == null || p.getStatus().dependencies == null ? null
        : p.getStatus().dependencies.stream().filter(d -> "model-api".equals(d.name)).findFirst().orElse(null);
  }

  @Test
  void theFleetWaitsForTheModelApiAProbeClosesItAndTheRestAreReleasedAtTheRate() {
    f.policy("fleet", FLEET);
    List<String> names = List.of("a0", "a1", "a2", "a3", "a4");
    for (int n = 0; n < names.size(); n++) {
      // one after the other the agents meet the outage; once restarted they run fine
      f.kubelet.script(names.get(n), Run.exit(1, "Error", "upstream model API answered HTTP 503")
          .after(Duration.ofMillis(400 + 400L * n)), Run.runForever());
      f.instance(names.get(n), "fleet");
    }
    // the first two failures are counted as usual (the circuit is still Closed); the third opens it and waits,
    // uncounted
    AgentRestartPolicy open = f.awaitPolicy("fleet", p -> modelApi(p) != null && modelApi(p).state != null
        && modelApi(p).state != CircuitState.Closed);
    assertThat(modelApi(open).trips).isEqualTo(1);
    AgentInstance a2 = f.awaitInstance("a2", i -> i.getStatus().phase == Phase.CircuitOpen
        || (i.getStatus().run != null && i.getStatus().run >= 2));
    assertThat(a2.getStatus().lastFailure.dependency).isEqualTo("model-api");
    assertThat(a2.getStatus().attempt).as("a failure blamed on the open dependency is not the agent's").isZero();
    assertThat(a2.getStatus().history).last().satisfies(r -> assertThat(r.reasonCode)
        .isEqualTo("dependency_circuit_open"));
    for (String late : List.of("a3", "a4")) {
      AgentInstance waiting = f.awaitInstance(late, i -> "model-api".equals(i.getStatus().waitingFor)
          || (i.getStatus().run != null && i.getStatus().run >= 2));
      assertThat(waiting.getStatus().attempt).isZero();
    }
    // the probe (the instance that waited longest) proves it healthy: the circuit closes, the rest are released
    AgentRestartPolicy closed = f.awaitPolicy("fleet", p -> modelApi(p) != null
        && modelApi(p).state == CircuitState.Closed && modelApi(p).closedAt != null);
    Instant closedAt = Instant.parse(modelApi(closed).closedAt);
    Instant halfOpenAt = Instant.parse(modelApi(open).halfOpenAt);
    java.util.Map<String, Instant> started = new java.util.HashMap<>();
    for (String name : names) {
      AgentInstance running = f.awaitInstance(name, i -> at(i, 2, Phase.Running) && i.getStatus().waitingFor == null);
      started.put(name, Instant.parse(running.getStatus().lastRestart.startedAt));
      assertThat(running.getStatus().circuitBreaker.failureCount).as(name).isLessThanOrEqualTo(1);
      assertThat(f.podsEverCreated(name)).as("one restart of %s", name).containsExactly(name + "-1", name + "-2");
    }
    // the two counted before it opened did not restart into the outage after their own 20 s backoff: blamed
    // on the dependency like the others, they waited with the fleet, and the first of them was the probe
    assertThat(f.get("a0").getStatus().history.get(0).reasonCode).isEqualTo("restart_scheduled");
    assertThat(f.get("a1").getStatus().history.get(0).reasonCode).isEqualTo("restart_scheduled");
    List<String> probes = names.stream().filter(n -> started.get(n).isBefore(closedAt)).toList();
    assertThat(probes).as("one probe, the instance that waited longest").containsExactly("a0");
    assertThat(started.get("a0")).as("the probe ran in HalfOpen").isAfterOrEqualTo(halfOpenAt);
    // released in turn, at 4 per second: the k-th (from 0) not before closedAt + k * 262.5 ms (slots 5 % wider
    // than 1 / releaseRate, so that no second holds more than 4)
    List<Instant> released = names.stream().filter(n -> !probes.contains(n)).map(started::get).sorted().toList();
    for (int k = 0; k < released.size(); k++) {
      assertThat(released.get(k)).as("release %d", k).isAfterOrEqualTo(closedAt.plusMillis(262L * k));
    }
    // and as they really happened: never two within less than a slot (a late turn does not catch up)
    for (int k = 1; k < released.size(); k++) {
      assertThat(java.time.Duration.between(released.get(k - 1), released.get(k))).as("between releases %d and %d",
          k - 1, k).isGreaterThanOrEqualTo(java.time.Duration.ofMillis(252));
    }
    await().atMost(OperatorFixture.AT_MOST).untilAsserted(() -> assertThat(f.events("fleet"))
        .filteredOn(e -> "DependencyCircuitChanged".equals(e.getReason())).extracting(e -> e.getNote())
        .anySatisfy(n -> assertThat(n).contains("Closed -> Open"))
        .anySatisfy(n -> assertThat(n).contains("Open -> HalfOpen"))
        .anySatisfy(n -> assertThat(n).contains("HalfOpen -> Closed")));
  }

  /**
   * Three agents meet the outage at the same moment: each decides before the policy's status counts the others, so
   * each counts its failure; once the circuit shows Open, the failure that reached the threshold is taken back out
   * of its count (§3 d2 "or that this very failure opens"): two counted, as if they had come one after the other.
   */
  /**
   * §11 closes a circuit on a healthy probe only. Its waiters deleted, it goes HalfOpen with no probe, and stays so;
   * the next agent blamed on it waits, uncounted, and is the probe that closes it.
   */
  @Test
  void aCircuitWhoseWaitersAreGoneClosesOnlyOnTheNextAgentsHealthyProbe() {
    f.policy("lonely", """
        backoff: {type: Exponential, initialDelay: 20s, maxDelay: 20s}
        resetAfter: 1s
        dependencies:
        - name: model-api
          match: {messageContains: ["model API"]}
          failureThreshold: 2
          openDuration: 1500ms
        """);
    for (String name : List.of("w0", "w1")) {
      f.kubelet.script(name, Run.exit(1, "Error", "upstream model API answered HTTP 503")
          .after(Duration.ofMillis(300)), Run.runForever());
      f.instance(name, "lonely");
    }
    f.awaitPolicy("lonely", p -> modelApi(p) != null && modelApi(p).state == CircuitState.Open);
    for (String name : List.of("w0", "w1")) {
      f.client.resources(AgentInstance.class).inNamespace(OperatorFixture.NS).withName(name).delete();
    }
    AgentRestartPolicy half = f.awaitPolicy("lonely", p -> modelApi(p) != null
        && modelApi(p).state == CircuitState.HalfOpen);
    assertThat(modelApi(half).probes).isEmpty();
    assertThat(modelApi(half).waiting).isZero();
    // the upstream may still be down: the next agent blamed on it waits, and probes it at once
    f.kubelet.script("late", Run.exit(1, "Error", "upstream model API answered HTTP 503")
        .after(Duration.ofMillis(300)), Run.runForever());
    f.instance("late", "lonely");
    AgentRestartPolicy closed = f.awaitPolicy("lonely", p -> modelApi(p) != null
        && modelApi(p).state == CircuitState.Closed);
    assertThat(modelApi(closed).trips).isEqualTo(1);
    AgentInstance late = f.awaitInstance("late", i -> at(i, 2, Phase.Running));
    assertThat(late.getStatus().attempt).as("blamed on the HalfOpen dependency: not the agent's failure").isZero();
    assertThat(late.getStatus().history).singleElement().satisfies(r -> assertThat(r.reasonCode)
        .isEqualTo("dependency_circuit_open"));
    assertThat(Instant.parse(late.getStatus().lastRestart.startedAt))
        .as("probed at once, not after its 20 s backoff").isBefore(Instant.parse(late.getStatus().history.get(0)
            .endedAt).plusSeconds(5));
  }

  @Test
  void agentsThatFailAtOnceCountOnlyTheFailuresBeforeTheOneThatOpenedTheCircuit() {
    f.policy("fleet", FLEET);
    List<String> names = List.of("b0", "b1", "b2");
    for (String name : names) {
      f.kubelet.script(name, Run.exit(1, "Error", "upstream model API answered HTTP 503").after(Duration.ofMillis(800)),
          Run.runForever());
      f.instance(name, "fleet");
    }
    AgentRestartPolicy open = f.awaitPolicy("fleet",
        p -> modelApi(p) != null && modelApi(p).state == CircuitState.Open);
    java.util.Map<String, Integer> attempts = new java.util.TreeMap<>();
    for (String name : names) {
      AgentInstance waiting = f.awaitInstance(name, i -> "model-api".equals(i.getStatus().waitingFor)
          && i.getStatus().phase == Phase.CircuitOpen);
      attempts.put(name, waiting.getStatus().attempt);
    }
    await().atMost(OperatorFixture.AT_MOST).untilAsserted(() -> {
      int total = 0;
      for (String name : names) {
        total += f.get(name).getStatus().attempt;
      }
      assertThat(total).as("attempts %s, circuit opened at %s", attempts, modelApi(open).openedAt).isEqualTo(2);
    });
    AgentInstance opener = names.stream().map(f::get).filter(i -> i.getStatus().attempt == 0).findFirst().orElseThrow();
    assertThat(opener.getStatus().circuitBreaker.failureCount).isZero();
    assertThat(opener.getStatus().history).last().satisfies(r -> assertThat(r.reasonCode)
        .isEqualTo("dependency_circuit_open"));
  }

  @Test
  void statusShowsEveryFieldOfACircuitProbesAsAnEmptyListAndWritesItOnce() {
    f.policy("fleet", FLEET);
    AgentRestartPolicy p = f.awaitPolicy("fleet", x -> modelApi(x) != null);
    var shown = io.fabric8.kubernetes.client.utils.Serialization.jsonMapper().valueToTree(p.getStatus())
        .path("dependencies").get(0);
    assertThat(shown.path("probes").isArray()).as("probes in %s (api.md §11 shows probes: [])", shown).isTrue();
    assertThat(shown.path("probes")).isEmpty();
    for (String field : List.of("blamed", "waiting", "trips")) {
      assertThat(shown.has(field)).as("%s in %s", field, shown).isTrue();
    }
    // nothing changes afterwards: the [] shown is no reason to write the status again
    f.stopOperator();
    f.api.requests().clear();
    f.startOperator();
    f.awaitPoliciesJudged(1); // it looked at the policy
    await("no policy write of a restarted operator").during(Duration.ofMillis(1500)).atMost(Duration.ofSeconds(3))
        .until(() -> f.operatorWrites().stream().noneMatch(r -> r.path().contains("agentrestartpolicies")));
    // and it was there to write: an edit of the policy is answered (it had listed the policy at its start)
    long edited = f.editPolicy("fleet", x -> {
      x.getSpec().maxRetries = 7;
      return x;
    }).getMetadata().getGeneration();
    f.awaitPolicy("fleet", x -> Long.valueOf(edited).equals(x.getStatus().observedGeneration));
  }

  @Test
  void aRestartedOperatorWritesNothingForAPolicyWhoseOnlyBlameAgedOut() {
    f.policy("fleet", """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 100ms}
        resetAfter: 30m
        dependencies:
        - name: model-api
          match: {messageContains: ["model API"]}
          failureThreshold: 3
          window: 1s
        """);
    f.kubelet.script("a0", Run.exit(1, "Error", "upstream model API answered HTTP 503")
        .after(Duration.ofMillis(200)), Run.runForever());
    f.instance("a0", "fleet");
    f.awaitInstance("a0", i -> at(i, 2, Phase.Running));
    f.awaitPolicy("fleet", p -> modelApi(p) != null && modelApi(p).blamed != null && modelApi(p).blamed == 1);
    Instant failed = Instant.parse(f.get("a0").getStatus().lastFailure.at);
    await().atMost(OperatorFixture.AT_MOST).until(() -> Instant.now().isAfter(failed.plusMillis(1500)));
    f.stopOperator();
    f.api.requests().clear();
    f.startOperator();
    f.awaitDecisions(1); // it looked at a0
    f.awaitPoliciesJudged(1); // and at its policy
    // the blame left the window while nobody looked: time passing, no write (api.md §12)
    await("no write of a restarted operator").during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(3))
        .until(() -> f.operatorWrites().isEmpty());
  }

  /**
   * An edit the schema should have refused (a cluster that skipped validation) refuses the policy and restarts
   * nothing (api.md §9); the shared circuit it had is kept as it was, not wiped: bad input loses nothing.
   */
  @Test
  void anInvalidEditKeepsTheOpenCircuitAndTheFixedPolicyGoesOnFromIt() {
    f.policy("fleet", FLEET.replace("openDuration: 1500ms", "openDuration: 1h").replace("failureThreshold: 3",
        "failureThreshold: 1"));
    f.kubelet.script("c0", Run.exit(1, "Error", "upstream model API answered HTTP 503")
        .after(Duration.ofMillis(200)), Run.runForever());
    f.instance("c0", "fleet");
    AgentRestartPolicy open = f.awaitPolicy("fleet", p -> modelApi(p) != null && modelApi(p).state == CircuitState.Open);
    f.awaitInstance("c0", i -> i.getStatus().phase == Phase.CircuitOpen);
    f.editPolicy("fleet", p -> {
      p.getSpec().maxRetries = 5000; // beyond the bound of 1000
      return p;
    });
    AgentRestartPolicy refused = f.awaitPolicy("fleet", p -> p.getStatus().conditions.stream()
        .anyMatch(c -> "Accepted".equals(c.type) && "InvalidSpec".equals(c.reason)));
    assertThat(modelApi(refused)).as("the circuit while the policy is refused").isNotNull()
        .satisfies(d -> {
          assertThat(d.state).isEqualTo(CircuitState.Open);
          assertThat(d.trips).isEqualTo(1);
          assertThat(d.openedAt).isEqualTo(modelApi(open).openedAt);
        });
    assertThat(refused.getStatus().conditions).anySatisfy(c -> {
      assertThat(c.type).isEqualTo(DependencyConditions.TYPE);
      assertThat(c.status).isEqualTo("True");
    });
    // the kept circuit is counted (the refusing reconcile tells the gauge right after its status write)
    f.holdsFor(Duration.ofMillis(500), () -> dependencyGauge("Open"), open1 -> open1 == 1);
    f.editPolicy("fleet", p -> {
      p.getSpec().maxRetries = 3;
      return p;
    });
    AgentRestartPolicy fixed = f.awaitPolicy("fleet", p -> p.getStatus().conditions.stream()
        .anyMatch(c -> "Accepted".equals(c.type) && "True".equals(c.status)));
    assertThat(modelApi(fixed).state).isEqualTo(CircuitState.Open);
    assertThat(modelApi(fixed).halfOpenAt).isEqualTo(modelApi(open).halfOpenAt);
    assertThat(f.get("c0").getStatus().phase).as("still waiting for the hour").isEqualTo(Phase.CircuitOpen);
    assertThat(f.podsEverCreated("c0")).containsExactly("c0-1");
  }

  private double dependencyGauge(String state) {
    return f.metrics.registry().get("respawn.dependency.circuits").tag("state", state).gauge().value();
  }

  @Test
  void aDependencyDroppedFromItsPolicyOrAPolicyDeletedLeavesNoGauge() {
    f.policy("fleet", FLEET);
    f.policy("other", FLEET);
    await().atMost(OperatorFixture.AT_MOST).until(() -> dependencyGauge("Closed") == 2);
    f.editPolicy("fleet", p -> {
      p.getSpec().dependencies = null;
      return p;
    });
    await().atMost(OperatorFixture.AT_MOST).until(() -> dependencyGauge("Closed") == 1);
    f.client.resources(AgentRestartPolicy.class).inNamespace(OperatorFixture.NS).withName("other").delete();
    await().atMost(OperatorFixture.AT_MOST).until(() -> dependencyGauge("Closed") == 0);
    assertThat(f.metrics.registry().get("respawn.dependency.waiting").gauge().value()).isZero();
  }

  @Test
  void anOperatorRestartedWhileTheCircuitIsOpenLosesNothingAndStartsNothingEarly() {
    f.policy("fleet", FLEET.replace("openDuration: 1500ms", "openDuration: 3s"));
    List<String> names = List.of("b0", "b1", "b2", "b3");
    for (int n = 0; n < names.size(); n++) {
      f.kubelet.script(names.get(n), Run.exit(1, "Error", "upstream model API answered HTTP 503")
          .after(Duration.ofMillis(300 + 300L * n)), Run.runForever());
      f.instance(names.get(n), "fleet");
    }
    AgentRestartPolicy open = f.awaitPolicy("fleet", p -> modelApi(p) != null && modelApi(p).state == CircuitState.Open
        && modelApi(p).waiting != null && modelApi(p).waiting >= 2);
    Instant halfOpenAt = Instant.parse(modelApi(open).halfOpenAt);
    for (String name : List.of("b2", "b3")) {
      f.awaitInstance(name, i -> at(i, 1, Phase.CircuitOpen));
    }
    f.restartOperator();
    // the new process reads the circuit from status: the waiting instances stay put until halfOpenAt
    f.holdsFor(Duration.ofMillis(800), () -> List.of(f.get("b2"), f.get("b3")),
        l -> l.stream().allMatch(i -> i.getStatus().run == 1 && i.getStatus().phase == Phase.CircuitOpen));
    AgentRestartPolicy closed = f.awaitPolicy("fleet", p -> modelApi(p) != null
        && modelApi(p).state == CircuitState.Closed && modelApi(p).closedAt != null);
    assertThat(modelApi(closed).trips).as("the open circuit was not forgotten nor opened twice").isEqualTo(1);
    for (String name : List.of("b2", "b3")) {
      AgentInstance running = f.awaitInstance(name, i -> at(i, 2, Phase.Running) && i.getStatus().waitingFor == null);
      assertThat(Instant.parse(running.getStatus().lastRestart.startedAt)).as("nothing before the probe time")
          .isAfterOrEqualTo(halfOpenAt);
      assertThat(running.getStatus().attempt).isZero();
    }
    assertThat(f.podsEverCreated("b2")).containsExactly("b2-1", "b2-2");
    assertThat(f.podsEverCreated("b3")).containsExactly("b3-1", "b3-2");
  }

  /**
   * Five agents of a policy released one a second that meet the outage 300 ms apart, then run fine: the first
   * probes, the other four wait for the release.
   */
  private List<String> slowReleaseFleet(String prefix) {
    f.policy("fleet", FLEET.replace("resetAfter: 1s", "resetAfter: 2s").replace("releaseRate: 4", "releaseRate: 1"));
    List<String> names = java.util.stream.IntStream.range(0, 5).mapToObj(n -> prefix + n).toList();
    for (int n = 0; n < names.size(); n++) {
      f.kubelet.script(names.get(n), Run.exit(1, "Error", "upstream model API answered HTTP 503")
          .after(Duration.ofMillis(300 + 300L * n)), Run.runForever());
      f.instance(names.get(n), "fleet");
    }
    return names;
  }

  @Test
  void anOperatorRestartedWhileProbingAndWhileReleasingStartsNoSecondProbeAndReleasesNothingEarly() {
    List<String> names = slowReleaseFleet("c");
    f.awaitPolicy("fleet", p -> modelApi(p) != null && modelApi(p).state == CircuitState.HalfOpen);
    f.restartOperator(); // while the probe runs
    AgentRestartPolicy closed = f.awaitPolicy("fleet", p -> modelApi(p) != null
        && modelApi(p).state == CircuitState.Closed && modelApi(p).closedAt != null);
    assertThat(modelApi(closed).trips).isEqualTo(1);
    List<String> order = modelApi(closed).releaseOrder;
    assertThat(order).as("the waiting instances, in the order they failed").isNotEmpty();
    f.restartOperator(); // while releasing, one per second
    Instant closedAt = Instant.parse(modelApi(closed).closedAt);
    for (int k = 0; k < order.size(); k++) {
      String name = order.get(k);
      AgentInstance running = f.awaitInstance(name, i -> at(i, 2, Phase.Running) && i.getStatus().waitingFor == null);
      assertThat(Instant.parse(running.getStatus().lastRestart.startedAt)).as("release %d of %s", k, name)
          .isAfterOrEqualTo(closedAt.plusSeconds(k));
      assertThat(f.podsEverCreated(name)).as("one restart of %s", name).hasSize(2);
    }
    // the probe ran once, however many operators watched it
    String probe = names.stream().filter(n -> !order.contains(n)).findFirst().orElseThrow();
    assertThat(order).as("every other instance blamed on it waited, the ones counted before it opened too")
        .hasSize(names.size() - 1);
    f.holdsFor(Duration.ofMillis(500), () -> f.podsEverCreated(probe), pods -> pods.size() == 2);
  }

  @Test
  void anOperatorThatWasDownThroughTheReleaseTurnsStillReleasesInTheOrderTheyFailed() {
    List<String> names = slowReleaseFleet("d");
    AgentRestartPolicy closed = f.awaitPolicy("fleet", p -> modelApi(p) != null
        && modelApi(p).state == CircuitState.Closed && modelApi(p).closedAt != null);
    f.stopOperator();
    List<String> order = modelApi(closed).releaseOrder;
    assertThat(order).hasSize(names.size() - 1);
    // every turn has come while no operator ran: the next one finds them all due at once
    Instant allDue = Instant.parse(modelApi(closed).closedAt).plusMillis(1050L * order.size());
    await().atMost(OperatorFixture.AT_MOST).until(() -> Instant.now().isAfter(allDue));
    f.startOperator();
    List<Instant> started = new java.util.ArrayList<>();
    for (String name : order) {
      f.awaitInstance(name, i -> at(i, 2, Phase.Running) && i.getStatus().waitingFor == null);
      // when the operator made the pod (its own clock, the pod's annotation): the order of the creates
      started.add(Instant.parse(f.pod(name + "-2").getMetadata().getAnnotations().get(AgentInstance.STARTED_AT_ANNOTATION)));
    }
    // api.md §11: in the order they failed, at most releaseRate per second, also across an operator restart
    for (int k = 1; k < started.size(); k++) {
      assertThat(started.get(k)).as("%s after %s", order.get(k), order.get(k - 1)).isAfter(started.get(k - 1));
    }
  }
}

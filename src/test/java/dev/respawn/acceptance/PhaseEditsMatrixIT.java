package dev.respawn.acceptance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Phases x spec.suspend, policy edits, template edits, policyRef switches and policy deletion. */
class PhaseEditsMatrixIT extends PhaseMatrixScenario {


  Duration untilPast(JsonNode status, long extraSeconds) {
    Instant at = Instant.parse(text(status.path("nextRestartAt")));
    Duration d = Duration.between(Instant.now(), at.plusSeconds(extraSeconds));
    return d.isNegative() ? Duration.ofSeconds(1) : d;
  }

  // ------------------------------------------------------------------ spec.suspend: true, then false

  @ParameterizedTest(name = "suspend then unsuspend in {0}")
  @ValueSource(strings = {"Starting", "Running", "Backoff", "CircuitOpenOwn", "CircuitOpenDep"})
  void suspendThenUnsuspend(String phase) {
    String i = "s";
    int run = drive(phase, i);
    JsonNode before = status(i);
    suspend(i, true);
    JsonNode s = awaitPhase(i, "Suspended");
    assertThat(text(s.path("terminalReason"))).isEqualTo("OperatorShutdown");
    await().atMost(PATIENCE).until(() -> pod(pod(i, run)) == null || !isLive(pod(pod(i, run))));
    holdsFor(Duration.ofSeconds(2), () -> pod(pod(i, run + 1)) == null);
    suspend(i, false);
    switch (phase) {
      case "CircuitOpenOwn" -> {
        // README: clearing suspend with the breaker Open -> the run is the HalfOpen trial, it waits until
        // openedAt + openDuration (60 s ahead)
        s = awaitPhase(i, "CircuitOpen");
        holdsFor(Duration.ofSeconds(3), () -> pod(pod(i, run + 1)) == null);
        assertThat(text(status(i).path("circuitBreaker").path("state"))).isEqualTo("Open");
        assertThat(status(i).path("attempt").asInt()).isEqualTo(before.path("attempt").asInt());
      }
      case "CircuitOpenDep" -> {
        // README: unsuspended while the dependency is still Open -> waits again, in its place
        s = awaitStatus(i, x -> "CircuitOpen".equals(text(x.path("phase")))
            && "model-api".equals(text(x.path("waitingFor"))));
        holdsFor(Duration.ofSeconds(3), () -> pod(pod(i, run + 1)) == null);
        assertThat(status(i).path("attempt").asInt()).isZero();
      }
      default -> {
        // README: clearing spec.suspend starts a fresh run at once (not a failure)
        try {
          await().atMost(Duration.ofSeconds(10)).until(() -> pod(pod(i, run + 1)) != null);
        } catch (RuntimeException e) {
          throw new AssertionError("no fresh run at once after unsuspend; " + describe(i), e);
        }
        startRun(i, pod(i, run + 1));
        s = status(i);
        assertThat(text(s.path("terminalReason"))).isEmpty();
        assertThat(s.path("attempt").asInt()).as("unsuspend is not a failure")
            .isLessThanOrEqualTo(before.path("attempt").asInt());
      }
    }
  }

  /** Suspend and a restart request in one edit: suspension first; the request is refused with a Warning. */
  @ParameterizedTest(name = "suspend + restart in one edit in {0}")
  @ValueSource(strings = {"Running", "Backoff"})
  void suspendAndRestartRequestInOneEdit(String phase) {
    String i = "q";
    int run = drive(phase, i);
    var warningsBefore = warningKeys(i);
    editInstance(i, spec -> spec.put("suspend", true), Map.of(RESTART, "with-suspend"));
    JsonNode s = awaitPhase(i, "Suspended");
    s = awaitStatus(i, x -> "with-suspend".equals(text(x.path("refusedRequests").path("restart").path("id"))));
    await().atMost(Duration.ofSeconds(10)).until(() -> !warningsBefore.containsAll(warningKeys(i)));
    holdsFor(Duration.ofSeconds(3), () -> pod(pod(i, run + 1)) == null && "Suspended".equals(phase(i)));
    suspend(i, false);
    startRun(i, pod(i, run + 1));
    holdsFor(Duration.ofSeconds(2), () -> pod(pod(i, run + 2)) == null);
    assertThat(text(status(i).path("lastRestart").path("requestId"))).as("the refused request is not acted on later")
        .isNotEqualTo("with-suspend");
  }

  /** README: a resume works "in the decision that clears spec.suspend". */
  @Test
  void resumeInTheEditThatClearsSuspend() {
    drive("Suspended", "u");
    editInstance("u", spec -> spec.put("suspend", false), Map.of(RESUME, "back"));
    startRun("u", "u-2");
    JsonNode s = awaitStatus("u", x -> "back".equals(text(x.path("handledRequests").path("resume"))));
    assertThat(text(s.path("refusedRequests").path("resume").path("id"))).isNotEqualTo("back");
    holdsFor(Duration.ofSeconds(2), () -> pod("u-3") == null);
  }

  // ------------------------------------------------------------------ policy edits

  /** A policy edit that would un-escalate (maxRetries raised above the attempt) restarts nothing. */
  @Test
  void raisingMaxRetriesDoesNotUnEscalate() {
    drive("Escalated", "x");
    cluster.editPolicySpec(ns, "p", spec -> spec.put("maxRetries", 5));
    holdsFor(Duration.ofSeconds(4), () -> pod("x-2") == null && "Escalated".equals(phase("x")));
    assertThat(text(status("x").path("terminalReason"))).isEqualTo("RestartLimitExceeded");
    cluster.annotate(ns, "x", RESUME, "go");
    startRun("x", "x-2");
  }

  /** README "Choices": a policy edited while an instance waits keeps the wait it decided. */
  @Test
  void backoffEditDuringBackoffKeepsTheWait() {
    drive("Backoff", "b");
    String next = text(status("b").path("nextRestartAt"));
    cluster.editPolicySpec(ns, "p", spec -> spec.put("backoff", Map.of("type", "Immediate")));
    holdsFor(Duration.ofSeconds(4), () -> pod("b-2") == null && next.equals(text(status("b").path("nextRestartAt"))));
    assertThat(phase("b")).isEqualTo("Backoff");
  }

  /** README: the HalfOpen trial time of the instance's own circuit is kept across a policy edit. */
  @Test
  void openDurationEditDuringOwnCircuitOpenKeepsTheTrialTime() {
    drive("CircuitOpenOwn", "c");
    String next = text(status("c").path("nextRestartAt"));
    cluster.editPolicySpec(ns, "p", spec -> spec.put("circuitBreaker",
        Map.of("failureThreshold", 1, "window", "10m", "openDuration", "1s")));
    holdsFor(Duration.ofSeconds(4), () -> pod("c-2") == null && next.equals(text(status("c").path("nextRestartAt"))));
  }

  /** README: a dependency removed releases its waiters at once. */
  @Test
  void removingTheDependencyReleasesItsWaiter() {
    drive("CircuitOpenDep", "w");
    cluster.editPolicySpec(ns, "p", spec -> spec.remove("dependencies"));
    try {
      await().atMost(Duration.ofSeconds(15)).until(() -> pod("w-2") != null);
    } catch (RuntimeException e) {
      throw new AssertionError("waiter not released when its dependency was removed; " + describe("w"), e);
    }
    startRun("w", "w-2");
    JsonNode s = status("w");
    assertThat(text(s.path("waitingFor"))).isEmpty();
    assertThat(s.path("attempt").asInt()).isZero();
  }

  // ------------------------------------------------------------------ template edits

  @Test
  void templateEditWhileRunningRestartsNothing() {
    drive("Running", "t");
    setImage("t", "example/agent:2");
    long gen = cluster.instance(ns, "t").getMetadata().getGeneration();
    awaitStatus("t", x -> x.path("observedGeneration").asLong() >= gen);
    holdsFor(Duration.ofSeconds(3), () -> pod("t-2") == null && !goneOrDeleting("t-1"));
    assertThat(phase("t")).isEqualTo("Running");
  }

  @Test
  void templateEditDuringBackoffKeepsTheWaitAndAppliesToTheNextRun() {
    policy("p", BASE.replace("initialDelay: 30s", "initialDelay: 6s"));
    instance("t", "p");
    startRun("t", "t-1");
    kubelet.terminated(ns, "t-1", 1, "Error", BOOM);
    JsonNode s = awaitPhase("t", "Backoff");
    String next = text(s.path("nextRestartAt"));
    setImage("t", "example/agent:2");
    long gen = cluster.instance(ns, "t").getMetadata().getGeneration();
    awaitStatus("t", x -> x.path("observedGeneration").asLong() >= gen);
    assertThat(text(status("t").path("nextRestartAt"))).isEqualTo(next);
    awaitPod("t-2");
    assertThat(Instant.now()).as("not before nextRestartAt").isAfterOrEqualTo(Instant.parse(next).minusMillis(500));
    assertThat(pod("t-2").getSpec().getContainers().get(0).getImage()).isEqualTo("example/agent:2");
  }

  /** An instance spec the operator refuses (agentContainer names no container) restarts nothing. */
  @Test
  void invalidSpecDuringBackoffStartsNothing() {
    policy("p", BASE.replace("initialDelay: 30s", "initialDelay: 3s"));
    instance("v", "p");
    startRun("v", "v-1");
    kubelet.terminated(ns, "v-1", 1, "Error", BOOM);
    JsonNode s = awaitPhase("v", "Backoff");
    cluster.editInstanceSpec(ns, "v", spec -> spec.put("agentContainer", "nope"));
    awaitStatus("v", x -> readyReason(x).endsWith("/InvalidSpec"));
    holdsFor(untilPast(s, 3), () -> pod("v-2") == null);
    cluster.editInstanceSpec(ns, "v", spec -> spec.remove("agentContainer"));
    startRun("v", "v-2");
  }

  // ------------------------------------------------------------------ policyRef switch

  @Test
  void policyRefSwitchDuringBackoffKeepsTheWait() {
    drive("Backoff", "r");
    policy("q", "backoff: {type: Immediate}\nmaxRetries: 9\nresume: {mode: 'Off'}");
    String next = text(status("r").path("nextRestartAt"));
    cluster.editInstanceSpec(ns, "r", spec -> spec.put("policyRef", Map.of("name", "q")));
    holdsFor(Duration.ofSeconds(4), () -> pod("r-2") == null && next.equals(text(status("r").path("nextRestartAt"))));
  }

  @Test
  void policyRefSwitchToAMissingPolicyWhileRunningLeavesTheRun() {
    drive("Running", "r");
    cluster.editInstanceSpec(ns, "r", spec -> spec.put("policyRef", Map.of("name", "missing")));
    awaitStatus("r", x -> readyReason(x).equals("False/PolicyNotFound"));
    holdsFor(Duration.ofSeconds(3), () -> !goneOrDeleting("r-1") && pod("r-2") == null);
  }

  // ------------------------------------------------------------------ policy deletion

  @Test
  void policyDeletedDuringBackoffStartsNothingUntilItIsBack() {
    policy("p", BASE.replace("initialDelay: 30s", "initialDelay: 3s"));
    instance("k", "p");
    startRun("k", "k-1");
    kubelet.terminated(ns, "k-1", 1, "Error", BOOM);
    JsonNode s = awaitPhase("k", "Backoff");
    deletePolicy("p");
    awaitStatus("k", x -> readyReason(x).equals("False/PolicyNotFound"));
    holdsFor(untilPast(s, 3), () -> pod("k-2") == null);
    policy("p", BASE.replace("initialDelay: 30s", "initialDelay: 3s"));
    startRun("k", "k-2");
  }

  @Test
  void policyDeletedWhileRunningLeavesTheRunAndDecidesItsEndOnceBack() {
    drive("Running", "k");
    deletePolicy("p");
    awaitStatus("k", x -> readyReason(x).equals("False/PolicyNotFound"));
    holdsFor(Duration.ofSeconds(2), () -> !goneOrDeleting("k-1"));
    kubelet.terminated(ns, "k-1", 1, "Error", BOOM);
    holdsFor(Duration.ofSeconds(3), () -> pod("k-2") == null);
    policy("p", BASE.replace("initialDelay: 30s", "initialDelay: 1s"));
    JsonNode s = awaitFailureOf("k", "k-1");
    assertThat(s.path("attempt").asInt()).isEqualTo(1);
    startRun("k", "k-2");
  }

  /**
   * Policy gone while Escalated: nothing starts; a resume sent meanwhile waits, neither acted on nor refused, and is
   * acted on once the policy is back (README "Annotations on an AgentInstance").
   */
  @Test
  void policyDeletedInEscalatedThenResume() {
    drive("Escalated", "z");
    deletePolicy("p");
    cluster.annotate(ns, "z", RESUME, "while-missing");
    holdsFor(Duration.ofSeconds(4), () -> pod("z-2") == null
        && !"while-missing".equals(text(status("z").path("refusedRequests").path("resume").path("id"))));
    policy("p", BASE);
    await().atMost(Duration.ofSeconds(15)).until(() -> pod("z-2") != null);
    JsonNode s = awaitStatus("z", x -> "while-missing".equals(text(x.path("handledRequests").path("resume"))));
    assertThat(text(s.path("refusedRequests").path("resume").path("id"))).as("%s", s).isNotEqualTo("while-missing");
    assertThat(s.path("attempt").asInt()).as("a new lifecycle").isZero();
  }

  /**
   * A restart request while the policy is missing: the run is left alone and nothing starts; once the policy is back
   * the request is acted on, once (README).
   */
  @Test
  void restartRequestWhilePolicyMissing() {
    drive("Running", "y");
    deletePolicy("p");
    awaitStatus("y", x -> readyReason(x).equals("False/PolicyNotFound"));
    cluster.annotate(ns, "y", RESTART, "while-missing");
    holdsFor(Duration.ofSeconds(4), () -> pod("y-2") == null && !goneOrDeleting("y-1")
        && !"while-missing".equals(text(status("y").path("refusedRequests").path("restart").path("id"))));
    policy("p", BASE);
    await().atMost(Duration.ofSeconds(15)).until(() -> pod("y-2") != null);
    JsonNode s = awaitStatus("y", x -> "while-missing".equals(text(x.path("handledRequests").path("restart"))));
    assertThat(text(s.path("refusedRequests").path("restart").path("id"))).as("%s", s).isNotEqualTo("while-missing");
    assertThat(s.path("attempt").asInt()).as("not a failure").isZero();
  }
}

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

/**
 * Phases x the plugin's requests, full restart windows, shorter dependency waits, terminal phases, restart and resume
 * in one edit, an invalid spec while running, a policy re-made while its dependency waits.
 */
class PhaseInputsMatrixIT extends PhaseMatrixScenario {


  Duration untilPast(JsonNode status, long extraSeconds) {
    Instant at = Instant.parse(text(status.path("nextRestartAt")));
    Duration d = Duration.between(Instant.now(), at.plusSeconds(extraSeconds));
    return d.isNegative() ? Duration.ofSeconds(1) : d;
  }

  // ------------------------------------------------------------------ the plugin

  @Test
  void pluginRestartInEscalatedWarnsAndIsRefused() throws Exception {
    drive("Escalated", "pe");
    var r = plugin.run("restart", "pe", "-n", ns, "--reason", "try", "--request-id", "cli-esc", "-o", "json");
    assertThat(r.exitCode()).as(r.out() + r.err()).isZero();
    assertThat(r.err()).contains("Warning:");
    assertThat(r.out()).contains("\"warning\"");
    awaitStatus("pe", x -> "cli-esc".equals(text(x.path("refusedRequests").path("restart").path("id"))));
    holdsFor(Duration.ofSeconds(2), () -> pod("pe-2") == null);
  }

  @Test
  void pluginResumeInBackoffWarnsAndIsRefused() throws Exception {
    drive("Backoff", "pb");
    String next = text(status("pb").path("nextRestartAt"));
    var r = plugin.run("resume", "pb", "-n", ns, "--force", "--request-id", "cli-bo", "-o", "json");
    assertThat(r.exitCode()).as(r.out() + r.err()).isZero();
    assertThat(r.err()).contains("Warning:");
    awaitStatus("pb", x -> "cli-bo".equals(text(x.path("refusedRequests").path("resume").path("id"))));
    holdsFor(Duration.ofSeconds(2), () -> pod("pb-2") == null && next.equals(text(status("pb").path("nextRestartAt"))));
  }

  @Test
  void pluginRestartWaitInDependencyWaitActs() throws Exception {
    drive("CircuitOpenDep", "pd");
    var started = new java.util.concurrent.atomic.AtomicBoolean();
    Thread k = new Thread(() -> {
      await().atMost(PATIENCE).until(() -> pod("pd-2") != null);
      kubelet.running(ns, "pd-2");
      started.set(true);
    });
    k.start();
    var r = plugin.run("restart", "pd", "-n", ns, "--reason", "by-hand", "--wait", "--timeout", "30s", "-o", "json");
    assertThat(r.exitCode()).as(r.out() + r.err()).isZero();
    assertThat(r.err()).doesNotContain("Warning:");
    assertThat(r.out()).contains("\"restarted\"");
    assertThat(started.get()).isTrue();
  }

  /** Two pipelines: the plugin with an id status shows refused reports it refused (exit 1), sends nothing. */
  @Test
  void pluginRepeatOfARefusedIdReportsRefused() throws Exception {
    drive("Succeeded", "ps");
    cluster.annotate(ns, "ps", RESTART, "rid");
    awaitStatus("ps", x -> "rid".equals(text(x.path("refusedRequests").path("restart").path("id"))));
    var r = plugin.run("restart", "ps", "-n", ns, "--reason", "again", "--request-id", "rid", "-o", "json");
    assertThat(r.exitCode()).as(r.out() + r.err()).isEqualTo(1);
    assertThat(r.out() + r.err()).contains("refused");
  }

  /** Pending (policy missing): suspending needs no policy; unsuspended, the first run waits for the policy. */
  @Test
  void suspendInPendingThenUnsuspendAndThePolicyArrives() {
    drive("Pending", "n");
    suspend("n", true);
    JsonNode s = awaitPhase("n", "Suspended");
    assertThat(text(s.path("terminalReason"))).isEqualTo("OperatorShutdown");
    suspend("n", false);
    holdsFor(Duration.ofSeconds(3), () -> pod("n-1") == null);
    policy("p", BASE);
    startRun("n", "n-1");
  }

  /** README: a manual restart that would end a live run with restartLimit's window full is refused; in Backoff
   * it only skips the wait for a restart that is due anyway, and is acted on. */
  @Test
  void restartRequestAgainstAFullRestartWindow() {
    policy("p", BASE + "restartLimit: {maxRestarts: 2, window: 1h}\n");
    instance("l", "p");
    startRun("l", "l-1");
    cluster.annotate(ns, "l", RESTART, "r1");
    startRun("l", "l-2");
    kubelet.terminated(ns, "l-2", 1, "Error", BOOM);
    awaitPhase("l", "Backoff");
    cluster.annotate(ns, "l", RESTART, "r2");
    try {
      await().atMost(Duration.ofSeconds(10)).until(() -> pod("l-3") != null);
    } catch (RuntimeException e) {
      throw new AssertionError("restart in Backoff not acted on; " + describe("l"), e);
    }
    startRun("l", "l-3");
    var warningsBefore = warningKeys("l");
    cluster.annotate(ns, "l", RESTART, "r3");
    awaitStatus("l", x -> "r3".equals(text(x.path("refusedRequests").path("restart").path("id"))));
    await().atMost(Duration.ofSeconds(10)).until(() -> !warningsBefore.containsAll(warningKeys("l")));
    holdsFor(Duration.ofSeconds(3), () -> pod("l-4") == null && !goneOrDeleting("l-3"));
    assertThat(phase("l")).isEqualTo("Running");
  }

  /** README: a restart of an agent waiting for a dependency with its restartLimit window full is refused with a
   * Warning, and it waits as before. */
  @Test
  void restartInDependencyWaitWithAFullWindowIsRefused() {
    policy("p", policyFor("CircuitOpenDep") + "restartLimit: {maxRestarts: 1, window: 1h}\n");
    instance("f", "p");
    startRun("f", "f-1");
    cluster.annotate(ns, "f", RESTART, "r1");
    startRun("f", "f-2");
    kubelet.terminated(ns, "f-2", 1, "Error", DEP_MESSAGE);
    JsonNode before = awaitStatus("f", x -> "CircuitOpen".equals(text(x.path("phase")))
        && "model-api".equals(text(x.path("waitingFor"))));
    var warningsBefore = warningKeys("f");
    cluster.annotate(ns, "f", RESTART, "r2");
    awaitStatus("f", x -> "r2".equals(text(x.path("refusedRequests").path("restart").path("id"))));
    await().atMost(Duration.ofSeconds(10)).until(() -> !warningsBefore.containsAll(warningKeys("f")));
    holdsFor(Duration.ofSeconds(3), () -> pod("f-3") == null);
    JsonNode s = status("f");
    assertThat(text(s.path("phase"))).isEqualTo("CircuitOpen");
    assertThat(text(s.path("waitingFor"))).isEqualTo("model-api");
    assertThat(text(s.path("nextRestartAt"))).isEqualTo(text(before.path("nextRestartAt")));
  }

  /** README: an edit of a dependency's openDuration while Open counts from openedAt (shorter -> HalfOpen sooner). */
  @Test
  void shorterDependencyOpenDurationBringsTheProbeForward() {
    drive("CircuitOpenDep", "o");
    cluster.editPolicySpec(ns, "p", spec -> spec.put("dependencies", java.util.List.of(Map.of("name", "model-api",
        "match", Map.of("messageContains", java.util.List.of("model API")), "failureThreshold", 1, "window", "1m",
        "openDuration", "2s", "probes", 1, "releaseRate", 5))));
    try {
      await().atMost(Duration.ofSeconds(15)).until(() -> pod("o-2") != null);
    } catch (RuntimeException e) {
      throw new AssertionError("no probe after a shorter openDuration; " + describe("o"), e);
    }
    startRun("o", "o-2");
  }

  @ParameterizedTest(name = "template edit in {0}")
  @ValueSource(strings = {"Escalated", "Failed", "Succeeded"})
  void templateEditInATerminalPhaseRestartsNothing(String phase) {
    drive(phase, "te");
    setImage("te", "example/agent:2");
    long gen = cluster.instance(ns, "te").getMetadata().getGeneration();
    awaitStatus("te", x -> x.path("observedGeneration").asLong() >= gen);
    holdsFor(Duration.ofSeconds(3), () -> pod("te-2") == null);
    assertThat(phase("te")).isEqualTo(phase);
  }

  @Test
  void policyRefSwitchInEscalatedDoesNotUnEscalate() {
    drive("Escalated", "pr");
    policy("q", BASE.replace("maxRetries: 3", "maxRetries: 9"));
    cluster.editInstanceSpec(ns, "pr", spec -> spec.put("policyRef", Map.of("name", "q")));
    long gen = cluster.instance(ns, "pr").getMetadata().getGeneration();
    awaitStatus("pr", x -> x.path("observedGeneration").asLong() >= gen);
    holdsFor(Duration.ofSeconds(3), () -> pod("pr-2") == null);
    assertThat(phase("pr")).isEqualTo("Escalated");
  }

  /** README: a restart that skips a CircuitOpen wait starts the HalfOpen trial; a failed trial opens it again. */
  @Test
  void restartInOwnCircuitOpenStartsTheTrialAndItsFailureReopens() {
    drive("CircuitOpenOwn", "h");
    int trips = status("h").path("circuitBreaker").path("trips").asInt();
    cluster.annotate(ns, "h", RESTART, "trial");
    startRun("h", "h-2");
    assertThat(text(status("h").path("circuitBreaker").path("state"))).isIn("HalfOpen", "Open");
    kubelet.terminated(ns, "h-2", 1, "Error", BOOM);
    JsonNode s = awaitFailureOf("h", "h-2");
    assertThat(text(s.path("phase"))).as("a failed HalfOpen trial -> Open -> CircuitOpen; " + s).isEqualTo("CircuitOpen");
    assertThat(text(s.path("circuitBreaker").path("state"))).isEqualTo("Open");
    assertThat(s.path("circuitBreaker").path("trips").asInt()).isGreaterThan(trips);
    assertThat(s.path("attempt").asInt()).isEqualTo(2);
    holdsFor(Duration.ofSeconds(3), () -> pod("h-3") == null);
  }

  /** api.md §9: nothing restarts on an invalid policy (the mock has no CEL: the operator must refuse it). */
  @Test
  void policyMadeInvalidDuringBackoffStartsNothing() {
    policy("p", BASE.replace("initialDelay: 30s", "initialDelay: 3s"));
    instance("iv", "p");
    startRun("iv", "iv-1");
    kubelet.terminated(ns, "iv-1", 1, "Error", BOOM);
    JsonNode s = awaitPhase("iv", "Backoff");
    cluster.editPolicySpec(ns, "p", spec -> spec.put("backoff",
        Map.of("type", "Linear", "initialDelay", "3s", "maxDelay", "1s")));
    awaitStatus("iv", x -> readyReason(x).equals("False/PolicyInvalid"));
    holdsFor(untilPast(s, 3), () -> pod("iv-2") == null);
    cluster.editPolicySpec(ns, "p", spec -> spec.put("backoff",
        Map.of("type", "Linear", "initialDelay", "1s", "maxDelay", "60s")));
    startRun("iv", "iv-2");
  }

  /** README: an instance made with spec.suspend: true refuses requests (even ones before its first decision). */
  @Test
  void anInstanceMadeSuspendedRefusesARequestInItsManifest() {
    policy("p", BASE);
    cluster.apply(ns, "apiVersion: respawn.dev/v1alpha1\nkind: AgentInstance\nmetadata: {name: ms, annotations: "
        + "{respawn.dev/restart: first}}\nspec:\n  policyRef: {name: p}\n  suspend: true\n  template:\n    spec:\n"
        + "      containers:\n      - {name: agent, image: example/agent:1}\n");
    awaitPhase("ms", "Suspended");
    awaitStatus("ms", x -> "first".equals(text(x.path("refusedRequests").path("restart").path("id"))));
    await().atMost(Duration.ofSeconds(10)).until(() -> !warningKeys("ms").isEmpty());
    holdsFor(Duration.ofSeconds(2), () -> pod("ms-1") == null);
  }

  /** Both annotations in one edit: exactly one new run, whichever is acted on. */
  @ParameterizedTest(name = "restart + resume in one edit in {0}")
  @ValueSource(strings = {"Running", "Escalated"})
  void restartAndResumeInOneEdit(String phase) {
    int run = drive(phase, "rr");
    editInstance("rr", spec -> { }, Map.of(RESTART, "both-r", RESUME, "both-z"));
    startRun("rr", pod("rr", run + 1));
    holdsFor(Duration.ofSeconds(3), () -> pod(pod("rr", run + 2)) == null);
    JsonNode s = status("rr");
    if ("Running".equals(phase)) {
      assertThat(text(s.path("refusedRequests").path("resume").path("id"))).isEqualTo("both-z");
    } else {
      assertThat(text(s.path("handledRequests").path("resume"))).isEqualTo("both-z");
      assertThat(s.path("attempt").asInt()).isZero();
    }
  }

  String allEvents(String i) {
    return events(i).stream().map(e -> e.getType() + " " + e.getReason() + " [" + e.getNote() + "] series="
        + (e.getSeries() == null ? "-" : e.getSeries().getCount())).collect(java.util.stream.Collectors.joining(" | "));
  }

  /** An acted-on restart alone is a Normal Event; with a refused resume in the same decision, one Warning (§8). */
  @ParameterizedTest(name = "resume alongside: {0}")
  @ValueSource(booleans = {false, true})
  void anActedOnRestartIsNoWarning(boolean withRefusedResume) {
    drive("Running", "aw");
    editInstance("aw", spec -> { }, withRefusedResume ? Map.of(RESTART, "go", RESUME, "no") : Map.of(RESTART, "go"));
    startRun("aw", "aw-2");
    await().atMost(Duration.ofSeconds(10)).until(() -> events("aw").stream()
        .anyMatch(e -> e.getNote() != null && e.getNote().contains("go")));
    if (withRefusedResume) {
      await().atMost(Duration.ofSeconds(10)).until(() -> events("aw").stream()
          .anyMatch(e -> "Warning".equals(e.getType()) && e.getNote() != null && e.getNote().contains("no")));
    }
    var mentioningGo = events("aw").stream().filter(e -> e.getNote() != null && e.getNote().contains("(go)")).toList();
    assertThat(mentioningGo).as("one Event per decision (§8); " + allEvents("aw")).hasSize(1);
    if (withRefusedResume) {
      // §8: the decision's one Event has the most significant notice's reason (the refusal, a Warning) and its
      // note carries the others
      assertThat(mentioningGo.get(0).getType()).isEqualTo("Warning");
      assertThat(mentioningGo.get(0).getNote()).contains("no refused");
    } else {
      assertThat(mentioningGo.get(0).getType()).as("an acted-on restart is no Warning").isEqualTo("Normal");
    }
  }

  /** An instance spec made invalid while Running (agentContainer names no container): the live run is left
   * alone, a restart request restarts nothing, its end starts nothing; fixed, it goes on. */
  @Test
  void invalidSpecWhileRunningLeavesTheRunAndRestartsNothing() {
    drive("Running", "is");
    cluster.editInstanceSpec(ns, "is", spec -> spec.put("agentContainer", "nope"));
    awaitStatus("is", x -> readyReason(x).equals("False/InvalidSpec"));
    cluster.annotate(ns, "is", RESTART, "while-invalid");
    holdsFor(Duration.ofSeconds(3), () -> !goneOrDeleting("is-1") && pod("is-2") == null);
    kubelet.terminated(ns, "is-1", 1, "Error", BOOM);
    holdsFor(Duration.ofSeconds(3), () -> pod("is-2") == null);
    cluster.editInstanceSpec(ns, "is", spec -> spec.remove("agentContainer"));
    try {
      await().atMost(Duration.ofSeconds(40)).until(() -> pod("is-2") != null);
    } catch (RuntimeException e) {
      throw new AssertionError("nothing continued once the spec was fixed; " + describe("is"), e);
    }
  }

  /** The policy of a dependency waiter deleted and made again (its circuit state is gone with it). */
  @Test
  void policyDeletedAndRecreatedWhileWaitingForADependency() {
    drive("CircuitOpenDep", "dw");
    deletePolicy("p");
    awaitStatus("dw", x -> readyReason(x).equals("False/PolicyNotFound"));
    holdsFor(Duration.ofSeconds(3), () -> pod("dw-2") == null);
    policy("p", policyFor("CircuitOpenDep"));
    boolean started;
    try {
      await().atMost(Duration.ofSeconds(15)).until(() -> pod("dw-2") != null);
      started = true;
    } catch (RuntimeException e) {
      started = false;
    }
    JsonNode s = status("dw");
    assertThat(started || !text(s.path("nextRestartAt")).isEmpty())
        .as("a waiter is never left with no next run; " + describe("dw")).isTrue();
  }
}

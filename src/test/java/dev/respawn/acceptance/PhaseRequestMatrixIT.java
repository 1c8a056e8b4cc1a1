package dev.respawn.acceptance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Every phase x {restart, resume} annotation (api.md §6, README "Annotations on an AgentInstance"): ACT = acted on
 * (a new run starts now, recorded in handledRequests, not refused), REFUSE = refused with a Warning Event, recorded
 * in handledRequests and refusedRequests, nothing else changes; FIRST = before the first decision, the request is
 * that first run's start, no Warning.
 */
class PhaseRequestMatrixIT extends PhaseMatrixScenario {

  @ParameterizedTest(name = "{0} + {1} -> {2}")
  @CsvSource({
      "Pending, restart, FIRST",
      "Pending, resume, FIRST",
      "Starting, restart, ACT",
      "Starting, resume, REFUSE",
      "Running, restart, ACT",
      "Running, resume, REFUSE",
      "Backoff, restart, ACT",
      "Backoff, resume, REFUSE",
      "CircuitOpenOwn, restart, ACT",
      "CircuitOpenOwn, resume, REFUSE",
      "CircuitOpenDep, restart, ACT",
      "CircuitOpenDep, resume, REFUSE",
      "Escalated, restart, REFUSE",
      "Escalated, resume, ACT",
      "EscalatedLatched, restart, REFUSE",
      "EscalatedLatched, resume, ACT",
      "Failed, restart, REFUSE",
      "Failed, resume, ACT",
      "Succeeded, restart, REFUSE",
      "Succeeded, resume, ACT",
      "Suspended, restart, REFUSE",
      "Suspended, resume, REFUSE"})
  void requestInPhase(String phase, String kind, String expect) {
    String i = "m";
    int run = drive(phase, i);
    JsonNode before = status(i);
    Set<String> warningsBefore = warningKeys(i);
    String id = kind + "-" + phase.toLowerCase();
    String next = pod(i, run + 1);
    cluster.annotate(ns, i, "respawn.dev/" + kind, id);

    switch (expect) {
      case "REFUSE" -> {
        JsonNode s = awaitStatus(i, x -> id.equals(text(x.path("refusedRequests").path(kind).path("id"))));
        assertThat(text(s.path("handledRequests").path(kind))).as("a refused id is recorded as handled").isEqualTo(id);
        try {
          await().atMost(Duration.ofSeconds(10)).until(() -> !warningKeys(i).stream()
              .allMatch(warningsBefore::contains));
        } catch (RuntimeException e) {
          throw new AssertionError("no new Warning Event for the refused " + kind + "; " + describe(i), e);
        }
        holdsFor(Duration.ofSeconds(3), () -> pod(next) == null);
        JsonNode after = status(i);
        assertThat(text(after.path("phase"))).as("phase unchanged by a refused request").isEqualTo(
            text(before.path("phase")));
        assertThat(text(after.path("nextRestartAt"))).as("wait unchanged").isEqualTo(text(before.path("nextRestartAt")));
        assertThat(after.path("attempt").asInt()).isEqualTo(before.path("attempt").asInt());
        assertThat(text(after.path("terminalReason"))).isEqualTo(text(before.path("terminalReason")));
      }
      case "ACT" -> {
        try {
          await().atMost(Duration.ofSeconds(12)).pollInterval(Duration.ofMillis(100)).until(() -> pod(next) != null);
        } catch (RuntimeException e) {
          throw new AssertionError("the " + kind + " request was not acted on now; " + describe(i), e);
        }
        if (run > 0) {
          var old = pod(pod(i, run));
          assertThat(old == null || !isLive(old)).as("old run ended before the next was made").isTrue();
        }
        JsonNode s = awaitStatus(i, x -> id.equals(text(x.path("handledRequests").path(kind))));
        assertThat(text(s.path("refusedRequests").path(kind).path("id"))).isNotEqualTo(id);
        startRun(i, next);
        s = awaitStatus(i, x -> id.equals(text(x.path("lastRestart").path("requestId"))));
        if ("restart".equals(kind)) {
          assertThat(s.path("attempt").asInt()).as("a manual restart is not a failure")
              .isEqualTo(before.path("attempt").asInt());
        } else {
          assertThat(s.path("attempt").asInt()).as("resume: a new lifecycle").isZero();
          assertThat(text(s.path("circuitBreaker").path("state"))).isIn("Closed", "");
          assertThat(text(s.path("terminalReason"))).isEmpty();
          assertThat(text(condition(s, "Escalated").path("status"))).isEqualTo("False");
        }
        holdsFor(Duration.ofSeconds(2), () -> pod(pod(i, run + 2)) == null);
      }
      case "FIRST" -> {
        holdsFor(Duration.ofSeconds(2), () -> pod(pod(i, 1)) == null);
        policy("p", BASE);
        startRun(i, pod(i, 1));
        JsonNode s = awaitStatus(i, x -> id.equals(text(x.path("handledRequests").path(kind))));
        assertThat(text(s.path("lastRestart").path("requestId"))).as("lastRestart names the request").isEqualTo(id);
        assertThat(s.path("restarts").asInt()).as("no restart counted").isZero();
        assertThat(text(s.path("refusedRequests").path(kind).path("id"))).isNotEqualTo(id);
        assertThat(warnings(i)).as("no Warning says it was refused").doesNotContainIgnoringCase(id);
        holdsFor(Duration.ofSeconds(2), () -> pod(pod(i, 2)) == null);
      }
      default -> throw new IllegalArgumentException(expect);
    }
  }

  /** A repeated id and a GitOps revert (a -> b -> a) restart nothing more. */
  @Test
  void aRepeatedIdAndARevertRestartNothing() {
    drive("Running", "r");
    cluster.annotate(ns, "r", RESTART, "a");
    startRun("r", "r-2");
    cluster.annotate(ns, "r", RESTART, "a"); // same value again: no change at all
    holdsFor(Duration.ofSeconds(2), () -> pod("r-3") == null);
    cluster.annotate(ns, "r", RESTART, "b");
    startRun("r", "r-3");
    cluster.annotate(ns, "r", RESTART, "a");
    holdsFor(Duration.ofSeconds(3), () -> pod("r-4") == null);
    JsonNode s = status("r");
    assertThat(text(s.path("handledRequests").path("restart"))).isEqualTo("b");
    assertThat(s.path("earlierRequests").path("restart").toString()).contains("\"a\"");
    assertThat(s.path("restarts").asInt()).isEqualTo(2);
  }

  /** Two ids one after the other, the second before the first's new run runs: one live pod at any time. */
  @Test
  void aSecondIdWhileTheFirstIsPending() {
    drive("Running", "d");
    cluster.annotate(ns, "d", RESTART, "one");
    cluster.annotate(ns, "d", RESTART, "two");
    JsonNode s = awaitStatus("d", x -> "two".equals(text(x.path("handledRequests").path("restart")))
        && !text(x.path("currentPod")).isEmpty() && pod(text(x.path("currentPod"))) != null
        && isLive(pod(text(x.path("currentPod")))));
    String cur = text(s.path("currentPod"));
    startRun("d", cur);
    holdsFor(Duration.ofSeconds(3), () -> cur.equals(text(status("d").path("currentPod"))));
    s = status("d");
    assertThat(text(s.path("lastRestart").path("requestId"))).isEqualTo("two");
    assertThat(cluster.podCreatesIn(ns)).as("at most one pod per request").isLessThanOrEqualTo(3);
  }

  /** A second, different restart id while the instance is in Starting from the first one. */
  @Test
  void aSecondIdDuringTheStartOfTheFirstRestartsAgain() {
    drive("Running", "e");
    cluster.annotate(ns, "e", RESTART, "one");
    awaitPod("e-2");
    awaitStatus("e", x -> "one".equals(text(x.path("handledRequests").path("restart"))));
    cluster.annotate(ns, "e", RESTART, "two");
    awaitPod("e-3");
    assertThat(goneOrDeleting("e-2")).as("the Starting run of the first request was ended").isTrue();
    startRun("e", "e-3");
    JsonNode s = status("e");
    assertThat(text(s.path("lastRestart").path("requestId"))).isEqualTo("two");
    assertThat(s.path("earlierRequests").path("restart").toString()).contains("\"one\"");
    assertThat(s.path("attempt").asInt()).isZero();
  }
}

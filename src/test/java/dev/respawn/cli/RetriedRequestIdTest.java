package dev.respawn.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.testsupport.ManualClock;
import dev.respawn.testsupport.MockApi;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A pipeline step retried with its --request-id: nothing is sent again, and what became of the request is told. */
class RetriedRequestIdTest {
  @RegisterExtension
  static final MockApi API = new MockApi();
  static final ManualClock CLOCK = ManualClock.at("2026-11-21T10:34:39.123Z");

  static Cli.Result cli(String... args) {
    return Cli.run(PluginEnvironment.using(API.client(), CLOCK), args);
  }

  private static void carrying(String ns, String id, String reason, String status) {
    Instances.create(API.client(), ns, "coder", null, status);
    API.client().resources(AgentInstance.class).inNamespace(ns).withName("coder").edit(i -> {
      i.getMetadata().setAnnotations(java.util.Map.of(AgentInstance.RESTART_ANNOTATION, id,
          AgentInstance.RESTART_REASON_ANNOTATION, reason));
      return i;
    });
  }

  /**
   * Pipeline A's restart (id ci-a) was acted on and its run started; pipeline B then annotated ci-b, not acted on
   * yet. A's step is retried with the same id: the operator already acted on ci-a, so nothing should be sent. The
   * plugin only compares with the annotation, finds ci-b, and writes ci-a back: B's pending request is lost (the
   * operator ignores ci-a, an id it handled) and B's reason replaced.
   */
  @Test
  void aRetriedIdTheOperatorHandledIsNotWrittenOverALaterPendingRequest() {
    carrying("clobber", "ci-b", "pipeline b", """
        {phase: Running, run: 2, currentPod: coder-2, handledRequests: {restart: ci-a},
         lastRestart: {kind: Manual, requestId: ci-a, previousPod: coder-1, pod: coder-2,
                       startedAt: "2026-11-21T10:30:00Z"}}
        """);

    Cli.Result r = cli("restart", "coder", "--reason", "pipeline a retried", "--request-id", "ci-a", "-n", "clobber",
        "-o", "json");

    assertThat(Instances.annotations(API.client(), "clobber", "coder")).as(r.toString())
        .containsEntry(AgentInstance.RESTART_ANNOTATION, "ci-b")
        .containsEntry(AgentInstance.RESTART_REASON_ANNOTATION, "pipeline b");
  }

  /** The same with ci-a among status.earlierRequests: reported as acted on, nothing written. */
  @Test
  void aRetriedIdAmongEarlierRequestsSendsNothing() {
    carrying("earlier", "ci-b", "pipeline b", """
        {phase: Running, run: 3, currentPod: coder-3, handledRequests: {restart: ci-b},
         earlierRequests: {restart: [ci-a]},
         lastRestart: {kind: Manual, requestId: ci-b, previousPod: coder-2, pod: coder-3,
                       startedAt: "2026-11-21T10:30:00Z"}}
        """);
    String rv = Instances.get(API.client(), "earlier", "coder").getMetadata().getResourceVersion();

    Cli.Result r = cli("restart", "coder", "--reason", "retried", "--request-id", "ci-a", "-n", "earlier",
        "-o", "json");

    assertThat(Instances.get(API.client(), "earlier", "coder").getMetadata().getResourceVersion()).as(r.toString())
        .isEqualTo(rv);
    assertThat(r.json().get("message").asText()).as(r.toString()).doesNotStartWith("Restart requested");
  }

  /**
   * The request carried was accepted (lastRestart names it, no start yet) and the instance became Failed before a
   * new run started. With --wait the plugin says failed (exit 1); without it, it says "Restart requested, but phase
   * Failed is terminal: the operator refuses a restart", exit 0: neither sent nor true.
   */
  @Test
  void aRetriedIdAcceptedThenFailedIsReportedAsFailedWithoutWait() {
    carrying("failed", "ci-f", "first", """
        {phase: Failed, run: 1, handledRequests: {restart: ci-f},
         lastRestart: {kind: Manual, requestId: ci-f, previousPod: coder-1}}
        """);

    Cli.Result plain = cli("restart", "coder", "--reason", "retried", "--request-id", "ci-f", "-n", "failed",
        "-o", "json");
    Cli.Result waited = cli("restart", "coder", "--reason", "retried", "--request-id", "ci-f", "-n", "failed",
        "-o", "json", "--wait", "--timeout", "2s");

    assertThat(waited.exit()).as(waited.toString()).isEqualTo(1);
    assertThat(plain.exit()).as("without --wait: " + plain).isEqualTo(waited.exit());
  }
}

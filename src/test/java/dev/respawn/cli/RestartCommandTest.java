package dev.respawn.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.testsupport.ManualClock;
import dev.respawn.testsupport.MockApi;
import java.util.List;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** restart and restart --all-failed, against the API server alone (no operator: what gets requested). */
class RestartCommandTest {
  @RegisterExtension
  static final MockApi API = new MockApi();
  static final ManualClock CLOCK = ManualClock.at("2026-11-21T10:34:39.123Z");
  static final String ID = "cli-" + CLOCK.millis();

  static Cli.Result cli(String... args) {
    return Cli.run(PluginEnvironment.using(API.client(), CLOCK), args);
  }

  @Test
  void restartSetsTheRequestIdAndTheReasonAnnotations() {
    Instances.create(API.client(), "restart", "coder", null, "{phase: Running, run: 1, currentPod: coder-1}");

    Cli.Result r = cli("restart", "coder", "--reason", "Load new GitConfig implementation", "-n", "restart",
        "-o", "json");

    assertThat(r.exit()).as(r.toString()).isZero();
    assertThat(Instances.annotations(API.client(), "restart", "coder"))
        .containsEntry(AgentInstance.RESTART_ANNOTATION, ID)
        .containsEntry("respawn.dev/restart-reason", "Load new GitConfig implementation");
    JsonNode j = r.json();
    assertThat(j.get("success").asBoolean()).isTrue();
    assertThat(j.get("action").asText()).isEqualTo("restart");
    assertThat(j.get("agent_id").asText()).isEqualTo("coder");
    assertThat(j.get("request_id").asText()).isEqualTo(ID);
    assertThat(j.get("reason").asText()).isEqualTo("Load new GitConfig implementation");
    assertThat(j.get("phase").asText()).isEqualTo("Running");
    assertThat(j.get("waited").asBoolean()).isFalse();
  }

  @Test
  void aSecondRequestInTheSameMillisecondGetsADistinctId() {
    Instances.create(API.client(), "twice", "coder", null, "{phase: Running}");

    assertThat(cli("restart", "coder", "--reason", "one", "-n", "twice").exit()).isZero();
    Cli.Result second = cli("restart", "coder", "--reason", "two", "-n", "twice");

    assertThat(second.exit()).as(second.toString()).isZero();
    assertThat(second.out()).contains(ID + "-2");
    assertThat(Instances.annotations(API.client(), "twice", "coder"))
        .containsEntry(AgentInstance.RESTART_ANNOTATION, ID + "-2").containsEntry("respawn.dev/restart-reason", "two");
  }

  @Test
  void restartInATerminalPhaseIsSentWithAWarning() {
    Instances.create(API.client(), "terminal", "stuck", null, "{phase: Escalated}");

    Cli.Result r = cli("restart", "stuck", "--reason", "try", "-n", "terminal");

    assertThat(r.exit()).as(r.toString()).isZero();
    assertThat(r.out()).contains("agentinstance/stuck restart requested").doesNotContain("Warning");
    assertThat(r.err()).as("a warning goes to stderr, as kubectl's").startsWith("Warning: ")
        .contains("kubectl respawn resume stuck --force");
  }

  /** Suspended: the operator refuses a restart and a resume alike, so the warning does not send one to resume. */
  @Test
  void restartOfASuspendedInstanceWarnsToClearSuspendNotToResume() {
    Instances.create(API.client(), "paused", "idle", null, "{phase: Suspended}");
    API.client().resources(AgentInstance.class).inNamespace("paused").withName("idle")
        .edit(i -> { i.getSpec().suspend = true; return i; });

    Cli.Result r = cli("restart", "idle", "--reason", "try", "-n", "paused");

    assertThat(r.exit()).as(r.toString()).isZero();
    assertThat(r.out()).contains("agentinstance/idle restart requested");
    assertThat(r.err()).contains("Warning: spec.suspend is true", "refuses a restart",
        "clearing it starts the next run (kubectl patch agentinstance idle -n paused").doesNotContain("respawn resume");
  }

  @Test
  void restartNeedsAReasonAndAName() {
    Instances.create(API.client(), "usage", "coder", null, "{phase: Running}");

    Cli.Result noReason = cli("restart", "coder", "-n", "usage");
    Cli.Result noName = cli("restart", "--reason", "x", "-n", "usage");

    assertThat(noReason.exit()).isEqualTo(2);
    assertThat(noReason.err()).contains("--reason").startsWith("error: ").doesNotContain("Usage:");
    assertThat(noReason.err().strip().lines()).as("one line").hasSize(1);
    assertThat(noName.exit()).isEqualTo(2);
    assertThat(noName.err()).contains("NAME").contains("respawn restart --help");
    assertThat(Instances.annotations(API.client(), "usage", "coder")).doesNotContainKey(AgentInstance.RESTART_ANNOTATION);
  }

  @Test
  void restartOfAMissingInstanceSaysSo() {
    Cli.Result r = cli("restart", "ghost", "--reason", "x", "-n", "nowhere");

    assertThat(r.exit()).isEqualTo(1);
    assertThat(r.err()).contains("agentinstance \"ghost\" not found in namespace \"nowhere\"");
  }

  /** The operator refuses a resume while spec.suspend is true: --all-failed does not ask, and names them. */
  @Test
  void allFailedLeavesOutTheSuspendedOnesAndNamesThem() {
    String ns = "hushed-fleet";
    Instances.create(API.client(), ns, "loud", null, "{phase: Escalated, attempt: 4}");
    Instances.create(API.client(), ns, "quiet", null, "{phase: Escalated, attempt: 4}");
    API.client().resources(AgentInstance.class).inNamespace(ns).withName("quiet")
        .edit(i -> { i.getSpec().suspend = true; return i; });

    Cli.Result json = cli("restart", "--all-failed", "-n", ns, "-o", "json");

    assertThat(json.exit()).as(json.toString()).isZero();
    assertThat(json.json().get("agents_scheduled").asInt()).isEqualTo(1);
    assertThat(json.json().get("agents").get(0).get("agent_id").asText()).isEqualTo("loud");
    assertThat(json.json().get("agents_suspended").get(0).asText()).isEqualTo("quiet");
    assertThat(json.json().get("message").asText()).contains("not resumed, spec.suspend is true", "quiet");
    assertThat(Instances.annotations(API.client(), ns, "quiet")).doesNotContainKey(AgentInstance.RESUME_ANNOTATION);
    assertThat(Instances.annotations(API.client(), ns, "loud")).containsKey(AgentInstance.RESUME_ANNOTATION);
  }

  /** All of them suspended: nothing to resume, said on its own line, the suspended ones on the next. */
  @Test
  void allFailedWithOnlySuspendedOnesResumesNoneAndSaysWhy() {
    String ns = "all-hushed";
    Instances.create(API.client(), ns, "quiet", null, "{phase: Failed}");
    API.client().resources(AgentInstance.class).inNamespace(ns).withName("quiet")
        .edit(i -> { i.getSpec().suspend = true; return i; });

    Cli.Result r = cli("restart", "--all-failed", "-n", ns);

    assertThat(r.exit()).as(r.toString()).isZero();
    assertThat(r.out().lines()).containsExactly("No Failed or Escalated agentinstances to resume in namespace all-hushed",
        "not resumed, spec.suspend is true (clear it first): quiet");
  }

  @Test
  void allFailedResumesExactlyTheFailedAndEscalatedOnes() {
    String ns = "fleet";
    Instances.create(API.client(), ns, "architect", null, """
        {phase: Escalated, attempt: 4, lastDecision: {reasonCode: retries_exhausted}}
        """);
    Instances.create(API.client(), ns, "coder", null, """
        {phase: Failed, attempt: 1, lastDecision: {reasonCode: non_retryable_failure}}
        """);
    Instances.create(API.client(), ns, "runner", null, "{phase: Running}");
    Instances.create(API.client(), ns, "waiter", null, "{phase: Backoff, attempt: 1}");
    Instances.create(API.client(), ns, "done", null, "{phase: Succeeded}");
    Instances.create(API.client(), ns, "paused", null, "{phase: Suspended}");
    Instances.create(API.client(), ns, "new", null, null);
    Instances.create(API.client(), "other", "elsewhere", null, "{phase: Failed}");

    Cli.Result r = cli("restart", "--all-failed", "-n", ns, "-o", "json");

    assertThat(r.exit()).as(r.toString()).isZero();
    JsonNode j = r.json();
    assertThat(j.get("action").asText()).isEqualTo("restart_all_failed");
    assertThat(j.get("agents_scheduled").asInt()).isEqualTo(2);
    assertThat(StreamSupport.stream(j.get("agents").spliterator(), false).map(a -> a.get("agent_id").asText()))
        .containsExactly("architect", "coder");
    JsonNode first = j.get("agents").get(0);
    assertThat(first.get("reason").asText()).isEqualTo("retries_exhausted");
    assertThat(first.get("retry_count").asInt()).isEqualTo(4);
    assertThat(first.get("task_id").asText()).isEqualTo("TASK-31-1");
    assertThat(first.get("request_id").asText()).isEqualTo(ID);
    for (String resumed : new String[] {"architect", "coder"}) {
      assertThat(Instances.annotations(API.client(), ns, resumed)).containsEntry(AgentInstance.RESUME_ANNOTATION, ID);
    }
    for (String left : new String[] {"runner", "waiter", "done", "paused", "new"}) {
      assertThat(Instances.annotations(API.client(), ns, left)).as(left)
          .doesNotContainKeys(AgentInstance.RESUME_ANNOTATION, AgentInstance.RESTART_ANNOTATION);
    }
    assertThat(Instances.annotations(API.client(), "other", "elsewhere")).isEmpty();
  }

  @Test
  void allFailedWithNothingToDoSaysSoAndExits0() {
    Instances.create(API.client(), "healthy", "runner", null, "{phase: Running}");

    Cli.Result r = cli("restart", "--all-failed", "-n", "healthy");

    assertThat(r.exit()).as(r.toString()).isZero();
    assertThat(r.out()).contains("No Failed or Escalated agentinstances in namespace healthy");
  }

  @Test
  void allFailedTakesNoName() {
    Cli.Result r = cli("restart", "coder", "--all-failed", "-n", "fleet");

    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains("--all-failed takes no NAME");
  }

  @Test
  void restartWaitTimesOutWhenNoOperatorHandlesTheRequest() {
    Instances.create(API.client(), "orphans", "orphan", null, "{phase: Running, run: 1, currentPod: orphan-1}");

    Cli.Result r = cli("restart", "orphan", "--reason", "x", "--wait", "--timeout", "300ms", "-n", "orphans",
        "-o", "json");

    assertThat(r.exit()).isEqualTo(1);
    assertThat(r.err()).contains("timed out after 300ms", "not handled by the operator yet");
    assertThat(r.err().lines()).hasSize(1);
    assertThat(r.json().get("success").asBoolean()).isFalse();
    assertThat(r.json().get("error").asText()).isEqualTo("timed_out");
  }

  @Test
  void restartOfALiveAgentIsRequestedWithoutAWarning() {
    Instances.create(API.client(), "live", "coder", null, "{phase: Running, run: 1, currentPod: coder-1}");

    Cli.Result json = cli("restart", "coder", "--reason", "new tools", "-n", "live", "-o", "json");
    Cli.Result table = cli("restart", "coder", "--reason", "new tools", "-n", "live");

    assertThat(json.exit()).as(json.toString()).isZero();
    assertThat(json.json().get("message").asText()).isEqualTo("Restart requested");
    assertThat(table.exit()).as(table.toString()).isZero();
    assertThat(table.out()).contains("agentinstance/coder restart requested").doesNotContain("arning");
    assertThat(table.err()).isEmpty();
  }

  @Test
  void restartInATerminalPhaseSaysInJsonThatTheOperatorRefusesIt() {
    Instances.create(API.client(), "terminal-json", "stuck", null, "{phase: Failed}");

    Cli.Result r = cli("restart", "stuck", "--reason", "try", "-n", "terminal-json", "-o", "json");

    assertThat(r.exit()).as(r.toString()).isZero();
    assertThat(r.json().get("message").asText()).startsWith("Restart requested, but phase Failed is terminal")
        .contains("kubectl respawn resume stuck --force");
    // a field of its own, for a script that branches on it (success says the request was sent)
    assertThat(r.json().get("warning").asText()).startsWith("phase Failed is terminal: the operator refuses a restart");
    assertThat(r.json().get("success").asBoolean()).isTrue();
  }

  @Test
  void aLiveAgentsRequestHasNoWarningField() {
    Instances.create(API.client(), "no-warning", "coder", null, "{phase: Running, run: 1, currentPod: coder-1}");

    Cli.Result r = cli("restart", "coder", "--reason", "ci", "-n", "no-warning", "-o", "json");

    assertThat(r.exit()).as(r.toString()).isZero();
    assertThat(r.json().has("warning")).as(r.toString()).isFalse();
  }

  /** The instance, its status as given, carrying restart request {@code id} with reason "first" (sent before). */
  private static void sentBefore(String ns, String id, String status) {
    Instances.create(API.client(), ns, "coder", null, status);
    API.client().resources(AgentInstance.class).inNamespace(ns).withName("coder").edit(i -> {
      i.getMetadata().setAnnotations(java.util.Map.of(AgentInstance.RESTART_ANNOTATION, id,
          AgentInstance.RESTART_REASON_ANNOTATION, "first"));
      return i;
    });
  }

  @Test
  void aGivenRequestIdIsSent() {
    Instances.create(API.client(), "given-id", "coder", null, "{phase: Running, run: 1, currentPod: coder-1}");

    Cli.Result r = cli("restart", "coder", "--reason", "ci", "--request-id", "pipeline-812", "-n", "given-id",
        "-o", "json");

    assertThat(r.exit()).as(r.toString()).isZero();
    assertThat(r.json().get("request_id").asText()).isEqualTo("pipeline-812");
    assertThat(Instances.annotations(API.client(), "given-id", "coder"))
        .containsEntry(AgentInstance.RESTART_ANNOTATION, "pipeline-812");
  }

  @Test
  void theSameRequestIdAgainSendsNothingAndReportsWhatBecameOfIt() {
    sentBefore("same-id", "pipeline-812", """
        {phase: Running, run: 2, currentPod: coder-2, handledRequests: {restart: pipeline-812},
         lastRestart: {kind: Manual, requestId: pipeline-812, previousPod: coder-1, pod: coder-2,
                       startedAt: "2026-11-21T10:30:00Z"}}
        """);
    String before = Instances.get(API.client(), "same-id", "coder").getMetadata().getResourceVersion();

    Cli.Result r = cli("restart", "coder", "--reason", "retried step", "--request-id", "pipeline-812", "-n",
        "same-id", "-o", "json");

    assertThat(r.exit()).as(r.toString()).isZero();
    JsonNode j = r.json();
    assertThat(j.get("success").asBoolean()).isTrue();
    assertThat(j.get("waited").asBoolean()).isFalse();
    assertThat(j.get("pod").asText()).isEqualTo("coder-2");
    assertThat(j.get("message").asText()).isEqualTo("Restarted: restart request pipeline-812 was handled already: "
        + "pod coder-2 replaces coder-1");
    assertThat(Instances.get(API.client(), "same-id", "coder").getMetadata().getResourceVersion())
        .as("nothing written").isEqualTo(before);
    assertThat(Instances.annotations(API.client(), "same-id", "coder"))
        .containsEntry(AgentInstance.RESTART_REASON_ANNOTATION, "first");
  }

  @Test
  void theSameRequestIdAgainAfterItWasRefusedExits1() {
    sentBefore("same-id-refused", "pipeline-9", """
        {phase: Escalated, handledRequests: {restart: pipeline-9},
         refusedRequests: {restart: {id: pipeline-9, message: "phase Escalated is terminal"}}}
        """);

    Cli.Result r = cli("restart", "coder", "--reason", "retried step", "--request-id", "pipeline-9", "-n",
        "same-id-refused", "-o", "json");

    assertThat(r.exit()).as(r.toString()).isEqualTo(1);
    assertThat(r.json().get("error").asText()).isEqualTo("refused");
    assertThat(r.err()).contains("restart request pipeline-9 was refused: phase Escalated is terminal");
  }

  @Test
  void aBlankOrPaddedRequestIdIsAUsageError() {
    Instances.create(API.client(), "bad-id", "coder", null, "{phase: Running}");

    Cli.Result padded = cli("restart", "coder", "--reason", "ci", "--request-id", " x", "-n", "bad-id");
    Cli.Result tooLong = cli("restart", "coder", "--reason", "ci", "--request-id", "x".repeat(257), "-n", "bad-id");

    assertThat(padded.exit()).as(padded.toString()).isEqualTo(2);
    assertThat(padded.err()).contains("--request-id must be non-empty, without leading or trailing blanks");
    assertThat(tooLong.exit()).as(tooLong.toString()).isEqualTo(2);
    assertThat(tooLong.err()).contains("--request-id must be at most 256 bytes");
    assertThat(Instances.annotations(API.client(), "bad-id", "coder")).doesNotContainKey(
        AgentInstance.RESTART_ANNOTATION);
  }

  @Test
  void allFailedListsTheResumedAgentsInATable() {
    String ns = "fleet-table";
    Instances.create(API.client(), ns, "coder", null, """
        {phase: Failed, attempt: 1, lastDecision: {reasonCode: non_retryable_failure}}
        """);
    Instances.create(API.client(), ns, "architect", null, "{phase: Escalated, attempt: 4, terminalReason: RestartLimitExceeded}");
    Instances.create(API.client(), ns, "runner", null, "{phase: Running}");

    Cli.Result r = cli("restart", "--all-failed", "-n", ns);

    assertThat(r.exit()).as(r.toString()).isZero();
    List<String> lines = r.out().lines().toList();
    assertThat(lines).hasSize(4);
    assertThat(lines.get(0).split("\\s+")).containsExactly("NAME", "PHASE", "REASON", "RETRIES", "REQUEST");
    assertThat(lines.get(1).split("\\s+")).containsExactly("architect", "Escalated", "RestartLimitExceeded", "4", ID);
    assertThat(lines.get(2).split("\\s+")).containsExactly("coder", "Failed", "non_retryable_failure", "1", ID);
    assertThat(lines.get(3)).isEqualTo("2 agent(s) resumed: each starts a new lifecycle now");
    assertThat(lines.get(1).indexOf("Escalated")).as("one column").isEqualTo(lines.get(0).indexOf("PHASE"));
  }

  @Test
  void allFailedThatCouldNotResumeOneSaysWhichAndWhyAndExits1() {
    String ns = "fleet-forbidden";
    Instances.create(API.client(), ns, "coder", null, "{phase: Failed, attempt: 1}");
    API.server().expect().patch().withPath("/apis/respawn.dev/v1alpha1/namespaces/" + ns + "/agentinstances/coder")
        .andReturn(403, new io.fabric8.kubernetes.api.model.StatusBuilder().withCode(403).withReason("Forbidden")
            .withMessage("agentinstances.respawn.dev \"coder\" is forbidden: cannot patch").build()).always();

    Cli.Result r = cli("restart", "--all-failed", "-n", ns, "-o", "json");

    assertThat(r.exit()).as(r.toString()).isEqualTo(1);
    assertThat(r.err().lines()).singleElement().asString().startsWith("error: could not resume coder: ")
        .contains("forbidden");
    assertThat(r.json().get("success").asBoolean()).isFalse();
    assertThat(r.json().get("agents_scheduled").asInt()).isZero();
    assertThat(r.json().get("errors").get(0).asText()).startsWith("coder: ");
  }

  @Test
  void aRefusedRestartWaitSaysWhatTheOperatorsWarningSays() {
    String ns = "refused";
    // the operator handled the request and refused it (terminal phase), with a Warning Event that names it
    Instances.create(API.client(), ns, "stuck", null, "{phase: Escalated, run: 2, handledRequests: {restart: " + ID
        + "}}");
    String note = "[RST] Restart request " + ID + " refused for stuck: phase Escalated; use resume";
    event(ns, "stuck-warning", "stuck", "Warning", note);
    event(ns, "stuck-normal", "stuck", "Normal", "[RST] Restart request " + ID + " seen");
    event(ns, "other-warning", "other", "Warning", "[RST] Restart request " + ID + " refused for other");

    Cli.Result r = cli("restart", "stuck", "--reason", "try", "--wait", "--timeout", "10s", "-n", ns, "-o", "json");

    assertThat(r.exit()).as(r.toString()).isEqualTo(1);
    assertThat(r.err()).isEqualTo("error: " + note + System.lineSeparator());
    assertThat(r.json().get("error").asText()).isEqualTo("refused");
    assertThat(r.json().get("restarted").asBoolean()).isFalse();
  }

  static void event(String ns, String name, String regarding, String type, String note) {
    API.client().events().v1().events().inNamespace(ns).resource(new io.fabric8.kubernetes.api.model.events.v1
        .EventBuilder().withNewMetadata().withName(name).withNamespace(ns).endMetadata().withType(type)
        .withReason("RestartRequested").withNote(note).withNewRegarding().withKind("AgentInstance")
        .withName(regarding).withNamespace(ns).endRegarding().build()).create();
  }
}

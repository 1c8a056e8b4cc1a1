package dev.respawn.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.testsupport.ManualClock;
import dev.respawn.testsupport.MockApi;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class ResumeCommandTest {
  @RegisterExtension
  static final MockApi API = new MockApi();
  static final ManualClock CLOCK = ManualClock.at("2026-11-21T10:34:39Z");

  static Cli.Result cli(String... args) {
    return Cli.run(PluginEnvironment.using(API.client(), CLOCK), args);
  }

  @Test
  void withoutForceItRefusesAndExplainsTheNewLifecycle() {
    Instances.create(API.client(), "noforce", "stuck", null, "{phase: Escalated, lastDecision: {reasonCode: "
        + "retries_exhausted}}");

    Cli.Result r = cli("resume", "stuck", "-n", "noforce");

    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).startsWith("error: resume starts a new lifecycle for agentinstance \"stuck\"")
        .contains("Escalated", "retries_exhausted", "attempt 0", "--force");
    assertThat(r.out()).isEmpty();
    assertThat(Instances.annotations(API.client(), "noforce", "stuck")).doesNotContainKey(
        AgentInstance.RESUME_ANNOTATION);
  }

  @Test
  void withForceItSetsTheResumeAnnotation() {
    Instances.create(API.client(), "force", "stuck", null, "{phase: Failed}");

    Cli.Result r = cli("resume", "stuck", "--force", "-n", "force", "-o", "json");

    assertThat(r.exit()).as(r.toString()).isZero();
    String id = r.json().get("request_id").asText();
    assertThat(id).isEqualTo("cli-" + CLOCK.millis());
    assertThat(r.json().get("action").asText()).isEqualTo("resume");
    assertThat(Instances.annotations(API.client(), "force", "stuck")).containsEntry(AgentInstance.RESUME_ANNOTATION,
        id).doesNotContainKey(AgentInstance.RESTART_ANNOTATION);
  }

  @Test
  void resumeOnARunningAgentIsSentWithAWarningThatTheOperatorRefusesIt() {
    // api.md §6: resume applies from Escalated, Failed or a latched circuit; the operator refuses it elsewhere
    Instances.create(API.client(), "live", "coder", null, "{phase: Running, run: 1, currentPod: coder-1}");

    Cli.Result json = cli("resume", "coder", "--force", "-n", "live", "-o", "json");
    Cli.Result table = cli("resume", "coder", "--force", "-n", "live");

    assertThat(json.exit()).as(json.toString()).isZero();
    assertThat(json.json().get("message").asText()).startsWith("Resume requested, but phase Running")
        .contains("the operator refuses a resume", "kubectl respawn restart coder").doesNotContain("new lifecycle");
    assertThat(table.exit()).as(table.toString()).isZero();
    assertThat(table.out()).contains("agentinstance/coder resume requested").doesNotContain("a new lifecycle starts now");
    assertThat(table.err()).startsWith("Warning: ").contains("kubectl respawn restart coder");
    assertThat(json.err()).as("stdout stays the document; the warning is on stderr too").startsWith("Warning: ");
  }

  /**
   * An escalated instance someone then suspended: the operator refuses a resume while spec.suspend is true (README),
   * so the plugin says so and how to clear it, instead of promising a new lifecycle (on-call tester).
   */
  @Test
  void resumeOfASuspendedInstanceIsSentWithAWarningToClearSuspendFirst() {
    Instances.create(API.client(), "hushed", "stuck", null, "{phase: Escalated}");
    API.client().resources(AgentInstance.class).inNamespace("hushed").withName("stuck")
        .edit(i -> { i.getSpec().suspend = true; return i; });

    Cli.Result json = cli("resume", "stuck", "--force", "-n", "hushed", "-o", "json");
    Cli.Result table = cli("resume", "stuck", "--force", "-n", "hushed");

    assertThat(json.exit()).as(json.toString()).isZero();
    assertThat(json.json().get("message").asText()).startsWith("Resume requested, but spec.suspend is true")
        .contains("refuses a resume", "clear it (kubectl patch agentinstance stuck -n hushed --type merge",
            "{\"spec\":{\"suspend\":false}}", "then kubectl respawn resume stuck --force")
        .doesNotContain("new lifecycle");
    assertThat(table.out()).contains("agentinstance/stuck resume requested").doesNotContain("a new lifecycle starts now");
    assertThat(table.err()).startsWith("Warning: spec.suspend is true");
  }

  /** Before the first decision (its policy not there yet: Pending, no run) a resume is the first run's start. */
  @Test
  void resumeBeforeTheFirstRunIsSentWithoutAWarning() {
    Instances.create(API.client(), "early", "coder", null, "{phase: Pending}");

    Cli.Result json = cli("resume", "coder", "--force", "-n", "early", "-o", "json");

    assertThat(json.exit()).as(json.toString()).isZero();
    assertThat(json.json().get("message").asText()).isEqualTo("Resume requested: a new lifecycle starts now");
  }

  @Test
  void aMissingInstanceIsNotFoundEvenWithoutForce() {
    Cli.Result r = cli("resume", "ghost", "-n", "force");

    assertThat(r.exit()).isEqualTo(1);
    assertThat(r.err()).contains("agentinstance \"ghost\" not found in namespace \"force\"");
  }

  @Test
  void resumeOfAFailedAgentSaysANewLifecycleStartsWithoutAWarning() {
    Instances.create(API.client(), "failed", "stuck", null, "{phase: Failed, lastDecision: {reasonCode: "
        + "non_retryable_failure}}");

    Cli.Result json = cli("resume", "stuck", "--force", "-n", "failed", "-o", "json");

    assertThat(json.exit()).as(json.toString()).isZero();
    assertThat(json.json().get("message").asText()).isEqualTo("Resume requested: a new lifecycle starts now");
    assertThat(json.json().get("reason").asText()).isEqualTo("non_retryable_failure");
    assertThat(json.json().get("phase").asText()).isEqualTo("Failed");
  }

  @Test
  void withoutForceAnInstanceWithoutStatusSaysSo() {
    Instances.create(API.client(), "nostatus", "fresh", null, null);

    Cli.Result r = cli("resume", "fresh", "-n", "nostatus");

    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains("(no status yet)").doesNotContain("phase null");
  }

  @Test
  void resumeWaitTimesOutWhenNoOperatorHandlesTheRequest() {
    Instances.create(API.client(), "orphans", "orphan", null, "{phase: Escalated, run: 2}");

    Cli.Result r = cli("resume", "orphan", "--force", "--wait", "--timeout", "300ms", "-n", "orphans", "-o", "json");

    assertThat(r.exit()).as(r.toString()).isEqualTo(1);
    assertThat(r.err().lines()).singleElement().asString().startsWith("error: timed out after 300ms: resume request ")
        .contains("not handled by the operator yet");
    assertThat(r.json().get("success").asBoolean()).isFalse();
    assertThat(r.json().get("error").asText()).isEqualTo("timed_out");
  }

  @Test
  void theSameRequestIdAgainSendsNothingAndReportsWhatBecameOfIt() {
    Instances.create(API.client(), "resume-same-id", "stuck", null, """
        {phase: Running, run: 5, currentPod: stuck-5, handledRequests: {resume: pipeline-7},
         lastRestart: {kind: Resume, requestId: pipeline-7, previousPod: stuck-4, pod: stuck-5,
                       startedAt: "2026-11-21T10:30:00Z"}}
        """);
    API.client().resources(AgentInstance.class).inNamespace("resume-same-id").withName("stuck").edit(i -> {
      i.getMetadata().setAnnotations(java.util.Map.of(AgentInstance.RESUME_ANNOTATION, "pipeline-7"));
      return i;
    });
    String before = Instances.get(API.client(), "resume-same-id", "stuck").getMetadata().getResourceVersion();

    Cli.Result r = cli("resume", "stuck", "--force", "--request-id", "pipeline-7", "-n", "resume-same-id", "-o",
        "json");

    assertThat(r.exit()).as(r.toString()).isZero();
    assertThat(r.json().get("message").asText()).isEqualTo("Resumed: resume request pipeline-7 was handled already: "
        + "pod stuck-5 replaces stuck-4");
    assertThat(r.json().has("warning")).as("a request acted on already warns of nothing").isFalse();
    assertThat(Instances.get(API.client(), "resume-same-id", "stuck").getMetadata().getResourceVersion())
        .as("nothing written").isEqualTo(before);
  }
}

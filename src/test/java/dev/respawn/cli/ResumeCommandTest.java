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
  void aMissingInstanceIsNotFoundEvenWithoutForce() {
    Cli.Result r = cli("resume", "ghost", "-n", "force");

    assertThat(r.exit()).isEqualTo(1);
    assertThat(r.err()).contains("agentinstance \"ghost\" not found in namespace \"force\"");
  }
}

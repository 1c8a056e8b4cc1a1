package dev.respawn.controller;

import static dev.respawn.controller.OperatorFixture.at;
import static dev.respawn.controller.OperatorFixture.hasCondition;
import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.sandbox.Run;
import dev.respawn.testsupport.PythonAgent;
import dev.respawn.testsupport.PythonAgent.Result;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent's helper (agent/python/respawn_agent.py, a real process) against the operator: its heartbeat
 * makes the instance Ready, its checkpoint is what a resume would use, and its restart request (exit code
 * 42 with the reason as termination message, played by the simulated kubelet) restarts the agent without
 * a failure, which the next run confirms.
 */
class AgentHelperScenarioTest extends MockClusterScenario {
  @Test
  void theHelpersHeartbeatCheckpointAndRestartRequestDriveTheOperator(@TempDir Path dir) throws Exception {
    f.policy("helped", "heartbeat: {timeout: 20s, startupGrace: 30s}\nresetAfter: 30m\n");
    f.kubelet.script("py", Run.runForever(), Run.runForever());
    f.instance("py", "helped");
    // running, but not Ready: no heartbeat yet
    f.awaitInstance("py", i -> at(i, 1, Phase.Running) && hasCondition(i, "Ready", "False", "StaleHeartbeat"));
    PythonAgent run1 = new PythonAgent(f.api.url(), OperatorFixture.NS, "py", "py-1");
    Result beat = run1.run("heartbeat", "--detail", "reading the repository");
    assertThat(beat.exitCode()).as(beat.err()).isZero();
    AgentInstance ready = f.awaitInstance("py", i -> hasCondition(i, "Ready", "True", "Healthy"));
    assertThat(ready.getStatus().heartbeat.detail).isEqualTo("reading the repository");

    Result ckpt = run1.run("checkpoint", "ckpt-3", "--status", "in_progress");
    assertThat(ckpt.exitCode()).as(ckpt.err()).isZero();
    assertThat(f.lease("py").getMetadata().getAnnotations()).containsEntry("respawn.dev/checkpoint", "ckpt-3");

    // the agent asks for its restart; its container ends with that exit code and termination message
    String since = Instant.now().minusSeconds(1).toString();
    Path terminationLog = dir.resolve("termination-log");
    Result request = run1.with("RESPAWN_TERMINATION_LOG", terminationLog.toString())
        .run("request-restart", "--reason", "Load new GitConfig implementation");
    assertThat(request.exitCode()).as(request.err()).isEqualTo(42);
    f.kubelet.terminate("py-1", request.exitCode(), "Error", Files.readString(terminationLog, StandardCharsets.UTF_8));

    AgentInstance restarted = f.awaitInstance("py", i -> at(i, 2, Phase.Running));
    assertThat(restarted.getStatus().lastRestart.kind).isEqualTo("RestartRequest");
    assertThat(restarted.getStatus().lastRestart.reason).isEqualTo("Load new GitConfig implementation");
    assertThat(restarted.getStatus().attempt).as("not a failure").isZero();
    Result verified = new PythonAgent(f.api.url(), OperatorFixture.NS, "py", "py-2").run("verify-restarted",
        "--since", since);
    assertThat(verified.exitCode()).as(verified.out() + verified.err()).isZero();
    assertThat(verified.out()).contains("\"restarted\": true", "\"previous_pod\": \"py-1\"");
  }
}

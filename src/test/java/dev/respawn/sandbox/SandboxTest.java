package dev.respawn.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.cli.RespawnCommand;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** The sandbox run headless: the story of examples/ happens and it exits 0. */
class SandboxTest {
  @Test
  void theWholeLifecycleHappensAndTheSandboxExitsZero(@TempDir Path dir) throws Exception {
    StringWriter text = new StringWriter();
    CommandLine cli = new CommandLine(RespawnCommand.class);
    cli.setOut(new PrintWriter(text, true));
    Path kubeconfig = dir.resolve("sandbox.kubeconfig");
    int code = cli.execute("sandbox", "--timeout", "120", "--kubeconfig-out", kubeconfig.toString());
    String out = text.toString();
    assertThat(code).as(out).isZero();
    assertThat(out).contains("applied examples/05-latched-circuit.yaml", "The whole lifecycle happened");
    assertThat(out).contains("coder", "restart_scheduled", "healthy for resetAfter");
    assertThat(out).contains("reviewer", "non_retryable_failure");
    assertThat(out).contains("researcher", "resuming from checkpoint ckpt-17");
    assertThat(out).contains("tdd", "asked for its own restart (exit code 42");
    assertThat(out).contains("worker", "circuit breaker Closed -> Open", "resume requested by an operator");
    assertThat(out).contains("NAME", "PHASE", "RESTARTS", "CIRCUIT");
    assertThat(Files.readString(kubeconfig)).contains("server: http://", "current-context: respawn-sandbox");
  }
}

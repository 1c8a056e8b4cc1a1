package dev.respawn.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.testsupport.MockApi;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** The real CLI's client (--kubeconfig): it finds the cluster and the namespace, and fails fast and cleanly. */
class ConnectionErrorsTest {
  @RegisterExtension
  static final MockApi API = new MockApi();

  @TempDir
  Path dir;

  Path kubeconfig(String server, String namespace) throws IOException {
    return Cli.kubeconfig(dir, server, namespace);
  }

  static int closedPort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }

  @Test
  void anUnreachableApiServerIsOneLineAndExit1() throws IOException {
    int port = closedPort();
    Path config = kubeconfig("http://127.0.0.1:" + port, "agents");
    long start = System.nanoTime();

    for (String[] args : new String[][] {{"status", "coder"}, {"restart", "coder", "--reason", "x"},
        {"restart", "--all-failed"}, {"resume", "coder", "--force"}, {"verify-restarted", "coder", "--since", "5m"}}) {
      String[] all = java.util.stream.Stream.concat(java.util.Arrays.stream(args),
          java.util.stream.Stream.of("--kubeconfig", config.toString(), "-o", "json")).toArray(String[]::new);
      Cli.Result r = Cli.run(PluginEnvironment.system(), all);

      assertThat(r.exit()).as(r.toString()).isEqualTo(1);
      assertThat(r.err()).as(r.toString()).startsWith("error: cannot reach the Kubernetes API at http://127.0.0.1:"
          + port + "/: ");
      assertThat(r.err().lines()).as(r.toString()).hasSize(1);
      assertThat(r.err()).doesNotContain("Exception", "\tat ");
      assertThat(r.out()).isEmpty();
    }
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(20));
  }

  @Test
  void aMissingKubeconfigSaysSo() {
    Cli.Result r = Cli.run(PluginEnvironment.system(), "status", "coder", "--kubeconfig",
        dir.resolve("absent").toString());

    assertThat(r.exit()).isEqualTo(1);
    assertThat(r.err()).isEqualTo("error: kubeconfig " + dir.resolve("absent") + " not found"
        + System.lineSeparator());
  }

  @Test
  void theKubeconfigGivesTheServerAndTheDefaultNamespace() throws IOException {
    Instances.create(API.client(), "from-kubeconfig", "coder", null, "phase: Running");
    Path config = kubeconfig(API.url(), "from-kubeconfig");

    Cli.Result found = Cli.run(PluginEnvironment.system(), "status", "coder", "--kubeconfig", config.toString(),
        "-o", "json");
    Cli.Result missing = Cli.run(PluginEnvironment.system(), "status", "coder", "--kubeconfig", config.toString(),
        "-n", "other");

    assertThat(found.exit()).as(found.toString()).isZero();
    assertThat(found.json().get("namespace").asText()).isEqualTo("from-kubeconfig");
    assertThat(missing.exit()).isEqualTo(1);
    assertThat(missing.err()).contains("agentinstance \"coder\" not found in namespace \"other\"");
  }

  @Test
  void anInjectedClientPointedAtAClosedPortFailsTheSameWay() throws IOException {
    int port = closedPort();
    var client = API.newClient(b -> b.withMasterUrl("http://127.0.0.1:" + port).withRequestRetryBackoffLimit(0));

    Cli.Result r = Cli.run(PluginEnvironment.using(client, InstantSource.system()), "status", "coder");

    assertThat(r.exit()).isEqualTo(1);
    assertThat(r.err()).startsWith("error: cannot reach the Kubernetes API at http://127.0.0.1:" + port);
    assertThat(r.err()).doesNotContain("\tat ");
  }
}

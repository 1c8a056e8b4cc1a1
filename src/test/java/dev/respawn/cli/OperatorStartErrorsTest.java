package dev.respawn.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.testsupport.MockApi;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The operator command, run as its own process the way the jar runs it, when it cannot start: one {@code error:}
 * line that says what to do, exit code 1, no stack trace.
 */
class OperatorStartErrorsTest {
  @RegisterExtension
  static final MockApi API = new MockApi();

  @TempDir
  Path dir;

  record Exit(int code, String out, String err) {}

  Exit operator(String... flags) throws Exception {
    Path config = Cli.kubeconfig(dir, API.url(), "test");
    List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp", System.getProperty("java.class.path"), RespawnCommand.class.getName(), "operator"));
    command.addAll(List.of(flags));
    ProcessBuilder builder = new ProcessBuilder(command).redirectOutput(dir.resolve("out").toFile())
        .redirectError(dir.resolve("err").toFile());
    builder.environment().put("KUBECONFIG", config.toString());
    Process process = builder.start();
    try {
      assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("the operator stops by itself").isTrue();
    } finally {
      process.destroyForcibly();
    }
    return new Exit(process.exitValue(), Files.readString(dir.resolve("out"), StandardCharsets.UTF_8),
        Files.readString(dir.resolve("err"), StandardCharsets.UTF_8));
  }

  @Test
  void aMetricsPortInUseIsOneLineNamingTheFlag() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("0.0.0.0"))) {
      Exit exit = operator("--metrics-port", String.valueOf(taken.getLocalPort()));
      assertThat(exit.code()).as(exit.toString()).isEqualTo(1);
      assertThat(exit.err()).as(exit.toString()).isEqualTo("error: port " + taken.getLocalPort() + " of /metrics, "
          + "/healthz and /readyz is in use: choose another with --metrics-port, or -1 to turn the endpoint off"
          + System.lineSeparator());
    }
  }

  /** A default policy in a namespace the operator does not watch could never be seen: refused at the start. */
  @Test
  void aDefaultPolicyOutsideTheWatchedNamespacesIsRefusedNamingBothFlags() throws Exception {
    Exit exit = operator("--namespaces", "team-a,team-b", "--default-policy", "policies/std", "--metrics-port", "-1");
    assertThat(exit.code()).as(exit.toString()).isEqualTo(1);
    assertThat(exit.err()).as(exit.toString()).isEqualTo("error: --default-policy policies/std is in namespace "
        + "policies, which --namespaces team-a,team-b does not include: the operator would not see it, and every "
        + "instance without spec.policyRef would be refused; add policies to --namespaces, or name a policy without "
        + "a namespace (one in each instance's own)" + System.lineSeparator());
  }

  /** A default policy that is no policy reference at all (a trailing slash: the name left out) is a usage error. */
  @Test
  void aDefaultPolicyThatIsNoPolicyReferenceIsAUsageError() throws Exception {
    Exit exit = operator("--default-policy", "policies/", "--metrics-port", "-1");
    assertThat(exit.code()).as(exit.toString()).isEqualTo(2);
    assertThat(exit.err()).as(exit.toString()).isEqualTo("error: --default-policy policies/ is not NAME or "
        + "NAMESPACE/NAME (a namespace is a DNS-1123 label, a policy name a DNS-1123 subdomain)"
        + System.lineSeparator());
  }

  @org.junit.jupiter.params.ParameterizedTest
  @org.junit.jupiter.params.provider.ValueSource(strings = {"70000", "0", "-7"})
  void aMetricsPortThatIsNoPortIsAUsageErrorNamingTheFlag(String port) throws Exception {
    Exit exit = operator("--metrics-port", port);
    assertThat(exit.code()).as(exit.toString()).isEqualTo(2);
    assertThat(exit.err()).as(exit.toString()).isEqualTo("error: --metrics-port " + port + " is not a port: 1 to "
        + "65535, or -1 to turn the endpoint off" + System.lineSeparator());
  }

  @Test
  void anEmptyNamespacesFlagIsRefusedNotReadAsAllNamespaces() throws Exception {
    Exit exit = operator("--namespaces", "", "--metrics-port", "-1");
    assertThat(exit.code()).as(exit.toString()).isEqualTo(2);
    assertThat(exit.err()).as(exit.toString()).isEqualTo("error: --namespaces names no namespace; leave the flag out "
        + "to watch all namespaces" + System.lineSeparator());
  }

  @Test
  void aLeaseNameThatCannotExistIsRefusedNamingTheFlag() throws Exception {
    Exit exit = operator("--leader-election", "--leader-election-lease", "Team_A", "--metrics-port", "-1");
    assertThat(exit.code()).as(exit.toString()).isEqualTo(2);
    assertThat(exit.err()).as(exit.toString()).contains("--leader-election-lease: Team_A is not a Lease name");
    Exit dots = operator("--leader-election", "--leader-election-lease", "team..a", "--metrics-port", "-1");
    assertThat(dots.code()).as(dots.toString()).isEqualTo(2);
  }

  /** A Lease named while leader election is off elects nothing: the operator says so (and acts, as it would). */
  @Test
  void leaseFlagsWithoutLeaderElectionAreReportedAsDoingNothing() throws Exception {
    // the port refusal ends the start after the flags were read
    Exit exit = operator("--leader-election-lease", "respawn-team-a", "--metrics-port", "65536");
    assertThat(exit.code()).as(exit.toString()).isEqualTo(2);
    assertThat(exit.out() + exit.err()).as(exit.toString()).contains("--leader-election-namespace and "
        + "--leader-election-lease do nothing without --leader-election");
    Exit elected = operator("--leader-election", "--leader-election-lease", "respawn-team-a", "--metrics-port", "0");
    assertThat(elected.out() + elected.err()).as(elected.toString()).doesNotContain("do nothing without");
  }

  @Test
  void aNamespaceThatCannotExistIsRefused() throws Exception {
    Exit exit = operator("--namespaces", "team-a,Bad_NS", "--metrics-port", "-1");
    assertThat(exit.code()).as(exit.toString()).isEqualTo(2);
    assertThat(exit.err()).as(exit.toString()).startsWith("error: --namespaces: Bad_NS is not a namespace name");
  }

  /**
   * JOSDK asks the API server whether it may use Leases before it elects (a SelfSubjectRulesReview); a server that
   * refuses that question (the mock API server answers 422) stops the start, and the error says why and where.
   */
  @Test
  void leaderElectionThatCannotAskForItsPermissionsSaysWhy() throws Exception {
    Exit exit = operator("--leader-election", "--leader-election-namespace", "ops", "--metrics-port", "-1");
    assertThat(exit.code()).as(exit.toString()).isEqualTo(1);
    assertThat(exit.err().lines()).as(exit.toString()).hasSize(1);
    assertThat(exit.err()).as(exit.toString()).startsWith("error: the operator could not start with --leader-election "
        + "(it first asks the API server, by a SelfSubjectRulesReview, whether it may get, create and update Leases "
        + "in namespace ops): the Kubernetes API answered 422").doesNotContain("\tat ");
  }
}

package dev.respawn.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.api.v1alpha1.BackoffSpec;
import dev.respawn.simulate.EndingType;
import dev.respawn.testsupport.MockApi;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code respawn simulate} run in-process through the top-level command, as the jar runs it. */
class SimulateCommandTest {
  static final String EXAMPLE = "examples/01-coding-agent-exponential.yaml";
  static final String STORY = "exit:1,exit:1,oom,exit:42,heartbeat-stall,ok:15m,exit:1";

  @RegisterExtension
  static final MockApi API = new MockApi();

  @TempDir
  Path tmp;

  record Result(int exitCode, String out, String err) {}

  static Result run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cli = new CommandLine(RespawnCommand.class);
    cli.setOut(new PrintWriter(out));
    cli.setErr(new PrintWriter(err));
    int code = cli.execute(args);
    return new Result(code, out.toString(), err.toString());
  }

  @Test
  void aTableForTheExamplePolicy() throws Exception {
    Result r = run("simulate", "-f", EXAMPLE, "--story", STORY, "--seed", "7");

    assertThat(r.exitCode()).as(r.err()).isZero();
    assertThat(r.err()).isEmpty();
    assertThat(r.out()).startsWith("Policy:   agents/coding-agent (" + EXAMPLE + "), tier Enterprise\n")
        .contains("RUN   STORY ", "retries_exhausted", "Escalated (RestartLimitExceeded)",
            "Not reached: exit:42, heartbeat-stall, ok:15m, exit:1");
    // the same table as the golden file of the example (which the golden test compares in full)
    String golden = Files.readString(Path.of("src/test/resources/simulate/golden/01-coding-agent-exponential.txt"),
        StandardCharsets.UTF_8);
    assertThat(golden).contains(r.out());
  }

  @Test
  void anInvalidPolicyExitsTwoNamingTheFieldAndTheRule() {
    Result r = run("simulate", "-f", "src/test/resources/simulate/policies/invalid.yaml", "--story", "exit:1");

    assertThat(r.exitCode()).isEqualTo(2);
    assertThat(r.out()).isEmpty();
    assertThat(r.err().strip()).isEqualTo("error: AgentRestartPolicy broken is invalid: spec.backoff.maxDelay: must "
        + "be >= spec.backoff.initialDelay");
  }

  @Test
  void thePolicyIsValidatedBeforeTheStory() {
    Result r = run("simulate", "-f", "src/test/resources/simulate/policies/invalid.yaml", "--story", "bogus");

    assertThat(r.exitCode()).isEqualTo(2);
    assertThat(r.err()).contains("spec.backoff.maxDelay").doesNotContain("bogus");
  }

  @Test
  void anUnknownTokenExitsTwoNamingItAndTheAcceptedForms() {
    Result r = run("simulate", "-f", EXAMPLE, "--story", "exit:1,kaboom,ok");

    assertThat(r.exitCode()).isEqualTo(2);
    assertThat(r.out()).isEmpty();
    assertThat(r.err()).startsWith("error: unknown story token \"kaboom\" (step 2); accepted forms: ")
        .contains("exit:N[:MESSAGE]", "oom", "heartbeat-stall", "never-started", "ok[:DURATION]", "@DURATION");
    assertThat(r.err().lines()).hasSize(1);
  }

  @Test
  void theSameSeedGivesTheSameOutputAnotherSeedAnotherOne() {
    Result a = run("simulate", "-f", EXAMPLE, "--story", STORY, "--seed", "42");
    Result b = run("simulate", "-f", EXAMPLE, "--story", STORY, "--seed", "42");
    Result c = run("simulate", "-f", EXAMPLE, "--story", STORY, "--seed", "43");

    assertThat(a.exitCode()).isZero();
    assertThat(b.out()).isEqualTo(a.out());
    assertThat(c.out()).isNotEqualTo(a.out());
    assertThat(a.out()).contains("Seed:     42");
  }

  @Test
  void withoutASeedTheJitterSeedIsPrinted() {
    Result r = run("simulate", "-f", EXAMPLE, "--story", "exit:1");

    assertThat(r.out()).containsPattern("Seed: +\\d+\n");
  }

  @Test
  void withoutJitterTheOutputNeverChanges() {
    String[] args = {"simulate", "-f", "examples/02-permanent-failures.yaml", "--story", STORY};

    Result first = run(args);
    assertThat(first.exitCode()).isZero();
    assertThat(first.out()).doesNotContain("Seed:");
    for (int i = 0; i < 3; i++) {
      assertThat(run(args).out()).isEqualTo(first.out());
    }
  }

  @Test
  void jsonAndYaml() throws Exception {
    Result json = run("simulate", "-f", EXAMPLE, "--story", "exit:1,ok", "--seed", "1", "-o", "json");
    Result yaml = run("simulate", "-f", EXAMPLE, "--story", "exit:1,ok", "--seed", "1", "-o", "yaml");

    JsonNode j = new ObjectMapper().readTree(json.out());
    assertThat(j.path("policy").path("name").asText()).isEqualTo("coding-agent");
    assertThat(j.path("seed").asLong()).isEqualTo(1);
    assertThat(j.path("runs").get(0).path("reasonCode").asText()).isEqualTo("restart_scheduled");
    assertThat(j.path("summary").path("outcome").asText()).isEqualTo("Healthy");
    assertThat(new YAMLMapper().readTree(yaml.out())).isEqualTo(j);
  }

  @Test
  void aStoryFile() {
    Result r = run("simulate", "-f", "examples/03-heartbeat-resume.yaml", "--story",
        "src/test/resources/simulate/stories/resume.yaml");

    assertThat(r.exitCode()).as(r.err()).isZero();
    assertThat(r.out()).contains("resume_blocked_cooldown", "resumes from ckpt-3 (cool-down 30s)",
        "Outcome:  Healthy");
    assertThat(run("simulate", "-f", EXAMPLE, "--story", "missing.yaml").err())
        .isEqualTo("error: story file missing.yaml not found\n");
  }

  @Test
  void aPolicyOnStandardInput() throws Exception {
    var stdin = System.in;
    try {
      System.setIn(Files.newInputStream(Path.of("examples/04-restart-request-exit-42.yaml")));
      Result r = run("simulate", "-f", "-", "--story", "exit:42,exit:1");

      assertThat(r.exitCode()).as(r.err()).isZero();
      assertThat(r.out()).contains("agents/self-restarting (stdin)", "restart_requested");
    } finally {
      System.setIn(stdin);
    }
  }

  @Test
  void theTierGateIsTheOperators() {
    Result r = run("simulate", "-f", EXAMPLE, "--story", "exit:1", "--tier", "WriterPro");

    assertThat(r.exitCode()).isZero();
    assertThat(r.out()).contains("Warning:  spec.backoff.type: Exponential is not available on tier WriterPro; "
        + "served as Linear (Accepted=False, reason TierRestricted)", "backoff Linear 2s");
  }

  @Test
  void usageErrorsExitTwo() {
    assertThat(run("simulate", "--story", "exit:1").exitCode()).isEqualTo(2);
    assertThat(run("simulate", "--story", "exit:1").err()).contains("-f FILE, or --policy NAME");
    assertThat(run("simulate", "-f", EXAMPLE).exitCode()).as("--story is required").isEqualTo(2);
    assertThat(run("simulate", "-f", EXAMPLE, "--story", "ok", "-o", "xml").exitCode()).isEqualTo(2);
    Result missing = run("simulate", "-f", "nope.yaml", "--story", "ok");
    assertThat(missing.exitCode()).isEqualTo(2);
    assertThat(missing.err()).isEqualTo("error: policy file nope.yaml not found\n");
    Result wrongName = run("simulate", "-f", EXAMPLE, "--policy", "other", "--story", "ok");
    assertThat(wrongName.exitCode()).isEqualTo(2);
    assertThat(wrongName.err()).contains("has no AgentRestartPolicy named other (it has: coding-agent)");
  }

  @Test
  void helpDocumentsTheGrammar() {
    Result r = run("simulate", "--help");

    assertThat(r.exitCode()).isZero();
    for (EndingType t : EndingType.values()) {
      assertThat(r.out()).contains(t.form());
    }
    assertThat(r.out()).contains("@DURATION", "checkpointStatus", "Exit codes: 0");
  }

  @Test
  void aPolicyFromTheCluster() throws Exception {
    AgentRestartPolicy p = new AgentRestartPolicy();
    p.setMetadata(new ObjectMetaBuilder().withName("from-cluster").withNamespace("agents").build());
    p.setSpec(new AgentRestartPolicySpec());
    p.getSpec().backoff = new BackoffSpec();
    p.getSpec().backoff.type = "Linear";
    p.getSpec().backoff.initialDelay = "3s";
    API.client().resource(p).create();
    Path kubeconfig = kubeconfig(API.url());

    Result r = run("simulate", "--policy", "from-cluster", "-n", "agents", "--kubeconfig", kubeconfig.toString(),
        "--story", "exit:1,exit:1");

    assertThat(r.exitCode()).as(r.err()).isZero();
    assertThat(r.out()).contains("Policy:   agents/from-cluster (cluster ", "backoff Linear 3s", "+3s", "+9s");
  }

  /** A policy the operator refuses (a quoted number, stored where the schema was skipped) is not simulated. */
  @Test
  void aPolicyFromTheClusterWithAQuotedNumberIsRefusedAsTheOperatorRefusesIt() throws Exception {
    var quoted = new io.fabric8.kubernetes.api.model.GenericKubernetesResource();
    quoted.setApiVersion("respawn.dev/v1alpha1");
    quoted.setKind("AgentRestartPolicy");
    quoted.setMetadata(new ObjectMetaBuilder().withName("quoted").withNamespace("agents").build());
    quoted.setAdditionalProperties(java.util.Map.of("spec", java.util.Map.of("maxRetries", "3")));
    API.client().genericKubernetesResources("respawn.dev/v1alpha1", "AgentRestartPolicy").inNamespace("agents")
        .resource(quoted).create();
    Path kubeconfig = kubeconfig(API.url());

    Result r = run("simulate", "--policy", "quoted", "-n", "agents", "--kubeconfig", kubeconfig.toString(),
        "--story", "exit:1");

    assertThat(r.exitCode()).isEqualTo(1);
    assertThat(r.err()).isEqualTo("error: AgentRestartPolicy agents/quoted is invalid (the operator refuses it): "
        + "spec.maxRetries: must be an integer (got \"3\")\n");
  }

  @Test
  void clusterErrorsExitOne() throws Exception {
    Path kubeconfig = kubeconfig(API.url());
    Result notFound = run("simulate", "--policy", "absent", "-n", "agents", "--kubeconfig", kubeconfig.toString(),
        "--story", "exit:1");
    assertThat(notFound.exitCode()).isEqualTo(1);
    assertThat(notFound.err()).isEqualTo("error: AgentRestartPolicy agents/absent not found\n");

    Result unreachable = run("simulate", "--policy", "p", "--kubeconfig", kubeconfig("http://127.0.0.1:1/")
        .toString(), "--story", "exit:1");
    assertThat(unreachable.exitCode()).isEqualTo(1);
    assertThat(unreachable.err()).startsWith("error: cannot read AgentRestartPolicy default/p from the Kubernetes "
        + "API at http://127.0.0.1:1/").doesNotContain("\tat ");
    assertThat(unreachable.err().lines()).hasSize(1);

    Result noConfig = run("simulate", "--policy", "p", "--kubeconfig", tmp.resolve("none").toString(), "--story",
        "exit:1");
    assertThat(noConfig.exitCode()).isEqualTo(1);
    assertThat(noConfig.err()).contains("kubeconfig").contains("not found");
  }

  /** docs/simulate.md: --policy without -n reads the kubeconfig context's namespace, as kubectl does; -n wins. */
  @Test
  void withoutNamespaceTheKubeconfigContextsNamespaceIsUsed() throws Exception {
    AgentRestartPolicy p = new AgentRestartPolicy();
    p.setMetadata(new ObjectMetaBuilder().withName("in-context").withNamespace("team").build());
    p.setSpec(new AgentRestartPolicySpec());
    API.client().resource(p).create();
    Path kubeconfig = kubeconfig(API.url());
    Files.writeString(kubeconfig, Files.readString(kubeconfig).replace("namespace: default", "namespace: team"));

    Result r = run("simulate", "--policy", "in-context", "--kubeconfig", kubeconfig.toString(), "--story", "exit:1",
        "--seed", "1");
    assertThat(r.exitCode()).as(r.err()).isZero();
    assertThat(r.out()).startsWith("Policy:   team/in-context (cluster ");

    Result other = run("simulate", "--policy", "in-context", "-n", "elsewhere", "--kubeconfig",
        kubeconfig.toString(), "--story", "exit:1");
    assertThat(other.exitCode()).isEqualTo(1);
    assertThat(other.err()).isEqualTo("error: AgentRestartPolicy elsewhere/in-context not found\n");
  }

  private Path kubeconfig(String server) throws Exception {
    Path file = Files.createTempFile(tmp, "kubeconfig", ".yaml");
    Files.writeString(file, """
        apiVersion: v1
        kind: Config
        clusters:
        - name: test
          cluster: {server: "%s"}
        contexts:
        - name: test
          context: {cluster: test, user: test, namespace: default}
        current-context: test
        users:
        - name: test
          user: {token: test}
        """.formatted(server));
    return file;
  }
}

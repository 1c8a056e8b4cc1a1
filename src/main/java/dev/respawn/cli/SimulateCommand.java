package dev.respawn.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import dev.respawn.policy.PolicyCompiler;
import dev.respawn.policy.PolicyInvalidException;
import dev.respawn.policy.Tier;
import dev.respawn.simulate.PolicyFile;
import dev.respawn.simulate.PolicyFile.Loaded;
import dev.respawn.simulate.PolicyFile.PolicyFileException;
import dev.respawn.simulate.Simulation;
import dev.respawn.simulate.SimulationReport;
import dev.respawn.simulate.Story;
import dev.respawn.simulate.StoryException;
import dev.respawn.simulate.StoryParser;
import dev.respawn.simulate.StoryYaml;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code kubectl respawn simulate}: what a policy will do with a scripted failure story, computed by
 * the operator's own decision core over virtual time, before anyone applies the policy.
 */
@Command(name = "simulate", mixinStandardHelpOptions = true, sortOptions = false,
    description = {"Show what an AgentRestartPolicy will do with a scripted failure story, before anyone "
        + "applies it.",
        "Runs the operator's own decision core over virtual time: t=0 is the start of the first run, each story "
            + "step ends the current run, the next run starts when the policy says."})
public final class SimulateCommand implements Callable<Integer> {
  static final int OK = 0;
  static final int CLUSTER_ERROR = 1;
  static final int INVALID = 2;
  static final int CONNECTION_TIMEOUT_MS = 5_000;
  static final int REQUEST_TIMEOUT_MS = 15_000;

  /** {@code -o}. */
  enum Format { table, json, yaml }

  @Option(names = {"-f", "--filename"}, paramLabel = "FILE",
      description = "YAML file with an AgentRestartPolicy (one object, or a multi-document file such as "
          + "examples/*.yaml: the first AgentRestartPolicy, or the one named by --policy); - reads stdin.")
  String file;

  @Option(names = "--policy", paramLabel = "NAME",
      description = "Without -f: read the AgentRestartPolicy NAME from the cluster. With -f: pick it from FILE.")
  String policyName;

  @Option(names = {"-n", "--namespace"}, paramLabel = "NAMESPACE",
      description = "Namespace of --policy (default: the kubeconfig's namespace, else default).")
  String namespace;

  @Option(names = "--kubeconfig", paramLabel = "PATH",
      description = "Kubeconfig file for --policy (default: $KUBECONFIG, ~/.kube/config, or in-cluster).")
  Path kubeconfig;

  @Option(names = "--story", paramLabel = "STORY",
      description = "The failure story (required): the compact form (see below), or a YAML story file. A fleet "
          + "story (many instances, an outage of a shared dependency): simulate fleet --help.")
  String story;

  @Option(names = {"-o", "--output"}, paramLabel = "FORMAT", defaultValue = "table",
      description = "Output format: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE}).")
  Format output = Format.table;

  @Option(names = "--seed", paramLabel = "N",
      description = "Jitter seed: the same seed gives the same delays (default: a random seed, printed).")
  Long seed;

  @Option(names = "--tier", defaultValue = "Enterprise", paramLabel = "TIER",
      description = "License tier, the operator's soft gate: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE}).")
  Tier tier = Tier.Enterprise;

  private CommandSpec spec;

  @Spec
  void spec(CommandSpec s) {
    this.spec = s;
    s.usageMessage().footer(SimulateUsage.footer());
  }


  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    if (story == null) { // not required by picocli: `simulate fleet` comes without it
      return fail(err, INVALID, "missing --story STORY, the failure story of one agent (see 'respawn simulate "
          + "--help'); a fleet story: respawn simulate fleet -f FILE");
    }
    try {
      Loaded loaded = loadPolicy();
      SimulationReport report;
      try {
        PolicyCompiler.compile(loaded.spec()); // the policy first, with the operator's rules and messages
        report = Simulation.simulate(loaded, loadStory(), tier, seed);
      } catch (PolicyInvalidException e) {
        return fail(err, INVALID, "AgentRestartPolicy " + loaded.name() + " is invalid: " + e.getMessage());
      }
      out.print(switch (output) {
        case json -> report.toJson();
        case yaml -> report.toYaml();
        case table -> report.toTable();
      });
      out.flush();
      return OK;
    } catch (Failure e) {
      return fail(err, e.exitCode, e.getMessage());
    } catch (StoryException | PolicyFileException e) {
      return fail(err, INVALID, e.getMessage());
    } catch (RuntimeException e) { // a bug: still one line, no stack trace
      return fail(err, CLUSTER_ERROR, "the simulation failed: " + e);
    }
  }

  private Loaded loadPolicy() throws PolicyFileException {
    if (file == null && policyName == null) {
      throw new Failure(INVALID, "give the policy: -f FILE, or --policy NAME [-n NAMESPACE] to read it from the "
          + "cluster");
    }
    if (file != null) {
      return PolicyFile.read(readFile(file, "policy file"), "-".equals(file) ? "stdin" : file, policyName);
    }
    return fromCluster();
  }

  private Story loadStory() throws StoryException {
    Path path = null;
    try {
      path = Path.of(story);
    } catch (InvalidPathException e) {
      // not a path: the compact form
    }
    String lower = story.toLowerCase(Locale.ROOT);
    boolean named = lower.endsWith(".yaml") || lower.endsWith(".yml");
    if (path != null && Files.isRegularFile(path)) {
      return StoryYaml.parse(readFile(story, "story file"), story);
    }
    if (named) {
      throw new Failure(INVALID, "story file " + story + " not found");
    }
    return StoryParser.parse(story);
  }

  private String readFile(String name, String what) {
    try {
      if ("-".equals(name)) {
        InputStream in = System.in;
        return new String(in.readAllBytes(), StandardCharsets.UTF_8);
      }
      Path p = Path.of(name);
      if (!Files.isRegularFile(p)) {
        throw new Failure(INVALID, what + " " + name + " not found");
      }
      return Files.readString(p, StandardCharsets.UTF_8);
    } catch (IOException | InvalidPathException e) {
      throw new Failure(INVALID, "cannot read " + what + " " + name + ": " + e.getMessage());
    }
  }

  /** --policy NAME [-n NS] [--kubeconfig P]: the policy as the cluster has it. */
  private Loaded fromCluster() {
    quietLibraryLogs();
    Config config;
    if (kubeconfig != null) {
      if (!Files.isRegularFile(kubeconfig)) {
        throw new Failure(CLUSTER_ERROR, "kubeconfig " + kubeconfig + " not found");
      }
      try {
        config = Config.fromKubeconfig(kubeconfig.toFile());
      } catch (RuntimeException e) {
        throw new Failure(CLUSTER_ERROR, "cannot read kubeconfig " + kubeconfig + ": " + rootMessage(e));
      }
    } else {
      config = Config.autoConfigure(null);
    }
    config.setConnectionTimeout(CONNECTION_TIMEOUT_MS);
    config.setRequestTimeout(REQUEST_TIMEOUT_MS);
    config.setRequestRetryBackoffLimit(0);
    String ns = namespace != null && !namespace.isBlank() ? namespace
        : config.getNamespace() != null && !config.getNamespace().isBlank() ? config.getNamespace() : "default";
    String where = "AgentRestartPolicy " + ns + "/" + policyName;
    // read as the operator reads it: a field of the wrong JSON type is reported, not coerced (api.md §9)
    try (KubernetesClient client = new KubernetesClientBuilder().withConfig(config)
        .withKubernetesSerialization(dev.respawn.controller.TolerantResources.serialization()).build()) {
      AgentRestartPolicy found = client.resources(AgentRestartPolicy.class).inNamespace(ns).withName(policyName).get();
      if (found == null) {
        throw new Failure(CLUSTER_ERROR, where + " not found");
      }
      if (!found.unreadable().describe().isEmpty()) {
        throw new Failure(CLUSTER_ERROR, where + " is invalid (the operator refuses it): "
            + found.unreadable().describe());
      }
      return new Loaded(policyName, ns, "cluster " + config.getMasterUrl(), found.getSpec());
    } catch (KubernetesClientException e) {
      String detail = e.getCode() > 0 && e.getStatus() != null && e.getStatus().getMessage() != null
          ? e.getCode() + ": " + e.getStatus().getMessage() : rootMessage(e);
      throw new Failure(CLUSTER_ERROR, "cannot read " + where + " from the Kubernetes API at "
          + config.getMasterUrl() + ": " + detail);
    }
  }

  /** fabric8 logs its warnings where -o json goes; this command reports its own errors. */
  private static void quietLibraryLogs() {
    if (LoggerFactory.getILoggerFactory() instanceof LoggerContext context) {
      context.getLogger("io.fabric8").setLevel(Level.OFF);
    }
  }

  private static String rootMessage(Throwable e) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String m = root.getMessage();
    return m == null || m.isBlank() ? root.getClass().getSimpleName() : m;
  }

  private static int fail(PrintWriter err, int code, String message) {
    err.println("error: " + message);
    err.flush();
    return code;
  }

  /** Ends the command with one line on stderr and an exit code. */
  private static final class Failure extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final int exitCode;

    Failure(int exitCode, String message) {
      super(message, null, false, false);
      this.exitCode = exitCode;
    }
  }
}

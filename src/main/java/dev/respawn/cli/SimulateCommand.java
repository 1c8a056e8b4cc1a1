package dev.respawn.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import dev.respawn.policy.PolicyCompiler;
import dev.respawn.policy.PolicyInvalidException;
import dev.respawn.policy.Tier;
import dev.respawn.simulate.EndingType;
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
import java.util.ArrayList;
import java.util.List;
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
    s.usageMessage().footer(footer());
  }

  /** The story grammar, the file form and the exit codes, for --help (lines fit 80 columns). */
  static String[] footer() {
    List<String> lines = new ArrayList<>();
    lines.add("");
    lines.add("Story, compact form: steps separated by commas; each ends the current run.");
    for (EndingType t : EndingType.values()) {
      wrap(lines, String.format(Locale.ROOT, "  %-17s ", t.form()), t.description());
    }
    wrap(lines, "  ", "An ending may end in @DURATION: how long the run lasted before it (default 0s), e.g. "
        + "exit:1@30s. DURATION is a Go duration: 500ms, 30s, 15m, 1h30m. Exit code 0 ends the story "
        + "(Succeeded); the policy's restartRequestExitCode (default 42) asks for a restart, not a failure.");
    lines.add("  Example: --story exit:1,exit:1,oom,exit:42,heartbeat-stall,ok:15m,exit:1");
    lines.add("");
    lines.add("Story, file form (STORY is an existing file or ends in .yaml/.yml), a list:");
    lines.add("  - ending: exit          # an ending above; also \"exit:1@30s\", \"ok:15m\"");
    lines.add("    exitCode: 1           # exit (required), oom (137), deadline, evicted");
    lines.add("    reason: Error         # container/pod reason: exit, evicted, no-state");
    lines.add("    message: \"...\"        # termination message (stalled, crashed: detail)");
    lines.add("    after: 30s            # how long the run lasted (ok: how long healthy)");
    lines.add("    checkpoint: ckpt-3    # Lease annotations of the run: checkpoint,");
    lines.add("    checkpointStatus: in_progress   # in_progress | failed | complete,");
    lines.add("    stepIdempotent: true  # step-idempotent,");
    lines.add("    artifactsReady: true  # artifacts-ready");
    lines.add("");
    wrap(lines, "", "Each row: the run, its story step, when it ended (AT, from t=0), class/failureReason, "
        + "the decision and its reason code, the delay and the time of the next start, attempt/limit, circuit "
        + "and phase. A terminal phase (Escalated, Failed, Succeeded), or a run the operator cannot see ending, "
        + "stops the story: the remaining steps are listed as not reached. Without jitter the output never "
        + "changes.");
    lines.add("");
    lines.add("Exit codes: 0 simulated; 2 invalid policy, story or usage; 1 cluster error.");
    lines.add("");
    wrap(lines, "", "A fleet story (N instances of one policy, an outage of a shared dependency): simulate fleet "
        + "-f FILE [--instances N] [--outage-start D] [--outage-end D] (see simulate fleet --help).");
    return lines.toArray(String[]::new);
  }

  /** Adds {@code text} after {@code head}, wrapped at 79 columns, continuation lines aligned with it. */
  private static void wrap(List<String> lines, String head, String text) {
    String indent = " ".repeat(head.length());
    StringBuilder line = new StringBuilder(head);
    for (String word : text.split(" ")) {
      if (line.length() > head.length() && line.length() + 1 + word.length() > 79) {
        lines.add(line.toString());
        line = new StringBuilder(indent);
      }
      if (line.length() > indent.length()) {
        line.append(' ');
      }
      line.append(word);
    }
    lines.add(line.toString());
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

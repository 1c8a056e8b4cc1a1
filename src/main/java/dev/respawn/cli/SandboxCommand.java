package dev.respawn.cli;

import dev.respawn.sandbox.Sandbox;
import dev.respawn.sandbox.TimeScale;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code respawn sandbox}: the whole lifecycle on a laptop, no cluster needed. */
@Command(name = "sandbox", mixinStandardHelpOptions = true,
    description = {"Start a local API server, the CRDs, the operator, a simulated kubelet and examples/, and "
        + "narrate the lifecycle (failures, backoff, circuit open, exit 42, escalation, resume).",
        "Durations of the example policies are compressed by --time-scale so minutes pass in seconds."})
public final class SandboxCommand implements Callable<Integer> {
  @Spec
  picocli.CommandLine.Model.CommandSpec spec;

  @Option(names = "--follow", description = "Keep running after the story, until Ctrl-C.")
  boolean follow;

  @Option(names = "--examples", description = "Directory of the examples (default: examples/ if present, else "
      + "the copy in the jar).")
  Path examples;

  @Option(names = "--kubeconfig-out", defaultValue = "respawn-sandbox.kubeconfig",
      description = "Where to write the kubeconfig for kubectl and kubectl-respawn (default: ${DEFAULT-VALUE}).")
  Path kubeconfigOut;

  @Option(names = "--port", defaultValue = "0", description = "Port of the local API server (default: any free).")
  int port;

  @Option(names = "--time-scale", defaultValue = "10", description = "Divide the policies' durations by this "
      + "(default: ${DEFAULT-VALUE}).")
  double timeScale;

  @Option(names = "--timeout", defaultValue = "180", description = "Seconds to wait for the story "
      + "(default: ${DEFAULT-VALUE}).")
  long timeoutSeconds;

  @Override
  public Integer call() throws Exception {
    PrintWriter out = spec.commandLine().getOut();
    quietFrameworkLogs();
    Optional<Path> dir = Optional.ofNullable(examples).or(() -> Optional.of(Path.of("examples"))
        .filter(Files::isDirectory));
    try (Sandbox sandbox = new Sandbox(out, port, new TimeScale(timeScale))) {
      Path kubeconfig = sandbox.api().writeKubeconfig(kubeconfigOut);
      out.println("Respawn sandbox: API server " + sandbox.api().url() + " (fabric8 mock, CRUD mode, with discovery,"
          + " tables and watches for kubectl)");
      out.println("kubeconfig: " + kubeconfig.toAbsolutePath() + "  e.g. KUBECONFIG=" + kubeconfig
          + " kubectl get agentinstances -n agents  (--follow keeps the sandbox up)");
      out.println("durations of the example policies compressed " + timeScale + "x");
      sandbox.start(dir);
      boolean complete = sandbox.await(Duration.ofSeconds(timeoutSeconds), Duration.ofSeconds(10));
      sandbox.printTable();
      if (complete) {
        out.println("The whole lifecycle happened: retries with backoff and recovery (coder), a permanent "
            + "failure (reviewer), a heartbeat stall resumed from its checkpoint (researcher), restarts "
            + "asked for with exit code 42 (tdd), a latched circuit resumed by an operator (worker), a fleet that "
            + "waited out an outage of its shared model API, probed and released (fleet-0..3).");
      } else {
        out.println("The story did not complete within " + timeoutSeconds + "s; still waiting: "
            + sandbox.unfinished());
      }
      if (follow) {
        out.println("Following (Ctrl-C to stop) ...");
        CountDownLatch forever = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(forever::countDown));
        forever.await();
      }
      return complete ? 0 : 1;
    }
  }

  /** The narration is the sandbox's output: the frameworks' INFO lines would drown it. */
  /** The narrator tells the story: the frameworks' chatter and the operator's decision and audit logs stay quiet. */
  private static void quietFrameworkLogs() {
    for (String name : new String[] {"io.javaoperatorsdk", "io.fabric8", "Default ConfigurationService implementation",
        "respawn.decision", "respawn.audit", "dev.respawn"}) {
      org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(name);
      if (log instanceof ch.qos.logback.classic.Logger logback) {
        logback.setLevel(name.startsWith("respawn.") ? ch.qos.logback.classic.Level.OFF
            : ch.qos.logback.classic.Level.WARN);
      }
    }
  }
}

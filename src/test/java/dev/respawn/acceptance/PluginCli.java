package dev.respawn.acceptance;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** The {@code kubectl respawn} plugin commands (§10): the same jar, run with the cluster's kubeconfig. */
final class PluginCli {
  record Result(int exitCode, String out, String err) {}

  private final MockCluster cluster;

  PluginCli(MockCluster cluster) {
    this.cluster = cluster;
  }

  Result run(String... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of(OperatorProcess.java(), "-XX:TieredStopAtLevel=1", "-jar",
        OperatorProcess.jar()));
    cmd.addAll(List.of(args));
    Path out = Files.createTempFile(cluster.dir, "cli", ".out");
    Path err = Files.createTempFile(cluster.dir, "cli", ".err");
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile());
    pb.environment().put("KUBECONFIG", cluster.kubeconfig.toString());
    pb.environment().put("KUBERNETES_HTTP2_DISABLE", "true"); // fabric8's switch: HTTP/1.1 to the cleartext mock
    Process p = pb.start();
    if (!p.waitFor(90, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("plugin command timed out: " + cmd);
    }
    return new Result(p.exitValue(), Files.readString(out), Files.readString(err));
  }
}

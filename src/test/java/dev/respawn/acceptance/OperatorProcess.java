package dev.respawn.acceptance;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The operator: {@code java -jar respawn.jar operator} as a child process against a {@link MockCluster}, its
 * output in a log file per start (kept under target/acceptance), a free metrics port.
 */
final class OperatorProcess implements AutoCloseable {
  private final MockCluster cluster;
  private final List<String> extraArgs;
  private final Path logDir;
  final int metricsPort;
  private Process process;
  private int starts;
  private Path log;

  OperatorProcess(MockCluster cluster, String name, String... extraArgs) throws IOException {
    this.cluster = cluster;
    this.extraArgs = List.of(extraArgs);
    this.logDir = Files.createDirectories(Path.of("target", "acceptance", name + "-" + System.currentTimeMillis()));
    try (ServerSocket s = new ServerSocket(0)) {
      metricsPort = s.getLocalPort();
    }
  }

  static String jar() {
    return Path.of(System.getProperty("respawn.jar", "target/respawn.jar")).toAbsolutePath().toString();
  }

  static String java() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }

  OperatorProcess start() throws IOException {
    starts++;
    log = logDir.resolve("operator-" + starts + ".log");
    List<String> cmd = new ArrayList<>(List.of(java(), "-Xmx256m", "-XX:TieredStopAtLevel=1", "-jar", jar(),
        "operator", "--metrics-port=" + metricsPort));
    cmd.addAll(extraArgs);
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
    pb.environment().put("KUBECONFIG", cluster.kubeconfig.toString());
    pb.environment().put("KUBERNETES_HTTP2_DISABLE", "true"); // fabric8's switch: HTTP/1.1 to the cleartext mock
    process = pb.start();
    return this;
  }

  /** SIGKILL: the operator gets no chance to write anything on the way out. */
  void kill() throws InterruptedException {
    if (process != null) {
      process.destroyForcibly();
      process.waitFor(20, TimeUnit.SECONDS);
      process = null;
    }
  }

  /**
   * SIGTERM, as the kubelet stops a pod: whether the process exited within {@code grace} (it is killed otherwise,
   * as the kubelet does when the grace period is over).
   */
  boolean terminate(Duration grace) throws InterruptedException {
    if (process == null) {
      return true;
    }
    process.destroy();
    boolean exited = process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS);
    if (!exited) {
      process.destroyForcibly();
      process.waitFor(10, TimeUnit.SECONDS);
    }
    process = null;
    return exited;
  }

  /** The exit code once the process ended on its own within {@code within}; null while it still runs. */
  Integer exitedWith(Duration within) throws InterruptedException {
    if (process == null || !process.waitFor(within.toMillis(), TimeUnit.MILLISECONDS)) {
      return null;
    }
    int code = process.exitValue();
    process = null;
    return code;
  }

  /** The log of the current (latest) start. */
  String log() {
    try {
      return log == null ? "" : Files.readString(log);
    } catch (IOException e) {
      return "";
    }
  }

  String tail() {
    String l = log();
    return l.substring(Math.max(0, l.length() - 4000));
  }

  /** The JSON audit lines (§8) of the current start. */
  List<JsonNode> auditLines() {
    List<JsonNode> out = new ArrayList<>();
    for (String line : log().split("\n")) {
      int i = line.indexOf('{');
      if (i < 0 || !line.contains("reason_code")) {
        continue;
      }
      try {
        JsonNode n = MockCluster.JSON.readTree(line.substring(i));
        if (n.has("reason_code")) {
          out.add(n);
        } else if (n.path("message").asText().contains("reason_code")) {
          out.add(MockCluster.JSON.readTree(n.get("message").asText()));
        }
      } catch (IOException ignored) {
        // not an audit line
      }
    }
    return out;
  }

  List<JsonNode> auditLines(String ns, String instance) {
    return auditLines().stream().filter(n -> ns.equals(n.path("namespace").asText())
        && instance.equals(n.path("instance").asText())).toList();
  }

  HttpResponse<String> get(String path) throws IOException, InterruptedException {
    return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + metricsPort + path))
        .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
  }

  String metrics() throws IOException, InterruptedException {
    return get("/metrics").body();
  }

  @Override
  public void close() throws InterruptedException {
    if (process != null) {
      process.destroy();
      if (!process.waitFor(15, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
      }
      process = null;
    }
  }
}

package dev.respawn.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.nio.file.Files;
import java.time.InstantSource;
import org.slf4j.LoggerFactory;

/**
 * The real CLI's client: {@code --kubeconfig PATH} when given, else fabric8's standard discovery
 * (KUBECONFIG, ~/.kube/config, in-cluster), tuned to fail fast when the API server cannot be reached.
 */
final class KubeconfigConnection {
  /** The plugin's requests name it, apart from the operator's. */
  static final String USER_AGENT = "kubectl-respawn/" + RespawnCommand.VERSION;

  /** Milliseconds to wait for a TCP connection to the API server. */
  static final int CONNECTION_TIMEOUT_MS = 5_000;
  /** Milliseconds to wait for an answer to one request. */
  static final int REQUEST_TIMEOUT_MS = 15_000;

  private KubeconfigConnection() {}

  static Cluster connect(PluginOptions options, InstantSource clock) {
    quietLibraryLogs();
    Config config;
    if (options.kubeconfig != null) {
      if (!Files.isRegularFile(options.kubeconfig)) {
        throw CommandFailure.of("kubeconfig " + options.kubeconfig + " not found");
      }
      try {
        config = Config.fromKubeconfig(options.kubeconfig.toFile());
      } catch (RuntimeException e) {
        throw CommandFailure.of("cannot read kubeconfig " + options.kubeconfig + ": " + e.getMessage());
      }
    } else {
      config = Config.autoConfigure(null);
    }
    config.setConnectionTimeout(CONNECTION_TIMEOUT_MS);
    config.setRequestTimeout(REQUEST_TIMEOUT_MS);
    config.setRequestRetryBackoffLimit(0);
    config.setUserAgent(USER_AGENT);
    KubernetesClient client = new KubernetesClientBuilder().withConfig(config).build();
    return new Cluster(client, Cluster.namespaceOf(options, client), clock, true);
  }

  /**
   * The operator's logback configuration prints library warnings on stdout, where they would break
   * {@code -o json}; a plugin command reports its own errors, so fabric8 stays silent.
   */
  private static void quietLibraryLogs() {
    if (LoggerFactory.getILoggerFactory() instanceof LoggerContext context) {
      context.getLogger("io.fabric8").setLevel(Level.OFF);
    }
  }
}

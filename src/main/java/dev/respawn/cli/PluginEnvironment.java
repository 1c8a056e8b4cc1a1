package dev.respawn.cli;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.InstantSource;
import java.util.Objects;
import picocli.CommandLine;

/**
 * Where the plugin commands get their cluster and clock: the real CLI builds a client from
 * {@code --kubeconfig} ({@link #system()}); tests hand in a client and a clock ({@link #using}).
 */
final class PluginEnvironment {
  /** Opens the cluster for one command run. */
  interface Connector {
    Cluster connect(PluginOptions options, InstantSource clock);
  }

  private final Connector connector;
  private final InstantSource clock;

  PluginEnvironment(Connector connector, InstantSource clock) {
    this.connector = Objects.requireNonNull(connector);
    this.clock = Objects.requireNonNull(clock);
  }

  static PluginEnvironment system() {
    return new PluginEnvironment(KubeconfigConnection::connect, InstantSource.system());
  }

  /** Commands use this client (not closed by them) and clock; {@code -n} still picks the namespace. */
  static PluginEnvironment using(KubernetesClient client, InstantSource clock) {
    return new PluginEnvironment((options, c) -> new Cluster(client, Cluster.namespaceOf(options, client), c, false),
        clock);
  }

  Cluster connect(PluginOptions options) {
    return connector.connect(options, clock);
  }

  /** A picocli factory that hands this environment to every plugin command it makes. */
  CommandLine.IFactory factory() {
    CommandLine.IFactory defaults = CommandLine.defaultFactory();
    return new CommandLine.IFactory() {
      @Override
      public <K> K create(Class<K> cls) throws Exception {
        K made = defaults.create(cls);
        if (made instanceof PluginCommand command) {
          command.environment = PluginEnvironment.this;
        }
        return made;
      }
    };
  }
}

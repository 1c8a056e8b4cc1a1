package dev.respawn.cli;

import java.nio.file.Path;
import picocli.CommandLine.Option;

/** The options every {@code kubectl respawn} command takes: where the cluster is, which namespace, -o. */
final class PluginOptions {
  @Option(names = {"-n", "--namespace"}, paramLabel = "NAMESPACE",
      description = "Namespace of the AgentInstance (default: the kubeconfig's namespace, else default).")
  String namespace;

  @Option(names = "--kubeconfig", paramLabel = "PATH",
      description = "Kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or the in-cluster service account).")
  Path kubeconfig;

  @Option(names = {"-o", "--output"}, paramLabel = "FORMAT", defaultValue = "table",
      description = "Output format: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE}).")
  OutputFormat output = OutputFormat.table;
}

package dev.respawn.bench;

import dev.respawn.controller.OperatorSettings;
import dev.respawn.controller.RespawnOperator;
import dev.respawn.controller.TolerantResources;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.Set;

/**
 * The operator under test in a JVM of its own (as it runs in production), so its heap is its own:
 * {@code OperatorProcess <API server URL> <namespace> <User-Agent>}. It starts the operator with the
 * production sink and answers one command per line on stdin: {@code stats} -> {@code stats <reconciles>
 * <instances reconciled>}, {@code heap} -> {@code heap <bytes used after GC>}; end of input stops it. Driven
 * by {@link ForkedOperator}.
 */
public final class OperatorProcess {
  private OperatorProcess() {}

  public static void main(String[] args) throws IOException {
    Config config = new ConfigBuilder(Config.empty()).withMasterUrl(args[0]).withTrustCerts(true)
        .withNamespace(args[1]).withHttp2Disable(true).withUserAgent(args[2]).build();
    KubernetesClient client = new KubernetesClientBuilder().withConfig(config)
        .withKubernetesSerialization(TolerantResources.serialization()).build();
    CountingSink sink = AgentFleet.productionSink(client);
    RespawnOperator operator = new RespawnOperator(client, OperatorSettings.defaults().withNamespaces(Set.of(args[1])),
        sink, Optional.empty()).start();
    System.out.println("started");
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line = in.readLine(); line != null; line = in.readLine()) {
      switch (line.trim()) {
        case "stats" -> System.out.println("stats " + sink.reconciles() + " " + sink.reconciledInstances());
        case "heap" -> System.out.println("heap " + ScaleRun.heapAfterGc());
        default -> System.out.println("unknown " + line);
      }
    }
    operator.close();
    client.close();
    System.exit(0);
  }
}

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
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.Set;
import javax.management.ObjectName;

/**
 * The operator under test in a JVM of its own (as it runs in production), so its heap is its own:
 * {@code OperatorProcess <API server URL> <namespace> <User-Agent>}. It starts the operator with the
 * production sink and answers one command per line on stdin: {@code stats} -> {@code stats <reconciles>
 * <instances reconciled>}, {@code heap} -> {@code heap <bytes used after GC>}, {@code live} -> {@code live <bytes
 * of live objects>} (the total of a class histogram, which runs a full GC first); end of input stops it. Driven
 * by {@link ForkedOperator}.
 */
public final class OperatorProcess {
  private OperatorProcess() {}

  public static void main(String[] args) throws IOException {
    Config config = new ConfigBuilder(Config.empty()).withMasterUrl(args[0]).withTrustCerts(true)
        .withNamespace(args[1]).withHttp2Disable(true).withUserAgent(args[2]).build();
    KubernetesClient client = new KubernetesClientBuilder().withConfig(config)
        .withKubernetesSerialization(TolerantResources.forOperator()).build();
    CountingSink sink = AgentFleet.productionSink(client);
    RespawnOperator operator = new RespawnOperator(client, OperatorSettings.defaults().withNamespaces(Set.of(args[1])),
        sink, Optional.empty()).start();
    System.out.println("started");
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line = in.readLine(); line != null; line = in.readLine()) {
      switch (line.trim()) {
        case "stats" -> System.out.println("stats " + sink.reconciles() + " " + sink.reconciledInstances());
        case "heap" -> System.out.println("heap " + ScaleRun.heapAfterGc());
        case "live" -> System.out.println("live " + liveBytes());
        default -> System.out.println("unknown " + line);
      }
    }
    operator.close();
    client.close();
    System.exit(0);
  }

  /**
   * Bytes of live objects: the "Total" line of the JVM's class histogram (the diagnostic command behind
   * {@code jcmd <pid> GC.class_histogram}, through its platform MBean), exact where the used heap after a GC
   * also counts what the collector leaves in partly filled regions.
   */
  static long liveBytes() {
    try {
      String histogram = (String) ManagementFactory.getPlatformMBeanServer().invoke(
          new ObjectName("com.sun.management:type=DiagnosticCommand"), "gcClassHistogram",
          new Object[] {new String[0]}, new String[] {String[].class.getName()});
      for (String line : histogram.split("\\R")) {
        String[] cells = line.trim().split("\\s+");
        if (cells.length == 3 && cells[0].equals("Total")) {
          return Long.parseLong(cells[2]);
        }
      }
      throw new IllegalStateException("no Total line in the class histogram");
    } catch (javax.management.JMException e) {
      throw new IllegalStateException("class histogram: " + e, e);
    }
  }
}

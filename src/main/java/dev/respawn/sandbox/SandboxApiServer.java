package dev.respawn.sandbox;

import dev.respawn.controller.TolerantResources;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The sandbox's local API server: fabric8's mock Kubernetes API server in CRUD mode on the
 * loopback address, with Respawn's CRDs registered (status subresource included), behind a
 * {@link KubectlFront} that gives kubectl what the mock lacks (discovery, tables, chunked watches,
 * core/v1 Events, OpenAPI v3, merge patches). It validates no schema and runs no garbage collection; it is
 * enough to watch the whole lifecycle with kubectl.
 */
public final class SandboxApiServer implements AutoCloseable {
  private static final List<String> CRDS = List.of("agentrestartpolicies.respawn.dev.yaml",
      "agentinstances.respawn.dev.yaml");
  /** Strong reference: java.util.logging forgets the level of a logger nobody holds. */
  private static final Logger MOCK_LOG = Logger.getLogger(MockWebServer.class.getName());

  private final Server server;
  private final KubernetesClient client;
  private final KubectlFront front;

  public SandboxApiServer(int port) {
    MOCK_LOG.setLevel(Level.OFF);
    Map<ServerRequest, Queue<ServerResponse>> responses = new HashMap<>();
    server = new Server(new MockWebServer(), responses, EtcdLikeDeletes.mixed(responses));
    server.init(InetAddress.getLoopbackAddress(), 0);
    client = server.createClient();
    List<CustomResourceDefinition> crds = new java.util.ArrayList<>();
    for (String file : CRDS) {
      try (InputStream in = SandboxApiServer.class.getResourceAsStream("/crds/" + file)) {
        crds.add(client.resource(Serialization.unmarshal(in, CustomResourceDefinition.class)).create());
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    front = new KubectlFront(port, server.url("/"), server.createClient(), crds);
  }

  public KubernetesClient client() {
    return client;
  }

  /** A new client of its own (the operator's, the kubelet's), with the operator's serialization. */
  public KubernetesClient newClient() {
    return server.createClient(b -> b.withKubernetesSerialization(TolerantResources.forOperator()));
  }

  /** The URL kubectl and other tools use (the front). */
  public String url() {
    return front.url();
  }

  /** Writes a kubeconfig pointing at this server, for kubectl and fabric8-based tools (kubectl-respawn). */
  public Path writeKubeconfig(Path file) throws IOException {
    String yaml = "apiVersion: v1\nkind: Config\nclusters:\n- name: respawn-sandbox\n  cluster:\n    server: "
        + url() + "\ncontexts:\n- name: respawn-sandbox\n  context:\n    cluster: respawn-sandbox\n"
        + "    namespace: agents\n    user: sandbox\ncurrent-context: respawn-sandbox\nusers:\n- name: sandbox\n"
        + "  user: {}\n";
    if (file.getParent() != null) {
      Files.createDirectories(file.getParent());
    }
    return Files.writeString(file, yaml);
  }

  @Override
  public void close() {
    front.close();
    client.close();
    server.destroy();
  }

  /** Exposes the mock server's client configuration, which fabric8 keeps protected. */
  private static final class Server extends KubernetesMockServer {
    Server(MockWebServer web, Map<ServerRequest, Queue<ServerResponse>> responses,
        io.fabric8.mockwebserver.http.Dispatcher dispatcher) {
      super(new Context(Serialization.jsonMapper()), web, responses, dispatcher, false);
    }

    @Override
    public Config initConfig() {
      return super.initConfig();
    }
  }
}

package dev.respawn.testsupport;

import dev.respawn.controller.TolerantResources;
import dev.respawn.sandbox.EtcdLikeDeletes;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * fabric8's KubernetesMockServer in CRUD mode (plain HTTP on the loopback address, an ephemeral port)
 * with the Respawn CRDs registered, so AgentInstance and AgentRestartPolicy have a status subresource.
 *
 * <p>Use it by hand ({@code MockApi api = MockApi.start(); ... api.close();}) or as a JUnit 5
 * extension: {@code @RegisterExtension static final MockApi API = new MockApi();} starts one server per
 * test class (a non-static field: one per test method). The store keeps everything between tests of a
 * class; use distinct names or namespaces per test.
 *
 * <p>Expectations ({@code server().expect()...}) take precedence over the CRUD store, which is how a
 * test makes the server fail on purpose.
 */
public final class MockApi implements AutoCloseable, BeforeAllCallback, AfterAllCallback, BeforeEachCallback,
    AfterEachCallback {
  /** The namespace of clients made by {@link #client()} and {@link #newClient()}. */
  public static final String NAMESPACE = "test";
  static final List<String> CRD_FILES = List.of("agentrestartpolicies.respawn.dev.yaml",
      "agentinstances.respawn.dev.yaml");
  /** Strong reference: java.util.logging keeps loggers weakly, and the level would be forgotten. */
  private static final Logger MOCK_SERVER_LOG = Logger.getLogger(MockWebServer.class.getName());

  private final RequestLog requests = new RequestLog();
  private final List<KubernetesClient> clients = new CopyOnWriteArrayList<>();
  private Server server;
  private FaultingDispatcher faulting;
  private KubernetesClient client;
  private boolean perTest;

  /** A server that is not started yet: call {@link #open()}, or register it as an extension. */
  public MockApi() {}

  /** A started server with the CRDs registered. */
  public static MockApi start() {
    MockApi api = new MockApi();
    api.open();
    return api;
  }

  /** Starts the server, registers the CRDs, makes the shared client. Idempotent. */
  public synchronized MockApi open() {
    if (server != null) {
      return this;
    }
    MOCK_SERVER_LOG.setLevel(Level.OFF);
    Map<ServerRequest, Queue<ServerResponse>> responses = new HashMap<>();
    MockWebServer webServer = new MockWebServer();
    faulting = new FaultingDispatcher(EtcdLikeDeletes.mixed(responses));
    server = new Server(webServer, responses, requests.recording(faulting, webServer));
    server.init(InetAddress.getLoopbackAddress(), 0);
    client = newClient();
    crds().forEach(crd -> client.resource(crd).create());
    return this;
  }

  /** The shared client (namespace {@value #NAMESPACE}); closed by {@link #close()}. */
  public KubernetesClient client() {
    requireStarted();
    return client;
  }

  /** A new client of its own (e.g. one for the operator, one for the kubelet); closed by {@link #close()}. */
  public KubernetesClient newClient() {
    return newClient(UnaryOperator.identity());
  }

  /**
   * A new client with a changed configuration, e.g. {@code b -> b.withRequestRetryBackoffLimit(0)}. Like the
   * operator's, it reads Respawn's resources tolerantly ({@link TolerantResources#serialization()}), so any of
   * them can be handed to an operator.
   */
  public KubernetesClient newClient(UnaryOperator<ConfigBuilder> configuration) {
    return newClient(configuration, TolerantResources.serialization());
  }

  /**
   * A new client for an operator under test, with the serialization the jar gives its own
   * ({@link TolerantResources#forOperator()}: no managed fields read).
   */
  public KubernetesClient newOperatorClient(UnaryOperator<ConfigBuilder> configuration) {
    return newClient(configuration, TolerantResources.forOperator());
  }

  private KubernetesClient newClient(UnaryOperator<ConfigBuilder> configuration,
      KubernetesSerialization serialization) {
    requireStarted();
    Config config = configuration.apply(new ConfigBuilder(server.config())).build();
    KubernetesClient made = server.createClient(b -> b.withConfig(config)
        .withKubernetesSerialization(serialization));
    clients.add(made);
    return made;
  }

  /** The fabric8 mock server itself, e.g. for {@code expect()} stubs. */
  public KubernetesMockServer server() {
    requireStarted();
    return server;
  }

  /**
   * Injects faults: {@code hook} sees every request before and after the server handles it (and may
   * answer in its place); {@link ApiFaults#NONE} ends it. The {@link #requests() log} records what the
   * client got.
   */
  public MockApi faults(ApiFaults hook) {
    requireStarted();
    faulting.faults(hook);
    return this;
  }

  /** Closes, from the server's side, the open watch connections whose request matches; returns how many. */
  public int dropWatches(Predicate<RecordedRequest> which) {
    requireStarted();
    return faulting.dropWatches(which);
  }

  /** The API server's URL, e.g. {@code http://localhost:40123/}. */
  public String url() {
    return server().url("/");
  }

  /** What the server received (the CRD registration included; {@link RequestLog#clear()} to reset). */
  public RequestLog requests() {
    return requests;
  }

  /** The CRDs of crds/*.yaml (the project directory), or of the classpath's crds/ when run elsewhere. */
  public static List<CustomResourceDefinition> crds() {
    List<CustomResourceDefinition> crds = new ArrayList<>();
    Path dir = Path.of(System.getProperty("basedir", "."), "crds");
    for (String file : CRD_FILES) {
      try (InputStream in = Files.isRegularFile(dir.resolve(file)) ? Files.newInputStream(dir.resolve(file))
          : MockApi.class.getResourceAsStream("/crds/" + file)) {
        if (in == null) {
          throw new IllegalStateException("CRD " + file + " found neither in " + dir + " nor on the classpath");
        }
        crds.add(Serialization.unmarshal(in, CustomResourceDefinition.class));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return crds;
  }

  @Override
  public synchronized void close() {
    clients.forEach(KubernetesClient::close);
    clients.clear();
    if (server != null) {
      server.destroy();
      server = null;
      client = null;
    }
  }

  @Override
  public void beforeAll(ExtensionContext context) {
    open();
  }

  @Override
  public void afterAll(ExtensionContext context) {
    close();
  }

  @Override
  public synchronized void beforeEach(ExtensionContext context) {
    if (server == null) {
      perTest = true;
      open();
    }
  }

  @Override
  public synchronized void afterEach(ExtensionContext context) {
    if (perTest) {
      perTest = false;
      close();
    }
  }

  private synchronized void requireStarted() {
    if (server == null) {
      throw new IllegalStateException("MockApi is not started: call open() or register it as an extension");
    }
  }

  /** Exposes the mock server's client configuration, which fabric8 keeps protected. */
  private static final class Server extends KubernetesMockServer {
    Server(MockWebServer webServer, Map<ServerRequest, Queue<ServerResponse>> responses,
        io.fabric8.mockwebserver.http.Dispatcher dispatcher) {
      super(new Context(Serialization.jsonMapper()), webServer, responses, dispatcher, false);
    }

    Config config() {
      return initConfig();
    }
  }
}

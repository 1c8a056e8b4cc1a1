package dev.respawn.acceptance;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.respawn.sandbox.EtcdLikeDeletes;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.events.v1.Event;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * fabric8's mock API server in CRUD mode with the Respawn CRDs applied, a kubeconfig pointing at it, a client
 * for the test (its own User-Agent, so the operator's requests can be told apart) and a log of every request.
 */
final class MockCluster implements AutoCloseable {
  static final String TEST_AGENT = "respawn-acceptance";
  static final ObjectMapper JSON = new ObjectMapper();
  static final ResourceDefinitionContext INSTANCES = context("AgentInstance", "agentinstances");
  static final ResourceDefinitionContext POLICIES = context("AgentRestartPolicy", "agentrestartpolicies");
  private static final Logger MOCK_LOG = Logger.getLogger(MockWebServer.class.getName());

  final KubernetesMockServer server;
  final KubernetesClient client;
  final Path dir;
  final Path kubeconfig;
  final ConcurrentLinkedQueue<ApiRequest> requests = new ConcurrentLinkedQueue<>();
  /** What a test's admission chain makes of each request before the store sees it (none: as sent). */
  private volatile UnaryOperator<RecordedRequest> admission = UnaryOperator.identity();

  MockCluster() throws IOException {
    MOCK_LOG.setLevel(Level.OFF);
    KubernetesCrudDispatcher crud = new EtcdLikeDeletes();
    Dispatcher recording = new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest sent) {
        Instant at = Instant.now();
        RecordedRequest request = admission.apply(sent);
        MockResponse response = request.getPath().startsWith(RULES_REVIEWS) ? everythingAllowed(request)
            : crud.dispatch(request);
        String agent = request.getHeader("User-Agent");
        requests.add(new ApiRequest(at, request.getMethod().toUpperCase(Locale.ROOT), request.getPath(),
            agent == null ? "" : agent, response.code()));
        return response;
      }
    };
    server = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(), recording, false);
    server.init(InetAddress.getLoopbackAddress(), 0);
    String url = server.url("/");
    // HTTP/1.1, as the mock server's own clients: the JDK client's cleartext HTTP/2 upgrade on the first request
    // to a fresh mock server hung once in CI (the CRD create below never answered)
    client = new KubernetesClientBuilder().withConfig(new ConfigBuilder().withMasterUrl(url).withTrustCerts(true)
        .withHttp2Disable(true).withRequestTimeout(30_000).withUserAgent(TEST_AGENT).withRequestRetryBackoffLimit(3)
        .build()).build();
    Path crds = Path.of(System.getProperty("respawn.crds", "crds"));
    for (String f : List.of("agentrestartpolicies.respawn.dev.yaml", "agentinstances.respawn.dev.yaml")) {
      try (InputStream in = Files.newInputStream(crds.resolve(f))) {
        client.resource(Serialization.unmarshal(in, CustomResourceDefinition.class)).create();
      }
    }
    dir = Files.createTempDirectory("respawn-acceptance");
    kubeconfig = dir.resolve("kubeconfig");
    Files.writeString(kubeconfig, """
        apiVersion: v1
        kind: Config
        clusters:
        - name: mock
          cluster: {server: "%s"}
        users:
        - name: tester
          user: {token: t}
        contexts:
        - name: mock
          context: {cluster: mock, user: tester, namespace: default}
        current-context: mock
        """.formatted(url.replaceAll("/$", "")));
  }

  /**
   * Puts {@code chain} in front of the store, as mutating admission on a real API server: a request it rewrites
   * (e.g. a pod create with a sidecar injected) is stored, answered and watched as rewritten.
   */
  void admission(UnaryOperator<RecordedRequest> chain) {
    admission = java.util.Objects.requireNonNull(chain);
  }

  /** Where JOSDK's leader election asks what it may do before it takes the Lease. */
  private static final String RULES_REVIEWS = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews";

  /** The mock has no authorization: a SelfSubjectRulesReview is answered with every verb on everything. */
  private static MockResponse everythingAllowed(RecordedRequest request) {
    var review = Serialization.unmarshal(request.getUtf8Body(),
        io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectRulesReview.class);
    review.setStatus(new io.fabric8.kubernetes.api.model.authorization.v1.SubjectRulesReviewStatusBuilder()
        .addNewResourceRule().addToVerbs("*").addToApiGroups("*").addToResources("*").endResourceRule()
        .withIncomplete(false).build());
    return new MockResponse().setResponseCode(201).setBody(Serialization.asJson(review));
  }

  private static ResourceDefinitionContext context(String kind, String plural) {
    return new ResourceDefinitionContext.Builder().withGroup("respawn.dev").withVersion("v1alpha1").withKind(kind)
        .withPlural(plural).withNamespaced(true).build();
  }

  // ------------------------------------------------------------------ custom resources

  void apply(String ns, String yaml) {
    GenericKubernetesResource r = Serialization.unmarshal(yaml, GenericKubernetesResource.class);
    r.getMetadata().setNamespace(ns);
    ResourceDefinitionContext ctx = "AgentInstance".equals(r.getKind()) ? INSTANCES : POLICIES;
    client.genericKubernetesResources(ctx).inNamespace(ns).resource(r).create();
  }

  GenericKubernetesResource instance(String ns, String name) {
    return client.genericKubernetesResources(INSTANCES).inNamespace(ns).withName(name).get();
  }

  /** The instance's status (an empty object while there is none). */
  JsonNode status(String ns, String name) {
    GenericKubernetesResource r = instance(ns, name);
    return r == null ? JSON.createObjectNode() : JSON.valueToTree(r).path("status");
  }

  JsonNode policyStatus(String ns, String name) {
    GenericKubernetesResource r = client.genericKubernetesResources(POLICIES).inNamespace(ns).withName(name).get();
    return r == null ? JSON.createObjectNode() : JSON.valueToTree(r).path("status");
  }

  @SuppressWarnings("unchecked")
  void editInstanceSpec(String ns, String name, Consumer<Map<String, Object>> change) {
    edit(INSTANCES, ns, name, r -> change.accept((Map<String, Object>) r.getAdditionalProperties().get("spec")));
  }

  @SuppressWarnings("unchecked")
  void editPolicySpec(String ns, String name, Consumer<Map<String, Object>> change) {
    edit(POLICIES, ns, name, r -> change.accept((Map<String, Object>) r.getAdditionalProperties().get("spec")));
  }

  void annotate(String ns, String name, String key, String value) {
    edit(INSTANCES, ns, name, r -> {
      if (r.getMetadata().getAnnotations() == null) {
        r.getMetadata().setAnnotations(new HashMap<>());
      }
      r.getMetadata().getAnnotations().put(key, value);
    });
  }

  private void edit(ResourceDefinitionContext ctx, String ns, String name, Consumer<GenericKubernetesResource> change) {
    for (int i = 0; ; i++) {
      GenericKubernetesResource r = client.genericKubernetesResources(ctx).inNamespace(ns).withName(name).get();
      change.accept(r);
      try {
        client.genericKubernetesResources(ctx).inNamespace(ns).resource(r).update();
        return;
      } catch (KubernetesClientException e) {
        if (e.getCode() != 409 || i > 20) {
          throw e;
        }
      }
    }
  }

  // ------------------------------------------------------------------ pods and events

  Pod pod(String ns, String name) {
    return client.pods().inNamespace(ns).withName(name).get();
  }

  List<Pod> podsOf(String ns, String instance) {
    return client.pods().inNamespace(ns).withLabel("respawn.dev/instance", instance).list().getItems();
  }

  /** events.k8s.io/v1 Events regarding the named object. */
  List<Event> events(String ns, String kind, String name) {
    return client.events().v1().events().inNamespace(ns).list().getItems().stream()
        .filter(e -> e.getRegarding() != null && kind.equals(e.getRegarding().getKind())
            && name.equals(e.getRegarding().getName()))
        .toList();
  }

  // ------------------------------------------------------------------ what the operator sent

  List<ApiRequest> operatorWritesSince(Instant since) {
    return requests.stream().filter(r -> r.byOperator() && r.write() && !r.at().isBefore(since)).toList();
  }

  boolean operatorRequestedSince(Instant since) {
    return requests.stream().anyMatch(r -> r.byOperator() && !r.at().isBefore(since));
  }

  long podCreatesIn(String ns) {
    return requests.stream().filter(r -> r.byOperator() && "POST".equals(r.verb()) && r.code() < 300
        && r.path().startsWith("/api/v1/namespaces/" + ns + "/pods")).count();
  }

  @Override
  public void close() {
    client.close();
    server.destroy();
  }
}

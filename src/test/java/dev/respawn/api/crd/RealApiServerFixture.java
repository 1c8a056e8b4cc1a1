package dev.respawn.api.crd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionCondition;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The committed CRDs on a real, etcd-backed API server (../shared/tools/realapi), for the *RealApiTest classes that
 * extend this: one client, the CRDs applied once, the run's names and label, and how a test makes and reads resources.
 *
 * <p>Runs when RESPAWN_REALAPI_KUBECONFIG names the server's kubeconfig ({@code make test-realapi}
 * does that); skipped otherwise, unless -Drespawn.requireRealApi=true turns the skip into a failure.
 */
@ExtendWith(RealApiServerFixture.SharedConnection.class)
abstract class RealApiServerFixture {
  static final String ENV = "RESPAWN_REALAPI_KUBECONFIG";
  static final String REQUIRE = "respawn.requireRealApi";
  static final String NAMESPACE = "default";
  static final String GROUP = "respawn.dev";
  static final String VERSION = "v1alpha1";
  static final String POLICY = "AgentRestartPolicy";
  static final String INSTANCE = "AgentInstance";
  static final String RUN_LABEL = "respawn.dev/crd-test-run";
  static final String TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io";
  static final Duration AT_MOST = Duration.ofSeconds(30);
  static final ObjectMapper JSON = new ObjectMapper();
  static final ResourceDefinitionContext CRDS = new ResourceDefinitionContext.Builder()
      .withGroup("apiextensions.k8s.io").withVersion("v1").withKind("CustomResourceDefinition")
      .withPlural("customresourcedefinitions").withNamespaced(false).build();
  static final Map<String, ResourceDefinitionContext> KINDS = Map.of(
      POLICY, context(POLICY, "agentrestartpolicies"),
      INSTANCE, context(INSTANCE, "agentinstances"));
  static final String MINIMAL_TEMPLATE =
      "template: {spec: {containers: [{name: agent, image: registry.example/agents/coder:1.4}]}}";

  static KubernetesClient client;
  /** Why the tests are skipped (no real API server), or null. */
  static String skipReason;
  /** Unique per run: names and the label that cleanup deletes by, so reruns on one server never clash. */
  static String run;
  static final AtomicInteger SEQ = new AtomicInteger();

  static ResourceDefinitionContext context(String kind, String plural) {
    return new ResourceDefinitionContext.Builder().withGroup(GROUP).withVersion(VERSION).withKind(kind)
        .withPlural(plural).withNamespaced(true).build();
  }

  /**
   * Connects and applies the CRDs before the first class that extends the fixture, once for the whole test run
   * (the root store holds it), and deletes the run's resources and closes the client when the run ends: the classes
   * share one connection, as the tests did when they were one class.
   */
  static final class SharedConnection implements BeforeAllCallback, ExtensionContext.Store.CloseableResource {
    @Override
    public void beforeAll(ExtensionContext context) {
      context.getRoot().getStore(ExtensionContext.Namespace.create(RealApiServerFixture.class))
          .getOrComputeIfAbsent(SharedConnection.class, key -> open(), SharedConnection.class);
    }

    private static SharedConnection open() {
      try {
        connectAndApplyCrds();
      } catch (IOException e) {
        closeClient();
        throw new UncheckedIOException(e);
      } catch (RuntimeException | AssertionError e) {
        closeClient(); // connected, but the CRDs could not be applied or served: every class fails with this
        throw e;
      }
      return new SharedConnection();
    }

    private static void closeClient() {
      if (client != null) {
        client.close();
      }
    }

    @Override
    public void close() {
      cleanUp();
    }
  }

  static void connectAndApplyCrds() throws IOException {
    client = null;
    skipReason = null;
    String kubeconfig = System.getenv(ENV);
    if (kubeconfig == null || kubeconfig.isBlank()) {
      String how = ENV + " is not set, so there is no real API server to test the CRDs against. Run `make"
          + " test-realapi`, or start one with ../shared/tools/realapi/start.sh and export " + ENV
          + "=<the KUBECONFIG path it prints> (usually /tmp/realapi/kubeconfig) before `make test`.";
      if (Boolean.parseBoolean(System.getProperty(REQUIRE, "false"))) {
        fail("-D" + REQUIRE + "=true but " + how);
      }
      // Surefire does not report an abort in @BeforeAll at all: skip each test instead (@BeforeEach),
      // and say why once on the console.
      skipReason = how;
      System.err.println("[WARNING] the *RealApiTest classes skipped: " + how);
      return;
    }
    Path path = Path.of(kubeconfig);
    assertThat(path).as("%s=%s: no such kubeconfig (is the realapi server running?)", ENV, kubeconfig)
        .isRegularFile();
    Config config = Config.fromKubeconfig(Files.readString(path));
    config.setRequestTimeout(30_000);
    client = new KubernetesClientBuilder().withConfig(config).build();
    run = UUID.randomUUID().toString().substring(0, 8);

    // Apply the committed YAML as is (not through the typed model), create or update.
    try (Stream<Path> files = Files.list(CrdFreshnessTest.COMMITTED)) {
      for (Path file : files.filter(f -> f.toString().endsWith(".yaml")).sorted().collect(Collectors.toList())) {
        GenericKubernetesResource crd = client.getKubernetesSerialization()
            .unmarshal(Files.readString(file, StandardCharsets.UTF_8), GenericKubernetesResource.class);
        try {
          client.genericKubernetesResources(CRDS).resource(crd)
              .fieldManager("respawn-crd-test").forceConflicts().serverSideApply();
        } catch (KubernetesClientException e) {
          fail("the API server refused crds/%s (HTTP %d): %s", file.getFileName(), e.getCode(), e.getMessage());
        }
      }
    }
    for (String name : List.of("agentrestartpolicies.respawn.dev", "agentinstances.respawn.dev")) {
      await("CRD " + name + " Established").atMost(AT_MOST).pollInterval(Duration.ofMillis(100))
          .untilAsserted(() -> assertThat(condition(name, "Established")).isEqualTo("True"));
    }
  }

  @BeforeEach
  void skipWithoutRealApiServer() {
    if (skipReason != null) {
      Assumptions.abort(skipReason);
    }
  }

  static void cleanUp() {
    if (client == null) {
      return;
    }
    try {
      for (ResourceDefinitionContext kind : KINDS.values()) {
        client.genericKubernetesResources(kind).inNamespace(NAMESPACE).withLabel(RUN_LABEL, run).delete();
      }
      await("test resources deleted").atMost(AT_MOST).pollInterval(Duration.ofMillis(100))
          .untilAsserted(() -> {
            for (ResourceDefinitionContext kind : KINDS.values()) {
              assertThat(client.genericKubernetesResources(kind).inNamespace(NAMESPACE)
                  .withLabel(RUN_LABEL, run).list().getItems()).isEmpty();
            }
          });
    } finally {
      client.close();
    }
  }

  static String condition(String crd, String type) {
    CustomResourceDefinition current = client.apiextensions().v1().customResourceDefinitions().withName(crd).get();
    if (current == null || current.getStatus() == null || current.getStatus().getConditions() == null) {
      return null;
    }
    return current.getStatus().getConditions().stream().filter(c -> type.equals(c.getType()))
        .map(CustomResourceDefinitionCondition::getStatus).findFirst().orElse(null);
  }

  static String uniqueName(String prefix) {
    return (prefix + "-" + run + "-" + SEQ.incrementAndGet()).toLowerCase(Locale.ROOT);
  }

  static GenericKubernetesResource parse(String kind, String name, String spec) {
    String yaml = "apiVersion: " + GROUP + "/" + VERSION + "\n"
        + "kind: " + kind + "\n"
        + "metadata:\n"
        + "  name: " + name + "\n"
        + "  namespace: " + NAMESPACE + "\n"
        + "  labels: {" + RUN_LABEL + ": \"" + run + "\"}\n"
        + "spec: " + spec + "\n";
    return client.getKubernetesSerialization().unmarshal(yaml, GenericKubernetesResource.class);
  }

  static GenericKubernetesResource create(String kind, String name, String spec) {
    return client.genericKubernetesResources(KINDS.get(kind)).inNamespace(NAMESPACE)
        .resource(parse(kind, name, spec)).create();
  }

  static JsonNode get(String kind, String name) {
    GenericKubernetesResource found =
        client.genericKubernetesResources(KINDS.get(kind)).inNamespace(NAMESPACE).withName(name).get();
    assertThat(found).as("%s %s", kind, name).isNotNull();
    return JSON.valueToTree(found);
  }

  /** GET with a chosen Accept header, through the client's own (authenticated) HTTP client. */
  static JsonNode httpGet(String path, String accept) throws Exception {
    String base = client.getMasterUrl().toString().replaceAll("/+$", "");
    HttpRequest request = client.getHttpClient().newHttpRequestBuilder()
        .uri(base + path).setHeader("Accept", accept).build();
    HttpResponse<String> response =
        client.getHttpClient().sendAsync(request, String.class).get(AT_MOST.toSeconds(), TimeUnit.SECONDS);
    assertThat(response.code()).as("GET %s: %s", path, response.body()).isEqualTo(200);
    return JSON.readTree(response.body());
  }
}

package dev.respawn.api.crd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.StatusCause;
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
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The committed CRDs on a real, etcd-backed API server (../shared/tools/realapi): accepted, defaults
 * filled in, invalid specs refused with the field named, printer columns served as a Table.
 *
 * <p>Runs when RESPAWN_REALAPI_KUBECONFIG names the server's kubeconfig ({@code make test-realapi}
 * does that); skipped otherwise, unless -Drespawn.requireRealApi=true turns the skip into a failure.
 */
class RealApiServerTest {
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

  @BeforeAll
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
      System.err.println("[WARNING] RealApiServerTest skipped: " + how);
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

  @AfterAll
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

  /** Every AgentRestartPolicy and AgentInstance of examples/ is accepted as written (names made unique). */
  @Test
  void examplesAreAccepted() throws Exception {
    List<java.nio.file.Path> files;
    try (var list = java.nio.file.Files.list(java.nio.file.Path.of("examples"))) {
      files = list.filter(f -> f.toString().endsWith(".yaml")).sorted().toList();
    }
    int accepted = 0;
    for (java.nio.file.Path file : files) {
      for (String doc : java.nio.file.Files.readString(file).split("(?m)^---\\s*$")) {
        GenericKubernetesResource r = client.getKubernetesSerialization().unmarshal(doc,
            GenericKubernetesResource.class);
        if (r == null || !KINDS.containsKey(r.getKind())) {
          continue;
        }
        String name = uniqueName(r.getMetadata().getName());
        r.getMetadata().setName(name);
        r.getMetadata().setNamespace(NAMESPACE);
        r.getMetadata().setLabels(Map.of(RUN_LABEL, run));
        // strict: a field the schema does not know (a misspelling) is refused, not pruned in silence
        client.genericKubernetesResources(KINDS.get(r.getKind())).inNamespace(NAMESPACE).resource(r)
            .fieldValidation(io.fabric8.kubernetes.client.dsl.FieldValidateable.Validation.STRICT).create();
        assertThat(get(r.getKind(), name)).as("%s %s from %s", r.getKind(), name, file).isNotNull();
        accepted++;
      }
    }
    assertThat(accepted).as("policies and instances in examples/").isGreaterThanOrEqualTo(10);
  }

  // ---------------------------------------------------------------------------------------------
  // helpers

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

  // ---------------------------------------------------------------------------------------------
  // Status: all the durable state the operator keeps there survives a real API server

  /**
   * A status field the CRD schema lacked would be pruned from every status write in silence (the mock keeps
   * anything), and with it what it carries: handled request ids (a restart request acted on again), the circuit's
   * failure times, recent restarts. States of every shape (the round-trip property's generator), mapped to status
   * as the operator maps them, written as the operator writes them (StatusPatch), and read back.
   */
  @Test
  void everyInstanceStatusTheOperatorWritesIsKeptWhole() {
    String name = "status-" + SEQ.incrementAndGet();
    create(INSTANCE, name, "{policyRef: {name: standard}, " + MINIMAL_TEMPLATE + "}");
    var instances = client.resources(dev.respawn.api.v1alpha1.AgentInstance.class).inNamespace(NAMESPACE);
    for (long seed = 1; seed <= 60; seed++) {
      dev.respawn.policy.InstanceState state = dev.respawn.controller.StatusRoundTripProperties.state(
          new java.util.SplittableRandom(seed));
      dev.respawn.api.v1alpha1.AgentInstance current = instances.withName(name).get();
      current.setStatus(dev.respawn.controller.StatusMapper.toStatus(state));
      current.getStatus().conditions = List.of(
          new dev.respawn.api.v1alpha1.StatusCondition("Ready", "False", "StaleHeartbeat", "waiting"),
          new dev.respawn.api.v1alpha1.StatusCondition("Recovering", "True", "Backoff", "attempt 1 of 3"),
          new dev.respawn.api.v1alpha1.StatusCondition("Escalated", "False", "None", ""));
      current.getStatus().conditions.forEach(c -> {
        c.lastTransitionTime = "2026-11-24T10:00:00Z";
        c.observedGeneration = 1L;
      });
      JsonNode sent = JSON.valueToTree(current.getStatus());
      dev.respawn.controller.StatusPatch.replaceIfUnchanged(client, current, current.getStatus());
      dev.respawn.api.v1alpha1.AgentInstanceStatus stored = instances.withName(name).get().getStatus();
      assertThat(dev.respawn.controller.StatusMapper.toState(stored)).as("seed %d: the state read back", seed)
          .isEqualTo(state);
      JsonNode storedJson = JSON.valueToTree(stored);
      assertThat(withoutEmptyArrays(storedJson)).as("seed %d: status as stored", seed)
          .isEqualTo(withoutEmptyArrays(sent));
    }
  }

  /**
   * A status decided on an object that was changed since, or deleted and made anew under its name, is refused with
   * a conflict: it never lands on the newer object (the real server's answer to the operator's write).
   */
  @Test
  void aStatusWriteLandsOnlyOnTheObjectAsItWasRead() {
    String name = "guard-" + SEQ.incrementAndGet();
    create(INSTANCE, name, "{policyRef: {name: standard}, " + MINIMAL_TEMPLATE + "}");
    var instances = client.resources(dev.respawn.api.v1alpha1.AgentInstance.class).inNamespace(NAMESPACE);
    var status = new dev.respawn.api.v1alpha1.AgentInstanceStatus();
    status.phase = dev.respawn.api.v1alpha1.Phase.Backoff;
    status.attempt = 2;
    dev.respawn.api.v1alpha1.AgentInstance read = instances.withName(name).get();
    instances.withName(name).edit(i -> {
      i.getMetadata().setAnnotations(java.util.Map.of("respawn.dev/restart", "r-1"));
      return i;
    });
    assertThat(catchThrowableOfType(KubernetesClientException.class,
        () -> dev.respawn.controller.StatusPatch.replaceIfUnchanged(client, read, status)).getCode())
        .as("changed since it was read").isEqualTo(409);

    dev.respawn.api.v1alpha1.AgentInstance current = instances.withName(name).get();
    instances.withName(name).withTimeoutInMillis(0).delete();
    await().atMost(Duration.ofSeconds(10)).until(() -> instances.withName(name).get() == null);
    create(INSTANCE, name, "{policyRef: {name: standard}, " + MINIMAL_TEMPLATE + "}");
    assertThat(catchThrowableOfType(KubernetesClientException.class,
        () -> dev.respawn.controller.StatusPatch.replaceIfUnchanged(client, current, status)).getCode())
        .as("deleted and made anew").isEqualTo(409);
    assertThat(instances.withName(name).get().getStatus()).isNull();

    dev.respawn.api.v1alpha1.AgentInstance remade = instances.withName(name).get();
    dev.respawn.controller.StatusPatch.replaceIfUnchanged(client, remade, status);
    assertThat(instances.withName(name).get().getStatus().attempt).isEqualTo(2);
  }

  /**
   * The name and spec rules sit on the schema's root, where a rule is evaluated on every write, /status included.
   * They hold when an instance is made: one made before them (a CRD without them, validation skipped) still takes
   * the operator's status writes, the InvalidSpec refusal that says why it is not run among them (api.md §2); a new
   * one with a long name is still refused, and spec still cannot be removed from an instance that has one.
   */
  @Test
  void anInstanceMadeBeforeTheRootRulesTakesTheOperatorsStatus() throws Exception {
    Path file = CrdFreshnessTest.COMMITTED.resolve("agentinstances.respawn.dev.yaml");
    GenericKubernetesResource shipped = client.getKubernetesSerialization()
        .unmarshal(Files.readString(file, StandardCharsets.UTF_8), GenericKubernetesResource.class);
    GenericKubernetesResource lax = client.getKubernetesSerialization()
        .unmarshal(Files.readString(file, StandardCharsets.UTF_8), GenericKubernetesResource.class);
    @SuppressWarnings("unchecked")
    Map<String, Object> version = ((List<Map<String, Object>>) ((Map<String, Object>) lax.getAdditionalProperties()
        .get("spec")).get("versions")).get(0);
    @SuppressWarnings("unchecked")
    Map<String, Object> root = (Map<String, Object>) ((Map<String, Object>) version.get("schema"))
        .get("openAPIV3Schema");
    assertThat(root.remove("x-kubernetes-validations")).as("the root rules of %s", file).isNotNull();
    String longName = uniqueName("made-before-the-rules-" + "x".repeat(50));
    String specless = uniqueName("specless");
    try {
      applyCrd(lax);
      await("the CRD without root rules in force").atMost(AT_MOST).pollInterval(Duration.ofMillis(200))
          .ignoreExceptions().until(() -> create(INSTANCE, longName, "{" + MINIMAL_TEMPLATE + "}") != null);
      GenericKubernetesResource noSpec = parse(INSTANCE, specless, "{}");
      noSpec.getAdditionalProperties().remove("spec");
      client.genericKubernetesResources(KINDS.get(INSTANCE)).inNamespace(NAMESPACE).resource(noSpec).create();
    } finally {
      applyCrd(shipped);
    }
    String probe = uniqueName("probe-" + "y".repeat(60));
    await("the shipped CRD in force").atMost(AT_MOST).pollInterval(Duration.ofMillis(200)).until(() -> {
      try {
        create(INSTANCE, probe, "{" + MINIMAL_TEMPLATE + "}");
        client.genericKubernetesResources(KINDS.get(INSTANCE)).inNamespace(NAMESPACE).withName(probe).delete();
        return false;
      } catch (KubernetesClientException e) {
        return e.getCode() == 422 && e.getMessage().contains("at most 63 characters");
      }
    });

    var instances = client.resources(dev.respawn.api.v1alpha1.AgentInstance.class).inNamespace(NAMESPACE);
    for (String name : List.of(longName, specless)) {
      var status = new dev.respawn.api.v1alpha1.AgentInstanceStatus();
      status.phase = dev.respawn.api.v1alpha1.Phase.Pending;
      var ready = new dev.respawn.api.v1alpha1.StatusCondition("Ready", "False", "InvalidSpec", "refused: " + name);
      ready.lastTransitionTime = "2026-11-27T10:00:00Z";
      status.conditions = List.of(ready);
      dev.respawn.controller.StatusPatch.replaceIfUnchanged(client, instances.withName(name).get(), status);
      assertThat(instances.withName(name).get().getStatus().conditions).as("the refusal of %s", name)
          .singleElement().satisfies(c -> assertThat(c.reason).isEqualTo("InvalidSpec"));
    }
    String kept = uniqueName("kept");
    create(INSTANCE, kept, "{" + MINIMAL_TEMPLATE + "}");
    assertThat(catchThrowableOfType(KubernetesClientException.class, () -> client.genericKubernetesResources(
        KINDS.get(INSTANCE)).inNamespace(NAMESPACE).withName(kept).patch(
        io.fabric8.kubernetes.client.dsl.base.PatchContext.of(io.fabric8.kubernetes.client.dsl.base.PatchType.JSON),
        "[{\"op\": \"remove\", \"path\": \"/spec\"}]")))
        .as("spec removed from an instance that has one").isNotNull()
        .satisfies(e -> assertThat(e.getMessage()).contains("spec is required"));
  }

  static void applyCrd(GenericKubernetesResource crd) {
    client.genericKubernetesResources(CRDS).resource(crd).fieldManager("respawn-crd-test").forceConflicts()
        .serverSideApply();
  }

  /** The same for a policy's status with a shared dependency's circuit in every field (api.md §11). */
  @Test
  void aPolicyStatusWithEveryDependencyFieldIsKeptWhole() {
    String name = "pstatus-" + SEQ.incrementAndGet();
    create(POLICY, name, "{dependencies: [{name: model-api, match: {messageContains: [HTTP 503]}}]}");
    var policies = client.resources(dev.respawn.api.v1alpha1.AgentRestartPolicy.class).inNamespace(NAMESPACE);
    dev.respawn.api.v1alpha1.AgentRestartPolicy current = policies.withName(name).get();
    var status = new dev.respawn.api.v1alpha1.AgentRestartPolicyStatus();
    status.observedGeneration = 1L;
    status.instances = 3;
    status.totalRetryTime = "14s";
    status.conditions = List.of(new dev.respawn.api.v1alpha1.StatusCondition("Accepted", "True", "Valid", ""));
    var d = new dev.respawn.api.v1alpha1.DependencyStatus();
    d.name = "model-api";
    d.state = dev.respawn.api.v1alpha1.CircuitState.HalfOpen;
    d.blamed = 2;
    d.waiting = 2;
    d.probes = List.of("a0");
    d.trips = 1;
    d.openedAt = "2026-11-24T10:00:00.123Z";
    d.halfOpenAt = "2026-11-24T10:05:00.123Z";
    d.closedAt = "2026-11-24T09:00:00Z";
    d.lastTransitionTime = "2026-11-24T10:05:00.123Z";
    d.releaseOrder = List.of("a1", "a2");
    d.recentBlame = List.of(new dev.respawn.api.v1alpha1.BlameRecord("a1", "2026-11-24T09:59:58.5Z"),
        new dev.respawn.api.v1alpha1.BlameRecord("a2", "2026-11-24T09:59:59Z"));
    status.dependencies = List.of(d);
    current.setStatus(status);
    JsonNode sent = JSON.valueToTree(status);
    dev.respawn.controller.StatusPatch.replaceIfUnchanged(client, current, status);
    JsonNode stored = JSON.valueToTree(policies.withName(name).get().getStatus());
    assertThat(stored).as("policy status as stored").isEqualTo(sent);
  }

  private static JsonNode withoutEmptyArrays(JsonNode node) {
    if (node instanceof ObjectNode object) {
      object.properties().removeIf(f -> f.getValue().isArray() && f.getValue().isEmpty());
      object.forEach(RealApiServerTest::withoutEmptyArrays);
    } else if (node != null && node.isArray()) {
      node.forEach(RealApiServerTest::withoutEmptyArrays);
    }
    return node;
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

  static JsonNode at(JsonNode node, String dotted) {
    for (String segment : dotted.split("\\.")) {
      node = node.path(segment);
    }
    return node;
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

  static JsonNode table(String plural) throws Exception {
    JsonNode table = httpGet("/apis/" + GROUP + "/" + VERSION + "/namespaces/" + NAMESPACE + "/" + plural
        + "?labelSelector=" + RUN_LABEL + "%3D" + run, TABLE);
    assertThat(table.path("kind").asText()).as("%s served as a Table", plural).isEqualTo("Table");
    return table;
  }

  static List<String> columnNames(JsonNode table) {
    return StreamSupport.stream(table.path("columnDefinitions").spliterator(), false)
        .map(c -> c.path("name").asText().toUpperCase(Locale.ROOT)).collect(Collectors.toList());
  }

  /** The row's cells by column name. */
  static Map<String, JsonNode> row(JsonNode table, String name) {
    List<String> columns = columnNames(table);
    for (JsonNode row : table.path("rows")) {
      if (name.equals(row.path("cells").path(0).asText())) {
        Map<String, JsonNode> cells = new LinkedHashMap<>();
        for (int i = 0; i < columns.size(); i++) {
          cells.put(columns.get(i), row.path("cells").path(i));
        }
        return cells;
      }
    }
    return fail("no row for %s in %s", name, table.path("rows"));
  }

  // ---------------------------------------------------------------------------------------------
  // The CRDs themselves

  @ParameterizedTest(name = "{0} is Established and its names accepted")
  @ValueSource(strings = {"agentrestartpolicies.respawn.dev", "agentinstances.respawn.dev"})
  void crdAccepted(String name) {
    assertThat(condition(name, "Established")).as("%s Established", name).isEqualTo("True");
    assertThat(condition(name, "NamesAccepted")).as("%s NamesAccepted", name).isEqualTo("True");
    CustomResourceDefinition crd = client.apiextensions().v1().customResourceDefinitions().withName(name).get();
    assertThat(crd.getStatus().getAcceptedNames().getCategories()).containsExactly("respawn");
    assertThat(crd.getStatus().getAcceptedNames().getShortNames())
        .containsExactly(name.startsWith("agentinstances") ? "agi" : "arp");
  }

  @Test
  void discoveryListsShortNamesCategoriesAndStatusSubresource() throws Exception {
    JsonNode list = httpGet("/apis/" + GROUP + "/" + VERSION, "application/json");
    Map<String, JsonNode> resources = new HashMap<>();
    list.path("resources").forEach(r -> resources.put(r.path("name").asText(), r));
    assertThat(resources).containsKeys("agentrestartpolicies", "agentinstances",
        "agentrestartpolicies/status", "agentinstances/status");
    SoftAssertions soft = new SoftAssertions();
    for (String[] expected : new String[][] {{"agentrestartpolicies", "arp", POLICY}, {"agentinstances", "agi", INSTANCE}}) {
      JsonNode resource = resources.get(expected[0]);
      soft.assertThat(resource.path("namespaced").asBoolean()).as("%s namespaced", expected[0]).isTrue();
      soft.assertThat(resource.path("kind").asText()).as("%s kind", expected[0]).isEqualTo(expected[2]);
      soft.assertThat(resource.path("shortNames").toString()).as("%s shortNames", expected[0])
          .isEqualTo("[\"" + expected[1] + "\"]");
      soft.assertThat(resource.path("categories").toString()).as("%s categories", expected[0])
          .isEqualTo("[\"respawn\"]");
    }
    soft.assertAll();
  }

  // ---------------------------------------------------------------------------------------------
  // Defaults

  @Test
  void aPolicyWithoutSpecIsDefaultedAsSpecEmptyIs() {
    String name = uniqueName("nospec");
    GenericKubernetesResource bare = parse(POLICY, name, "{}");
    bare.getAdditionalProperties().remove("spec");
    client.genericKubernetesResources(KINDS.get(POLICY)).inNamespace(NAMESPACE).resource(bare).create();
    JsonNode spec = get(POLICY, name).path("spec");
    assertThat(at(spec, "backoff.type").asText()).as("spec %s", spec).isEqualTo("Exponential");
    assertThat(at(spec, "maxRetries").asInt()).isEqualTo(3);
    assertThat(at(spec, "resume.cooldowns.ToolFailure").asText()).isEqualTo("30s");
  }

  @Test
  void minimalPolicyGetsEveryDefault() {
    String name = uniqueName("minimal");
    create(POLICY, name, "{}");
    JsonNode spec = get(POLICY, name).path("spec");
    Object[][] expected = {
        {"backoff.type", "Exponential"},
        {"backoff.initialDelay", "2s"},
        {"backoff.multiplier", 2.0},
        {"backoff.maxDelay", "120s"},
        {"backoff.jitter", 0.0},
        {"maxRetries", 3},
        {"resetAfter", "60s"},
        {"circuitBreaker.failureThreshold", 5},
        {"circuitBreaker.window", "10m"},
        {"circuitBreaker.openDuration", "5m"},
        {"circuitBreaker.latch", false},
        {"restartRequestExitCode", 42},
        {"resume.mode", "Prefer"},
        {"resume.maxAttempts", 3},
        {"resume.cooldowns.ToolFailure", "30s"},
        {"resume.cooldowns.Timeout", "120s"},
        {"resume.cooldowns.ContextReset", "10s"},
        {"resume.cooldowns.ProcessCrash", "60s"},
    };
    SoftAssertions soft = new SoftAssertions();
    for (Object[] field : expected) {
      JsonNode value = at(spec, (String) field[0]);
      String what = "spec." + field[0] + " of a policy created with spec: {} (got spec " + spec + ")";
      if (field[1] instanceof Number number) {
        soft.assertThat(value.isNumber()).as(what + " is a number").isTrue();
        soft.assertThat(value.asDouble()).as(what).isEqualTo(number.doubleValue());
      } else if (field[1] instanceof Boolean bool) {
        soft.assertThat(value.isBoolean()).as(what + " is a boolean").isTrue();
        soft.assertThat(value.asBoolean()).as(what).isEqualTo(bool);
      } else {
        soft.assertThat(value.isTextual()).as(what + " is a string").isTrue();
        soft.assertThat(value.asText()).as(what).isEqualTo(field[1]);
      }
    }
    // api.md: omitted restartLimit = no window limit, omitted heartbeat.timeout = no heartbeats required.
    soft.assertThat(spec.has("restartLimit")).as("restartLimit stays omitted").isFalse();
    soft.assertThat(spec.has("heartbeat")).as("heartbeat stays omitted").isFalse();
    soft.assertThat(spec.has("failureRules")).as("failureRules stays omitted").isFalse();
    soft.assertAll();
  }

  @Test
  void minimalInstanceGetsSuspendFalse() {
    String name = uniqueName("minimal");
    create(INSTANCE, name, "{" + MINIMAL_TEMPLATE + "}");
    JsonNode spec = get(INSTANCE, name).path("spec");
    assertThat(spec.path("suspend").isBoolean()).as("spec.suspend defaulted (spec %s)", spec).isTrue();
    assertThat(spec.path("suspend").asBoolean()).as("spec.suspend").isFalse();
    assertThat(spec.has("policyRef")).as("policyRef stays omitted (the operator's default policy)").isFalse();
    // the template is kept, not pruned
    assertThat(at(spec, "template.spec.containers").path(0).path("image").asText())
        .isEqualTo("registry.example/agents/coder:1.4");
  }

  static final String FULL_POLICY_SPEC = """
      {
        backoff: {type: Exponential, initialDelay: 2s, multiplier: 2.0, maxDelay: 120s, jitter: 0.25},
        maxRetries: 3,
        resetAfter: 60s,
        restartLimit: {maxRestarts: 10, window: 1h},
        circuitBreaker: {failureThreshold: 5, window: 10m, openDuration: 5m, latch: false},
        failureRules: [
          {name: permanent-config,
           match: {exitCodes: [2, 78], reasons: [Error],
                   messageContains: [invalid_configuration, spec_not_found], classes: [ToolFailure]},
           action: Fail, maxRetries: 0, cooldown: 30s}
        ],
        heartbeat: {timeout: 60s, startupGrace: 120s},
        restartRequestExitCode: 42,
        resume: {mode: Prefer, maxAttempts: 3,
                 cooldowns: {ToolFailure: 30s, Timeout: 120s, ContextReset: 10s, ProcessCrash: 60s}}
      }
      """;

  /** Numbers compare by value (the server writes 2.0 as 2). */
  static final Comparator<JsonNode> BY_VALUE = (a, b) -> {
    if (a.isNumber() && b.isNumber()) {
      return Double.compare(a.asDouble(), b.asDouble());
    }
    return a.equals(b) ? 0 : 1;
  };

  @Test
  void fullySpecifiedPolicyFromApiMdIsAcceptedAndKeptAsWritten() {
    String name = uniqueName("full");
    GenericKubernetesResource sent = parse(POLICY, name, FULL_POLICY_SPEC);
    // api.md's example also shows a status; with the status subresource a create ignores it.
    sent.setAdditionalProperty("status", Map.of("instances", 12, "totalRetryTime", "14s"));
    client.genericKubernetesResources(KINDS.get(POLICY)).inNamespace(NAMESPACE).resource(sent).create();
    JsonNode stored = get(POLICY, name);
    JsonNode want = JSON.valueToTree(sent.getAdditionalProperties().get("spec"));
    assertThat(stored.path("spec").equals(BY_VALUE, want))
        .as("stored spec %s equals the spec written %s (nothing pruned or changed)", stored.path("spec"), want)
        .isTrue();
    assertThat(stored.has("status")).as("status is only written through the status subresource").isFalse();
  }

  // ---------------------------------------------------------------------------------------------
  // Valid edge cases are accepted (the bounds are inclusive, every enum value works)

  static Stream<Arguments> validSpecs() {
    return Stream.of(
        Arguments.of("maxRetries 0", POLICY, "{maxRetries: 0}"),
        Arguments.of("maxRetries 1000", POLICY, "{maxRetries: 1000}"),
        Arguments.of("multiplier 1.0", POLICY, "{backoff: {multiplier: 1.0}}"),
        Arguments.of("multiplier 10", POLICY, "{backoff: {multiplier: 10}}"),
        Arguments.of("jitter 0", POLICY, "{backoff: {jitter: 0}}"),
        Arguments.of("jitter 1", POLICY, "{backoff: {jitter: 1}}"),
        Arguments.of("failureThreshold 1", POLICY, "{circuitBreaker: {failureThreshold: 1, latch: true}}"),
        Arguments.of("failureThreshold 100", POLICY, "{circuitBreaker: {failureThreshold: 100}}"),
        Arguments.of("restartLimit.maxRestarts 1", POLICY, "{restartLimit: {maxRestarts: 1, window: 1s}}"),
        Arguments.of("restartLimit.maxRestarts 1000", POLICY, "{restartLimit: {maxRestarts: 1000, window: 24h}}"),
        Arguments.of("resume.maxAttempts 0", POLICY, "{resume: {maxAttempts: 0}}"),
        Arguments.of("resume.maxAttempts 1000", POLICY, "{resume: {maxAttempts: 1000}}"),
        Arguments.of("restartRequestExitCode 1", POLICY, "{restartRequestExitCode: 1}"),
        Arguments.of("restartRequestExitCode 255", POLICY, "{restartRequestExitCode: 255}"),
        Arguments.of("rule bounds", POLICY, "{failureRules: [{name: a, action: Retry, maxRetries: 0,"
            + " match: {exitCodes: [0, 255]}}, {name: b, action: Ignore, maxRetries: 1000}, {name: c, action: Fail}]}"),
        Arguments.of("every class", POLICY, "{failureRules: [{name: a, action: Retry,"
            + " match: {classes: [ToolFailure, Timeout, ContextReset, ProcessCrash, Unknown]}}]}"),
        Arguments.of("backoff None", POLICY, "{backoff: {type: None}}"),
        Arguments.of("backoff Immediate", POLICY, "{backoff: {type: Immediate}}"),
        Arguments.of("backoff Linear", POLICY, "{backoff: {type: Linear}}"),
        Arguments.of("resume Off", POLICY, "{resume: {mode: \"Off\"}}"),
        Arguments.of("resume Require", POLICY, "{resume: {mode: Require}}"),
        Arguments.of("maxDelay == initialDelay", POLICY, "{backoff: {initialDelay: 30s, maxDelay: 30s}}"),
        Arguments.of("maxDelay in other units", POLICY, "{backoff: {initialDelay: 500ms, maxDelay: 1h30m}}"),
        Arguments.of("fractional and micro durations", POLICY,
            "{resetAfter: 1.5h, heartbeat: {timeout: 250µs, startupGrace: 100ns}}"),
        Arguments.of("instance with everything", INSTANCE, "{policyRef: {name: standard}, agentContainer: agent,"
            + " task: TASK-31-1, suspend: true, heartbeat: {leaseName: coder}, " + MINIMAL_TEMPLATE + "}"));
  }

  @ParameterizedTest(name = "accepted: {0}")
  @MethodSource("validSpecs")
  void validSpecIsAccepted(String description, String kind, String spec) {
    String name = uniqueName("ok");
    try {
      create(kind, name, spec);
    } catch (KubernetesClientException e) {
      fail("%s (%s spec %s) was refused: HTTP %d %s", description, kind, spec, e.getCode(), e.getMessage());
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Invalid specs are refused with HTTP 422 naming the field

  static final String LOW = "greater than or equal to";
  static final String HIGH = "less than or equal to";
  static final String PATTERN = "should match";
  static final String ENUM = "Unsupported value";
  static final String REQUIRED = "Required value";
  static final String POSITIVE = "must be greater than 0";

  /** Where each duration field sits in a spec; %s is the value. */
  static final Map<String, String> DURATIONS = new LinkedHashMap<>();

  static {
    DURATIONS.put("spec.backoff.initialDelay", "{backoff: {initialDelay: %s}}");
    DURATIONS.put("spec.backoff.maxDelay", "{backoff: {maxDelay: %s}}");
    DURATIONS.put("spec.resetAfter", "{resetAfter: %s}");
    DURATIONS.put("spec.restartLimit.window", "{restartLimit: {maxRestarts: 3, window: %s}}");
    DURATIONS.put("spec.circuitBreaker.window", "{circuitBreaker: {window: %s}}");
    DURATIONS.put("spec.circuitBreaker.openDuration", "{circuitBreaker: {openDuration: %s}}");
    DURATIONS.put("spec.failureRules[0].cooldown", "{failureRules: [{name: r, action: Retry, cooldown: %s}]}");
    DURATIONS.put("spec.heartbeat.timeout", "{heartbeat: {timeout: %s}}");
    DURATIONS.put("spec.heartbeat.startupGrace", "{heartbeat: {startupGrace: %s}}");
    DURATIONS.put("spec.resume.cooldowns.ToolFailure", "{resume: {cooldowns: {ToolFailure: %s}}}");
    DURATIONS.put("spec.resume.cooldowns.Timeout", "{resume: {cooldowns: {Timeout: %s}}}");
    DURATIONS.put("spec.resume.cooldowns.ContextReset", "{resume: {cooldowns: {ContextReset: %s}}}");
    DURATIONS.put("spec.resume.cooldowns.ProcessCrash", "{resume: {cooldowns: {ProcessCrash: %s}}}");
  }

  static Stream<Arguments> invalidSpecs() {
    List<Arguments> cases = new ArrayList<>(List.of(
        // ranges, both directions
        Arguments.of("maxRetries -1", POLICY, "{maxRetries: -1}", "spec.maxRetries", LOW),
        Arguments.of("maxRetries 1001", POLICY, "{maxRetries: 1001}", "spec.maxRetries", HIGH),
        Arguments.of("multiplier 0.99", POLICY, "{backoff: {multiplier: 0.99}}", "spec.backoff.multiplier", LOW),
        Arguments.of("multiplier 10.01", POLICY, "{backoff: {multiplier: 10.01}}", "spec.backoff.multiplier", HIGH),
        Arguments.of("jitter -0.01", POLICY, "{backoff: {jitter: -0.01}}", "spec.backoff.jitter", LOW),
        Arguments.of("jitter 1.01", POLICY, "{backoff: {jitter: 1.01}}", "spec.backoff.jitter", HIGH),
        Arguments.of("failureThreshold 0", POLICY, "{circuitBreaker: {failureThreshold: 0}}",
            "spec.circuitBreaker.failureThreshold", LOW),
        Arguments.of("failureThreshold 101", POLICY, "{circuitBreaker: {failureThreshold: 101}}",
            "spec.circuitBreaker.failureThreshold", HIGH),
        Arguments.of("restartLimit.maxRestarts 0", POLICY, "{restartLimit: {maxRestarts: 0, window: 1h}}",
            "spec.restartLimit.maxRestarts", LOW),
        Arguments.of("restartLimit.maxRestarts 1001", POLICY, "{restartLimit: {maxRestarts: 1001, window: 1h}}",
            "spec.restartLimit.maxRestarts", HIGH),
        Arguments.of("restartRequestExitCode 0", POLICY, "{restartRequestExitCode: 0}",
            "spec.restartRequestExitCode", LOW),
        Arguments.of("restartRequestExitCode 256", POLICY, "{restartRequestExitCode: 256}",
            "spec.restartRequestExitCode", HIGH),
        Arguments.of("resume.maxAttempts -1", POLICY, "{resume: {maxAttempts: -1}}", "spec.resume.maxAttempts", LOW),
        Arguments.of("resume.maxAttempts 1001", POLICY, "{resume: {maxAttempts: 1001}}",
            "spec.resume.maxAttempts", HIGH),
        Arguments.of("rule maxRetries -1", POLICY, "{failureRules: [{name: r, action: Retry, maxRetries: -1}]}",
            "spec.failureRules[0].maxRetries", LOW),
        Arguments.of("rule maxRetries 1001", POLICY, "{failureRules: [{name: r, action: Retry, maxRetries: 1001}]}",
            "spec.failureRules[0].maxRetries", HIGH),
        Arguments.of("exit code -1", POLICY, "{failureRules: [{name: r, action: Retry, match: {exitCodes: [-1]}}]}",
            "spec.failureRules[0].match.exitCodes[0]", LOW),
        Arguments.of("exit code 256", POLICY, "{failureRules: [{name: r, action: Retry, match: {exitCodes: [1, 256]}}]}",
            "spec.failureRules[0].match.exitCodes[1]", HIGH),
        // enums
        Arguments.of("backoff.type Fibonacci", POLICY, "{backoff: {type: Fibonacci}}", "spec.backoff.type", ENUM),
        Arguments.of("backoff.type lower case", POLICY, "{backoff: {type: exponential}}", "spec.backoff.type", ENUM),
        Arguments.of("resume.mode Always", POLICY, "{resume: {mode: Always}}", "spec.resume.mode", ENUM),
        Arguments.of("rule action Restart", POLICY, "{failureRules: [{name: r, action: Restart}]}",
            "spec.failureRules[0].action", ENUM),
        Arguments.of("match class Network", POLICY,
            "{failureRules: [{name: r, action: Retry, match: {classes: [Timeout, Network]}}]}",
            "spec.failureRules[0].match.classes[1]", ENUM),
        // CEL rules
        Arguments.of("maxDelay < initialDelay", POLICY, "{backoff: {initialDelay: 10s, maxDelay: 5s}}",
            "spec.backoff.maxDelay", "maxDelay must be >="),
        Arguments.of("initialDelay above the default maxDelay", POLICY, "{backoff: {initialDelay: 5m}}",
            "spec.backoff.maxDelay", "maxDelay must be >="),
        // shared dependencies (api.md §11)
        Arguments.of("dependency name not a DNS label", POLICY, "{dependencies: [{name: Model_API, match: {}}]}",
            "spec.dependencies[0].name", PATTERN),
        Arguments.of("duplicate dependency names", POLICY,
            "{dependencies: [{name: model-api, match: {}}, {name: model-api, match: {}}]}", "spec.dependencies",
            "must be unique"),
        Arguments.of("dependency without match", POLICY, "{dependencies: [{name: model-api}]}",
            "spec.dependencies[0].match", REQUIRED),
        Arguments.of("dependency probes 0", POLICY, "{dependencies: [{name: m, match: {}, probes: 0}]}",
            "spec.dependencies[0].probes", LOW),
        Arguments.of("dependency probes 101", POLICY, "{dependencies: [{name: m, match: {}, probes: 101}]}",
            "spec.dependencies[0].probes", HIGH),
        Arguments.of("dependency failureThreshold 1001", POLICY,
            "{dependencies: [{name: m, match: {}, failureThreshold: 1001}]}", "spec.dependencies[0].failureThreshold",
            HIGH),
        Arguments.of("dependency releaseRate -1", POLICY, "{dependencies: [{name: m, match: {}, releaseRate: -1}]}",
            "spec.dependencies[0].releaseRate", LOW),
        Arguments.of("dependency window 0s", POLICY, "{dependencies: [{name: m, match: {}, window: 0s}]}",
            "spec.dependencies[0].window", POSITIVE),
        Arguments.of("duplicate rule names", POLICY,
            "{failureRules: [{name: same, action: Retry}, {name: other, action: Fail}, {name: same, action: Ignore}]}",
            "spec.failureRules", "must be unique"),
        Arguments.of("restartLimit.window 0s", POLICY, "{restartLimit: {maxRestarts: 3, window: 0s}}",
            "spec.restartLimit.window", POSITIVE),
        Arguments.of("circuitBreaker.window 0s", POLICY, "{circuitBreaker: {window: 0s}}",
            "spec.circuitBreaker.window", POSITIVE),
        Arguments.of("circuitBreaker.openDuration 0m", POLICY, "{circuitBreaker: {openDuration: 0m}}",
            "spec.circuitBreaker.openDuration", POSITIVE),
        Arguments.of("heartbeat.timeout 0ms", POLICY, "{heartbeat: {timeout: 0ms}}", "spec.heartbeat.timeout", POSITIVE),
        Arguments.of("resetAfter 0s", POLICY, "{resetAfter: 0s}", "spec.resetAfter", POSITIVE),
        // required fields
        Arguments.of("rule without name", POLICY, "{failureRules: [{action: Retry}]}",
            "spec.failureRules[0].name", REQUIRED),
        Arguments.of("rule without action", POLICY, "{failureRules: [{name: r}]}",
            "spec.failureRules[0].action", REQUIRED),
        Arguments.of("restartLimit without maxRestarts", POLICY, "{restartLimit: {window: 1h}}",
            "spec.restartLimit.maxRestarts", REQUIRED),
        Arguments.of("restartLimit without window", POLICY, "{restartLimit: {maxRestarts: 3}}",
            "spec.restartLimit.window", REQUIRED),
        Arguments.of("instance without template", INSTANCE, "{policyRef: {name: standard}}", "spec.template", REQUIRED),
        Arguments.of("policyRef without name", INSTANCE, "{policyRef: {}, " + MINIMAL_TEMPLATE + "}",
            "spec.policyRef.name", REQUIRED),
        // wrong types
        Arguments.of("suspend \"x\"", INSTANCE, "{suspend: \"x\", " + MINIMAL_TEMPLATE + "}", "spec.suspend",
            "must be of type boolean"),
        Arguments.of("maxRetries \"three\"", POLICY, "{maxRetries: three}", "spec.maxRetries", "must be of type integer"),
        Arguments.of("latch \"maybe\"", POLICY, "{circuitBreaker: {latch: maybe}}", "spec.circuitBreaker.latch",
            "must be of type boolean"),
        Arguments.of("backoff a string", POLICY, "{backoff: fast}", "spec.backoff", "must be of type object"),
        // a pod template without containers (api.md §2)
        Arguments.of("template with an empty container list", INSTANCE, "{template: {spec: {containers: []}}}",
            "spec.template.spec.containers", "must name at least one container"),
        Arguments.of("template without a pod spec", INSTANCE, "{template: {metadata: {labels: {a: b}}}}",
            "spec.template.spec.containers", "must name at least one container"),
        // other instance fields
        Arguments.of("leaseName not a DNS name", INSTANCE, "{heartbeat: {leaseName: Not_A_Name}, " + MINIMAL_TEMPLATE
            + "}", "spec.heartbeat.leaseName", PATTERN)));
    for (var field : DURATIONS.entrySet()) {
      for (String bad : List.of("5x", "ten seconds", "-1s")) {
        cases.add(Arguments.of(field.getKey() + " \"" + bad + "\"", POLICY,
            String.format(field.getValue(), "\"" + bad + "\""), field.getKey(), PATTERN));
      }
      // longer than a Go duration can be (the operator refuses it too): CEL's duration() fails on it, and the
      // API server names the object that holds the rule, its message the field
      String key = field.getKey();
      cases.add(Arguments.of(key + " 9999999h", POLICY, String.format(field.getValue(), "9999999h"),
          key.substring(0, key.lastIndexOf('.')), key.substring(key.lastIndexOf('.') + 1)));
    }
    return cases.stream();
  }

  @ParameterizedTest(name = "refused: {0}")
  @MethodSource("invalidSpecs")
  void invalidSpecIsRefusedNamingTheField(String description, String kind, String spec, String field, String why) {
    String name = uniqueName("bad");
    assertThatThrownBy(() -> create(kind, name, spec))
        .as("%s: %s with spec %s must be refused", description, kind, spec)
        .isInstanceOfSatisfying(KubernetesClientException.class, e -> {
          assertThat(e.getCode()).as("HTTP status for %s: %s", description, e.getMessage()).isEqualTo(422);
          assertThat(e.getMessage()).as("the message names the field").contains(field).contains(why);
          List<String> causes = e.getStatus() == null || e.getStatus().getDetails() == null
              ? List.of()
              : e.getStatus().getDetails().getCauses().stream().map(StatusCause::getField).collect(Collectors.toList());
          assertThat(causes).as("the status causes name the field").contains(field);
        });
  }

  @Test
  void aDependencyGetsEveryDefault() {
    String name = uniqueName("deps");
    create(POLICY, name, "{dependencies: [{name: model-api, match: {messageContains: [HTTP 503]}}]}");
    JsonNode d = get(POLICY, name).path("spec").path("dependencies").get(0);
    assertThat(d.path("failureThreshold").asInt()).isEqualTo(3);
    assertThat(d.path("window").asText()).isEqualTo("1m");
    assertThat(d.path("openDuration").asText()).isEqualTo("30s");
    assertThat(d.path("probes").asInt()).isEqualTo(1);
    assertThat(d.path("releaseRate").asDouble()).isEqualTo(5.0);
  }

  @Test
  void anInstanceNameLongerThan63CharactersIsRefused() {
    String tooLong = "a".repeat(64);
    assertThatThrownBy(() -> create(INSTANCE, tooLong, "{" + MINIMAL_TEMPLATE + "}"))
        .isInstanceOfSatisfying(KubernetesClientException.class, e -> {
          assertThat(e.getCode()).isEqualTo(422);
          assertThat(e.getMessage()).contains("metadata.name must be at most 63 characters");
        });
    String longest = "b".repeat(63);
    create(INSTANCE, longest, "{" + MINIMAL_TEMPLATE + "}");
    assertThat(get(INSTANCE, longest).path("metadata").path("name").asText()).isEqualTo(longest);
  }

  /** api.md §2: the name is a DNS-1123 label; a DNS subdomain with a dot (valid for most objects) is refused. */
  @Test
  void anInstanceNameWithADotIsRefused() {
    String dotted = uniqueName("a") + ".b";
    assertThatThrownBy(() -> create(INSTANCE, dotted, "{" + MINIMAL_TEMPLATE + "}"))
        .isInstanceOfSatisfying(KubernetesClientException.class, e -> {
          assertThat(e.getCode()).isEqualTo(422);
          assertThat(e.getMessage()).contains("metadata.name must be a DNS-1123 label");
        });
  }

  /** api.md §2: the template must name a container, and so an instance without any spec is refused too. */
  @Test
  void anInstanceWithoutSpecIsRefused() {
    GenericKubernetesResource bare = parse(INSTANCE, uniqueName("bare"), "{}");
    bare.getAdditionalProperties().remove("spec");
    assertThatThrownBy(() -> client.genericKubernetesResources(KINDS.get(INSTANCE)).inNamespace(NAMESPACE)
        .resource(bare).create())
        .isInstanceOfSatisfying(KubernetesClientException.class, e -> {
          assertThat(e.getCode()).isEqualTo(422);
          assertThat(e.getMessage()).contains("spec: Required value", "spec.template");
        });
  }

  // ---------------------------------------------------------------------------------------------
  // The operator itself, on a server that serves Respawn's resources and nothing else (no pods, Leases or Events)

  /**
   * The operator answers every policy and instance on a server of custom resources only: its pod and Lease
   * informers never list, and after its informer sync timeout it goes on without them (api.md §1, §2 status).
   */
  @Test
  void theOperatorAnswersOnAServerOfCustomResourcesOnly() {
    String ns = "op-" + run;
    String other = "op2-" + run;
    // made before the operator starts, in the second of the namespaces it watches (one informer each)
    for (String early : List.of("early-1", "early-2")) {
      createIn(ns, INSTANCE, early, "{policyRef: {name: nowhere}, " + MINIMAL_TEMPLATE + "}");
      createIn(other, INSTANCE, early, "{policyRef: {name: nowhere}, " + MINIMAL_TEMPLATE + "}");
    }
    KubernetesClient operatorClient = new KubernetesClientBuilder().withConfig(client.getConfiguration())
        .withKubernetesSerialization(dev.respawn.controller.TolerantResources.serialization()).build();
    try (dev.respawn.controller.RespawnOperator operator = new dev.respawn.controller.RespawnOperator(operatorClient,
        dev.respawn.controller.OperatorSettings.defaults().withNamespaces(java.util.Set.of(ns, other))
            .withInformerSyncTimeout(Duration.ofSeconds(3)), dev.respawn.controller.DecisionSink.NONE,
        java.util.Optional.empty()).start()) {
      createIn(ns, POLICY, "standard", "{}");
      createIn(ns, INSTANCE, "lost", "{policyRef: {name: nowhere}, " + MINIMAL_TEMPLATE + "}");
      createIn(ns, INSTANCE, "coder", "{policyRef: {name: standard}, " + MINIMAL_TEMPLATE + "}");
      await("policy status").atMost(AT_MOST).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
        JsonNode status = getIn(ns, POLICY, "standard").path("status");
        assertThat(status.path("totalRetryTime").asText()).isEqualTo("14s");
        assertThat(status.path("conditions").toString()).contains("\"type\":\"Accepted\"", "\"status\":\"True\"");
      });
      await("refused instance").atMost(AT_MOST).pollInterval(Duration.ofMillis(200)).untilAsserted(() ->
          assertThat(getIn(ns, INSTANCE, "lost").path("status").path("conditions").toString())
              .contains("PolicyNotFound"));
      for (String namespace : List.of(ns, other)) {
        for (String early : List.of("early-1", "early-2")) {
          await(namespace + "/" + early).atMost(AT_MOST).pollInterval(Duration.ofMillis(200)).untilAsserted(() ->
              assertThat(getIn(namespace, INSTANCE, early).path("status").path("conditions").toString())
                  .contains("PolicyNotFound"));
        }
      }
      // its pod cannot be made here (no pods API): a refused create, retried with the backoff (api.md §4)
      await("instance status").atMost(AT_MOST).pollInterval(Duration.ofMillis(200)).untilAsserted(() ->
          assertThat(getIn(ns, INSTANCE, "coder").path("status").path("lastDecision").path("reasonCode").asText())
              .isEqualTo("spawn_failed"));
    } finally {
      for (ResourceDefinitionContext kind : KINDS.values()) {
        client.genericKubernetesResources(kind).inNamespace(ns).delete();
        client.genericKubernetesResources(kind).inNamespace(other).delete();
      }
      operatorClient.close();
    }
  }

  static void createIn(String namespace, String kind, String name, String spec) {
    GenericKubernetesResource r = parse(kind, name, spec);
    r.getMetadata().setNamespace(namespace);
    client.genericKubernetesResources(KINDS.get(kind)).inNamespace(namespace).resource(r).create();
  }

  static JsonNode getIn(String namespace, String kind, String name) {
    GenericKubernetesResource found =
        client.genericKubernetesResources(KINDS.get(kind)).inNamespace(namespace).withName(name).get();
    assertThat(found).as("%s %s/%s", kind, namespace, name).isNotNull();
    return JSON.valueToTree(found);
  }

  // ---------------------------------------------------------------------------------------------
  // Printer columns, as kubectl gets them (server-side Table)

  @Test
  void policyTable() throws Exception {
    String name = uniqueName("table");
    create(POLICY, name, "{restartLimit: {maxRestarts: 10, window: 1h}}");
    GenericKubernetesResource current =
        client.genericKubernetesResources(KINDS.get(POLICY)).inNamespace(NAMESPACE).withName(name).get();
    current.setAdditionalProperty("status", Map.of("observedGeneration", 1, "instances", 0,
        "conditions", List.of(Map.of("type", "Accepted", "status", "True", "reason", "Valid", "message", "",
            "lastTransitionTime", Instant.now().truncatedTo(ChronoUnit.SECONDS).toString()))));
    client.genericKubernetesResources(KINDS.get(POLICY)).inNamespace(NAMESPACE).resource(current).updateStatus();

    JsonNode table = table("agentrestartpolicies");
    assertThat(columnNames(table)).containsExactly(
        "NAME", "TYPE", "MAX-RETRIES", "INITIAL", "MAX-DELAY", "THRESHOLD", "ACCEPTED", "AGE");
    Map<String, JsonNode> row = row(table, name);
    SoftAssertions soft = new SoftAssertions();
    soft.assertThat(row.get("TYPE").asText()).as("TYPE").isEqualTo("Exponential");
    soft.assertThat(row.get("MAX-RETRIES").asInt(-1)).as("MAX-RETRIES").isEqualTo(3);
    soft.assertThat(row.get("INITIAL").asText()).as("INITIAL").isEqualTo("2s");
    soft.assertThat(row.get("MAX-DELAY").asText()).as("MAX-DELAY").isEqualTo("120s");
    soft.assertThat(row.get("THRESHOLD").asInt(-1)).as("THRESHOLD").isEqualTo(5);
    soft.assertThat(row.get("ACCEPTED").asText()).as("ACCEPTED").isEqualTo("True");
    soft.assertThat(row.get("AGE").asText()).as("AGE").isNotBlank().doesNotContain("<");
    soft.assertAll();
  }

  @Test
  void instanceTable() throws Exception {
    String name = uniqueName("table");
    create(INSTANCE, name, "{" + MINIMAL_TEMPLATE + "}");
    Instant next = Instant.now().plus(Duration.ofMinutes(5)).truncatedTo(ChronoUnit.SECONDS);
    GenericKubernetesResource current =
        client.genericKubernetesResources(KINDS.get(INSTANCE)).inNamespace(NAMESPACE).withName(name).get();
    ObjectNode status = JSON.createObjectNode();
    status.put("phase", "Backoff").put("run", 4).put("restarts", 3).put("attempt", 2)
        .put("nextRestartAt", next.toString());
    status.putObject("circuitBreaker").put("state", "Closed").put("failureCount", 2);
    status.putObject("heartbeat").put("verdict", "Healthy");
    current.setAdditionalProperty("status", JSON.convertValue(status, Map.class));
    client.genericKubernetesResources(KINDS.get(INSTANCE)).inNamespace(NAMESPACE).resource(current).updateStatus();

    JsonNode table = table("agentinstances");
    assertThat(columnNames(table)).containsExactly(
        "NAME", "PHASE", "RESTARTS", "ATTEMPT", "CIRCUIT", "HEARTBEAT", "NEXT-RESTART", "AGE");
    Map<String, JsonNode> row = row(table, name);
    SoftAssertions soft = new SoftAssertions();
    soft.assertThat(row.get("PHASE").asText()).as("PHASE").isEqualTo("Backoff");
    soft.assertThat(row.get("RESTARTS").asInt(-1)).as("RESTARTS").isEqualTo(3);
    soft.assertThat(row.get("ATTEMPT").asInt(-1)).as("ATTEMPT").isEqualTo(2);
    soft.assertThat(row.get("CIRCUIT").asText()).as("CIRCUIT").isEqualTo("Closed");
    soft.assertThat(row.get("HEARTBEAT").asText()).as("HEARTBEAT").isEqualTo("Healthy");
    // A Backoff instance's next restart is in the future; the column must show it, not "<invalid>"
    // (what a "date" column shows for a future timestamp).
    soft.assertThat(row.get("NEXT-RESTART").asText())
        .as("NEXT-RESTART for nextRestartAt=%s (5 minutes from now): a printer column of type \"date\" shows the"
            + " time since a timestamp, \"<invalid>\" for a future one; the column needs another type (string)", next)
        .isNotBlank().doesNotContain("<invalid>").doesNotContain("<unknown>");
    soft.assertThat(row.get("AGE").asText()).as("AGE").isNotBlank().doesNotContain("<");
    soft.assertAll();
  }
}

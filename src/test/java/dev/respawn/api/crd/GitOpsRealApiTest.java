package dev.respawn.api.crd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentInstanceStatus;
import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import dev.respawn.api.v1alpha1.AgentRestartPolicyStatus;
import dev.respawn.api.v1alpha1.CircuitBreakerStatus;
import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.api.v1alpha1.StatusCondition;
import dev.respawn.controller.StatusPatch;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntry;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * GitOps lens on a real API server (../shared/tools/realapi): Argo CD and Flux server-side-apply the manifests of Git
 * with a field manager of their own (force-conflicts), compare live objects with Git, and re-apply on every sync. The
 * operator writes only the status subresource (StatusPatch). Runs when RESPAWN_REALAPI_KUBECONFIG is set.
 */
class GitOpsRealApiTest {
  static final String ENV = RealApiServerFixture.ENV;
  static final String GITOPS = "argocd"; // the field manager a GitOps tool applies with
  static final ObjectMapper JSON = new ObjectMapper();
  static final ResourceDefinitionContext CRDS = RealApiServerFixture.CRDS;
  static final Map<String, ResourceDefinitionContext> KINDS = RealApiServerFixture.KINDS;

  static KubernetesClient client;
  static String namespace;
  static String skip;

  @BeforeAll
  static void connect() throws Exception {
    String kubeconfig = System.getenv(ENV);
    if (kubeconfig == null || kubeconfig.isBlank()) {
      skip = ENV + " is not set (see RealApiServerFixture)";
      if (Boolean.parseBoolean(System.getProperty(RealApiServerFixture.REQUIRE, "false"))) {
        org.junit.jupiter.api.Assertions.fail("-D" + RealApiServerFixture.REQUIRE + "=true but " + skip);
      }
      return;
    }
    Config config = Config.fromKubeconfig(Files.readString(Path.of(kubeconfig)));
    config.setRequestTimeout(30_000);
    client = new KubernetesClientBuilder().withConfig(config).build();
    namespace = "gitops-" + UUID.randomUUID().toString().substring(0, 8);
    applyShippedCrds();
    // a CRD just made (a fresh server, this class first) is served a moment after: 404 until then
    for (ResourceDefinitionContext kind : KINDS.values()) {
      await("%s served".formatted(kind.getPlural())).atMost(Duration.ofSeconds(30))
          .pollInterval(Duration.ofMillis(100)).ignoreExceptions()
          .until(() -> client.genericKubernetesResources(kind).inNamespace(namespace).list() != null);
    }
  }

  @BeforeEach
  void skipWithoutServer() {
    Assumptions.assumeTrue(skip == null, skip);
  }

  @AfterAll
  static void close() {
    if (client != null) {
      for (ResourceDefinitionContext kind : KINDS.values()) {
        client.genericKubernetesResources(kind).inNamespace(namespace).delete();
      }
      client.close();
    }
  }

  static void applyShippedCrds() throws Exception {
    try (Stream<Path> files = Files.list(CrdFreshnessTest.COMMITTED)) {
      for (Path f : files.filter(p -> p.toString().endsWith(".yaml")).sorted().toList()) {
        applyCrd(client.getKubernetesSerialization().unmarshal(Files.readString(f, StandardCharsets.UTF_8),
            GenericKubernetesResource.class));
      }
    }
  }

  static void applyCrd(GenericKubernetesResource crd) {
    client.genericKubernetesResources(CRDS).resource(crd).fieldManager("gitops-crd").forceConflicts()
        .serverSideApply();
  }

  /** The respawn.dev documents of examples/, in the test's namespace, as Git has them. */
  static List<GenericKubernetesResource> examples() throws Exception {
    List<GenericKubernetesResource> out = new ArrayList<>();
    try (Stream<Path> files = Files.list(Path.of("examples"))) {
      for (Path f : files.filter(p -> p.toString().endsWith(".yaml")).sorted().toList()) {
        for (String doc : Files.readString(f).split("(?m)^---\\s*$")) {
          GenericKubernetesResource r = client.getKubernetesSerialization().unmarshal(doc,
              GenericKubernetesResource.class);
          if (r != null && KINDS.containsKey(r.getKind())) {
            r.getMetadata().setNamespace(namespace);
            out.add(r);
          }
        }
      }
    }
    return out;
  }

  static GenericKubernetesResource firstExample(String kind) throws Exception {
    return examples().stream().filter(r -> r.getKind().equals(kind)).findFirst().orElseThrow();
  }

  static GenericKubernetesResource sync(GenericKubernetesResource desired) {
    return client.genericKubernetesResources(KINDS.get(desired.getKind())).inNamespace(namespace)
        .resource(desired).fieldManager(GITOPS).forceConflicts().serverSideApply();
  }

  static GenericKubernetesResource live(String kind, String name) {
    return client.genericKubernetesResources(KINDS.get(kind)).inNamespace(namespace).withName(name).get();
  }

  static GenericKubernetesResource copy(GenericKubernetesResource r) {
    return client.getKubernetesSerialization().clone(r);
  }

  /** 1. Every example applied twice by a GitOps tool: the second sync changes nothing; a server-side diff is empty. */
  @Test
  void examplesSyncedTwiceChangeNothing() throws Exception {
    List<GenericKubernetesResource> git = examples();
    assertThat(git).hasSizeGreaterThanOrEqualTo(10);
    Map<String, String> first = new LinkedHashMap<>();
    for (GenericKubernetesResource r : git) {
      first.put(r.getKind() + "/" + r.getMetadata().getName(), sync(copy(r)).getMetadata().getResourceVersion());
    }
    for (GenericKubernetesResource r : git) {
      String key = r.getKind() + "/" + r.getMetadata().getName();
      GenericKubernetesResource again = sync(copy(r));
      assertThat(again.getMetadata().getResourceVersion()).as("second sync of %s", key).isEqualTo(first.get(key));
      GenericKubernetesResource dryRun = client.genericKubernetesResources(KINDS.get(r.getKind()))
          .inNamespace(namespace).resource(copy(r)).dryRun().fieldManager(GITOPS).forceConflicts().serverSideApply();
      assertThat((Object) JSON.valueToTree(dryRun.getAdditionalProperties().get("spec")))
          .as("server-side diff of %s", key)
          .isEqualTo((Object) JSON.valueToTree(live(r.getKind(), r.getMetadata().getName()).getAdditionalProperties()
              .get("spec")));
    }
  }

  /**
   * 2. The operator's status writes and a GitOps sync share no field: no conflict, nothing reverted, the sync after a
   * status write changes nothing, and the status survives every sync. The operator never touches metadata.
   */
  @Test
  void theOperatorsStatusWritesAndGitOpsSyncsNeverMeet() throws Exception {
    GenericKubernetesResource git = firstExample("AgentInstance");
    String name = git.getMetadata().getName();
    sync(copy(git));
    var instances = client.resources(AgentInstance.class).inNamespace(namespace);
    AgentInstanceStatus status = new AgentInstanceStatus();
    status.phase = Phase.Running;
    status.run = 1;
    status.restarts = 0;
    status.attempt = 0;
    status.currentPod = name + "-1";
    status.circuitBreaker = new CircuitBreakerStatus();
    status.circuitBreaker.state = CircuitState.Closed;
    StatusCondition ready = new StatusCondition("Ready", "True", "Healthy", "");
    ready.lastTransitionTime = "2026-11-27T10:00:00Z";
    status.conditions = List.of(ready);
    StatusPatch.replaceIfUnchanged(client, instances.withName(name).get(), status);
    String afterStatus = instances.withName(name).get().getMetadata().getResourceVersion();

    GenericKubernetesResource synced = sync(copy(git));
    assertThat(synced.getMetadata().getResourceVersion()).as("a sync after the operator's status write")
        .isEqualTo(afterStatus);
    AgentInstance now = instances.withName(name).get();
    assertThat(now.getStatus().phase).isEqualTo(Phase.Running);
    for (ManagedFieldsEntry m : now.getMetadata().getManagedFields()) {
      String fields = JSON.writeValueAsString(m.getFieldsV1());
      if (GITOPS.equals(m.getManager())) {
        assertThat(fields).as("GitOps manager's fields").doesNotContain("f:status");
      } else {
        assertThat(m.getSubresource()).as("the operator's write (%s): %s", m.getManager(), fields)
            .isEqualTo("status");
      }
    }

    // a request id committed to Git; the operator records it in status (it never removes the annotation)
    GenericKubernetesResource withRequest = copy(git);
    withRequest.getMetadata().setAnnotations(Map.of("respawn.dev/restart", "r1"));
    sync(withRequest);
    AgentInstanceStatus handled = instances.withName(name).get().getStatus();
    handled.handledRequests = Map.of("restart", "r1");
    StatusPatch.replaceIfUnchanged(client, instances.withName(name).get(), handled);
    String recorded = instances.withName(name).get().getMetadata().getResourceVersion();
    assertThat(sync(copy(withRequest)).getMetadata().getResourceVersion()).as("re-sync after the request is handled")
        .isEqualTo(recorded);
    assertThat(instances.withName(name).get().getStatus().handledRequests).containsEntry("restart", "r1");

    // kubectl respawn restart (a JSON merge patch of the annotation) while Git holds another id: the next forced
    // sync puts Git's id back, which status shows handled (nothing restarts); an unforced apply would conflict
    instances.withName(name).patch(PatchContext.of(PatchType.JSON_MERGE),
        "{\"metadata\":{\"annotations\":{\"respawn.dev/restart\":\"r2\"}}}");
    KubernetesClientException unforced = catchThrowableOfType(KubernetesClientException.class,
        () -> client.genericKubernetesResources(KINDS.get("AgentInstance")).inNamespace(namespace)
            .resource(copy(withRequest)).fieldManager(GITOPS).serverSideApply());
    assertThat(unforced).as("an apply without force-conflicts over the plugin's annotation").isNotNull();
    assertThat(unforced.getCode()).isEqualTo(409);
    sync(copy(withRequest));
    assertThat(instances.withName(name).get().getMetadata().getAnnotations()).containsEntry("respawn.dev/restart",
        "r1");
  }

  /** The policy's status (Accepted, instances, totalRetryTime) and a sync: no conflict, nothing reverted. */
  @Test
  void aPolicyStatusSurvivesSyncs() throws Exception {
    GenericKubernetesResource git = firstExample("AgentRestartPolicy");
    String name = git.getMetadata().getName();
    sync(copy(git));
    var policies = client.resources(AgentRestartPolicy.class).inNamespace(namespace);
    AgentRestartPolicyStatus status = new AgentRestartPolicyStatus();
    status.observedGeneration = 1L;
    status.instances = 1;
    status.totalRetryTime = "14s";
    StatusCondition accepted = new StatusCondition("Accepted", "True", "Valid", "the policy is valid");
    accepted.lastTransitionTime = "2026-11-27T10:00:00Z";
    accepted.observedGeneration = 1L;
    status.conditions = List.of(accepted);
    StatusPatch.replaceIfUnchanged(client, policies.withName(name).get(), status);
    String rv = policies.withName(name).get().getMetadata().getResourceVersion();
    assertThat(sync(copy(git)).getMetadata().getResourceVersion()).isEqualTo(rv);
    assertThat(policies.withName(name).get().getStatus().totalRetryTime).isEqualTo("14s");
  }

  /**
   * A dependency whose defaults Git leaves out (dependencies is an atomic list, its items defaulted): a server-side
   * apply is still stable (no write per sync).
   */
  @Test
  void aDependencyWithDefaultsLeftOutIsStableUnderServerSideApply() {
    GenericKubernetesResource git = client.getKubernetesSerialization().unmarshal(
        "apiVersion: respawn.dev/v1alpha1\nkind: AgentRestartPolicy\nmetadata: {name: deps, namespace: " + namespace
            + "}\nspec:\n  dependencies:\n  - name: model-api\n    match: {messageContains: [\"HTTP 503\"]}\n",
        GenericKubernetesResource.class);
    String rv = sync(copy(git)).getMetadata().getResourceVersion();
    assertThat(sync(copy(git)).getMetadata().getResourceVersion()).isEqualTo(rv);
    assertThat(sync(copy(git)).getMetadata().getResourceVersion()).isEqualTo(rv);
  }

  /**
   * 4. A CRD upgrade through GitOps: a policy stored before heartbeat.startupGrace and failureRules[].cooldown got
   * their CEL duration rules (f3e09f7; the operator refused such a policy already, Accepted=False). After the
   * upgrade, the unchanged manifest must still sync (GitOps re-applies it every sync), and the operator must still be
   * able to write the policy's status (its refusal). Kubernetes ratchets unchanged values past rules that evaluate to
   * false, but a rule whose evaluation raises an error (CEL duration() of a value beyond Go's ~2562047h) is not
   * ratcheted.
   */
  @Test
  void aPolicyStoredBeforeTheDurationRulesStillSyncsAfterTheCrdUpgrade() throws Exception {
    Path file = CrdFreshnessTest.COMMITTED.resolve("agentrestartpolicies.respawn.dev.yaml");
    GenericKubernetesResource shipped = client.getKubernetesSerialization()
        .unmarshal(Files.readString(file, StandardCharsets.UTF_8), GenericKubernetesResource.class);
    GenericKubernetesResource older = copy(shipped);
    JsonNode tree = JSON.valueToTree(older.getAdditionalProperties().get("spec"));
    com.fasterxml.jackson.databind.node.ObjectNode spec = (com.fasterxml.jackson.databind.node.ObjectNode) tree
        .at("/versions/0/schema/openAPIV3Schema/properties/spec/properties");
    assertThat(((com.fasterxml.jackson.databind.node.ObjectNode) spec.get("heartbeat"))
        .remove("x-kubernetes-validations")).isNotNull();
    assertThat(((com.fasterxml.jackson.databind.node.ObjectNode) spec.get("failureRules").get("items"))
        .remove("x-kubernetes-validations")).isNotNull();
    older.getAdditionalProperties().put("spec", JSON.convertValue(tree, Map.class));
    GenericKubernetesResource git = client.getKubernetesSerialization().unmarshal(
        "apiVersion: respawn.dev/v1alpha1\nkind: AgentRestartPolicy\nmetadata: {name: old-grace, namespace: "
            + namespace + "}\nspec:\n  heartbeat: {timeout: 60s, startupGrace: 9999999h}\n"
            + "  failureRules:\n  - {name: slow, match: {exitCodes: [3]}, action: Retry, cooldown: 9999999h}\n",
        GenericKubernetesResource.class);
    try {
      applyCrd(older);
      await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).ignoreExceptions()
          .until(() -> sync(copy(git)) != null);
    } finally {
      applyCrd(shipped);
    }
    // the shipped CRD in force: a new policy with that value is refused
    GenericKubernetesResource probe = copy(git);
    probe.getMetadata().setName("probe-grace");
    await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).until(() -> {
      try {
        sync(copy(probe));
        client.genericKubernetesResources(KINDS.get("AgentRestartPolicy")).inNamespace(namespace)
            .withName("probe-grace").delete();
        return false;
      } catch (KubernetesClientException e) {
        return e.getCode() == 422;
      }
    });
    assertThatCode(() -> sync(copy(git))).as("the unchanged manifest synced again after the CRD upgrade")
        .doesNotThrowAnyException();
    var policies = client.resources(AgentRestartPolicy.class).inNamespace(namespace);
    AgentRestartPolicyStatus status = new AgentRestartPolicyStatus();
    StatusCondition refused = new StatusCondition("Accepted", "False", "InvalidSpec", "startupGrace too long");
    refused.lastTransitionTime = "2026-11-27T10:00:00Z";
    status.conditions = List.of(refused);
    assertThatCode(() -> StatusPatch.replaceIfUnchanged(client, policies.withName("old-grace").get(), status))
        .as("the operator's status write (its InvalidSpec refusal) after the CRD upgrade")
        .doesNotThrowAnyException();
    // the failure rule is known by its name (a keyed list): another field of it may change, its cooldown may not
    // change to another value too long
    GenericKubernetesResource otherMatch = client.getKubernetesSerialization().unmarshal(JSON.writeValueAsString(
        JSON.valueToTree(git)).replace("\"exitCodes\":[3]", "\"exitCodes\":[4]"), GenericKubernetesResource.class);
    assertThatCode(() -> sync(otherMatch)).as("the rule's match edited, its stored cooldown unchanged")
        .doesNotThrowAnyException();
    GenericKubernetesResource otherCooldown = client.getKubernetesSerialization().unmarshal(JSON.writeValueAsString(
        JSON.valueToTree(otherMatch)).replace("\"cooldown\":\"9999999h\"", "\"cooldown\":\"8888888h\""),
        GenericKubernetesResource.class);
    assertThat(JSON.writeValueAsString(otherCooldown)).contains("8888888h");
    KubernetesClientException tooLong = catchThrowableOfType(KubernetesClientException.class,
        () -> sync(otherCooldown));
    assertThat(tooLong).as("a cooldown changed to another value past 2562047h").isNotNull();
    assertThat(tooLong.getCode()).isEqualTo(422);
    assertThat(tooLong.getMessage()).contains("a failure rule's cooldown must be a duration of at most 2562047h");
  }

  /**
   * The named lists (dependencies, failureRules) are keyed by name: a GitOps tool's server-side apply owns each item
   * by its key and only the fields it wrote, not the defaults the server filled in, which a manifest-to-live
   * comparison then sees as the server's (an atomic list is owned whole, its defaults included, and shows as drift).
   */
  @Test
  void namedListsAreOwnedItemByItemWithoutTheirDefaults() throws Exception {
    GenericKubernetesResource git = client.getKubernetesSerialization().unmarshal(
        "apiVersion: respawn.dev/v1alpha1\nkind: AgentRestartPolicy\nmetadata: {name: keyed, namespace: " + namespace
            + "}\nspec:\n  dependencies:\n  - name: model-api\n    match: {messageContains: [\"HTTP 503\"]}\n"
            + "  failureRules:\n  - {name: config, match: {exitCodes: [78]}, action: Fail}\n",
        GenericKubernetesResource.class);
    GenericKubernetesResource applied = sync(copy(git));
    assertThat(JSON.valueToTree(applied.getAdditionalProperties().get("spec")).at("/dependencies/0/openDuration")
        .asText()).as("the server's default").isEqualTo("30s");
    ManagedFieldsEntry gitops = applied.getMetadata().getManagedFields().stream()
        .filter(m -> GITOPS.equals(m.getManager())).findFirst().orElseThrow();
    JsonNode spec = JSON.valueToTree(gitops.getFieldsV1()).path("f:spec");
    JsonNode dependency = spec.path("f:dependencies").path("k:{\"name\":\"model-api\"}");
    assertThat(dependency.isObject()).as("the dependency owned by its key: %s", spec).isTrue();
    assertThat(dependency.has("f:match")).isTrue();
    assertThat(dependency.has("f:openDuration")).as("a default is not the manifest's").isFalse();
    assertThat(spec.path("f:failureRules").has("k:{\"name\":\"config\"}")).as("%s", spec).isTrue();
  }
}

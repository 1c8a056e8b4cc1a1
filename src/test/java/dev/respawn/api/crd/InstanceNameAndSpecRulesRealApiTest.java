package dev.respawn.api.crd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The AgentInstance rules on the schema's root (api.md §2): the name is a DNS-1123 label of at most 63 characters,
 * spec is required, and an instance made before the rules still takes the operator's status.
 */
class InstanceNameAndSpecRulesRealApiTest extends RealApiServerFixture {
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
}

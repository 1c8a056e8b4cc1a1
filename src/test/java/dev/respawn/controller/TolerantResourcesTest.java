package dev.respawn.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import dev.respawn.api.v1alpha1.Unreadable;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntry;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The operator's serialization: a field of the wrong JSON type is left out and reported by the object
 * itself; copies (fabric8's and JOSDK's) keep the report; it is never written; no reflection.
 */
class TolerantResourcesTest {
  static final String POLICY = """
      {"apiVersion":"respawn.dev/v1alpha1","kind":"AgentRestartPolicy",
       "metadata":{"name":"wrong","namespace":"test","uid":"u-1","resourceVersion":"7"},
       "spec":{"maxRetries":"three","backoff":{"type":"Immediate","initialDelay":{"a":1}},
               "failureRules":[5]}}""";
  static final String INSTANCE = """
      {"apiVersion":"respawn.dev/v1alpha1","kind":"AgentInstance",
       "metadata":{"name":"malformed","namespace":"test","uid":"u-2","resourceVersion":"3"},
       "spec":{"suspend":"maybe","task":"TASK-1","policyRef":{"name":"standard"}}}""";

  final KubernetesSerialization serialization = TolerantResources.serialization();

  @Test
  void aFieldOfTheWrongJsonTypeIsLeftOutAndTheObjectSaysWhichAndWhy() {
    AgentRestartPolicy policy = serialization.unmarshal(POLICY, AgentRestartPolicy.class);

    assertThat(policy.unreadable().fields()).map(Unreadable.Field::toString).containsExactlyInAnyOrder(
        "spec.maxRetries: must be an integer (got \"three\")",
        "spec.backoff.initialDelay: must be a string (got {\"a\":1})",
        "spec.failureRules[0]: must be an object (got 5)");
    assertThat(policy.getSpec().maxRetries).isNull();
    assertThat(policy.getSpec().backoff.type).as("the fields that fit are read").isEqualTo("Immediate");
    AgentInstance instance = serialization.unmarshal(INSTANCE, AgentInstance.class);
    assertThat(instance.unreadable().describe()).isEqualTo("spec.suspend: must be true or false (got \"maybe\")");
    assertThat(instance.getSpec().task).isEqualTo("TASK-1");
    assertThat(instance.getSpec().policyRef.name).isEqualTo("standard");
  }

  /**
   * §9: the schema wants objects and int32s; a policyRef given as a bare name is no reference (it was read as one),
   * and a status count past int32 says what it must be.
   */
  @Test
  void aPolicyRefAsAStringAndACountPastInt32AreRefusedByName() {
    AgentInstance instance = serialization.unmarshal("""
        {"apiVersion": "respawn.dev/v1alpha1", "kind": "AgentInstance", "metadata": {"name": "a"},
         "spec": {"policyRef": "p7"}, "status": {"run": 9223372036854775807}}
        """, AgentInstance.class);

    assertThat(instance.unreadable().fields()).map(Unreadable.Field::toString).containsExactlyInAnyOrder(
        "spec.policyRef: must be an object (got \"p7\")",
        "status.run: must be an integer from -2147483648 to 2147483647 (got 9223372036854775807)");
    assertThat(instance.getSpec().policyRef).isNull();
  }

  @Test
  void anUnknownEnumValueNamesTheValuesItMayTake() {
    // a status edited by hand on a cluster that skipped the schema: the rule says what the field may be
    AgentInstance instance = serialization.unmarshal("""
        apiVersion: respawn.dev/v1alpha1
        kind: AgentInstance
        metadata: {name: coder, namespace: agents}
        spec: {template: {spec: {containers: [{name: agent, image: a}]}}}
        status: {phase: Stopped}
        """, AgentInstance.class);
    assertThat(instance.unreadable().describe()).isEqualTo("status.phase: must be one of Pending, Starting, Running, "
        + "Backoff, CircuitOpen, Escalated, Succeeded, Failed, Suspended (got \"Stopped\")");
  }

  @Test
  void aScalarOfAnotherJsonTypeIsNotTakenForTheWantedOne() {
    // what the schema refuses as "must be of type integer / boolean / string" is refused here too, not coerced
    AgentRestartPolicy policy = serialization.unmarshal(POLICY.replace("\"three\"", "\"3\"")
        .replace("\"initialDelay\":{\"a\":1}", "\"initialDelay\":2,\"jitter\":\"0.5\"")
        .replace("[5]", "[], \"circuitBreaker\": {\"latch\": \"true\", \"failureThreshold\": 2}"),
        AgentRestartPolicy.class);
    assertThat(policy.unreadable().fields()).map(Unreadable.Field::toString).containsExactlyInAnyOrder(
        "spec.maxRetries: must be an integer (got \"3\")",
        "spec.backoff.initialDelay: must be a string (got 2)",
        "spec.backoff.jitter: must be a number (got \"0.5\")",
        "spec.circuitBreaker.latch: must be true or false (got \"true\")");
    assertThat(policy.getSpec().circuitBreaker.failureThreshold).isEqualTo(2);
    AgentInstance instance = serialization.unmarshal(INSTANCE.replace("\"maybe\"", "1")
        .replace("\"TASK-1\"", "31"), AgentInstance.class);
    assertThat(instance.unreadable().fields()).map(Unreadable.Field::toString).containsExactlyInAnyOrder(
        "spec.suspend: must be true or false (got 1)", "spec.task: must be a string (got 31)");
  }

  @Test
  void aFieldTheSchemaDoesNotKnowIsIgnoredAsTheApiServerWouldPruneIt() {
    AgentRestartPolicy policy = serialization.unmarshal(POLICY.replace("\"maxRetries\":\"three\"",
        "\"unknownField\":1,\"maxRetries\":2").replace("\"initialDelay\":{\"a\":1}", "\"initialDelay\":\"1s\"")
        .replace("[5]", "[]"), AgentRestartPolicy.class);
    assertThat(policy.unreadable()).isEqualTo(Unreadable.NONE);
    assertThat(policy.getSpec().maxRetries).isEqualTo(2);
    AgentInstance instance = serialization.unmarshal(INSTANCE.replace("\"maybe\"", "true")
        .replace("\"task\"", "\"extra\":{\"x\":1},\"task\""), AgentInstance.class);
    assertThat(instance.unreadable()).isEqualTo(Unreadable.NONE);
    assertThat(instance.getSpec().task).isEqualTo("TASK-1");
  }

  @Test
  void aWellFormedObjectIsReadWhole() {
    AgentInstance instance = serialization.unmarshal(INSTANCE.replace("\"maybe\"", "true"), AgentInstance.class);

    assertThat(instance.unreadable()).isEqualTo(Unreadable.NONE);
    assertThat(instance.getSpec().suspend).isTrue();
  }

  @Test
  void aCopyKeepsTheReportThoughItIsReadFromTheRepairedJson() {
    AgentRestartPolicy policy = serialization.unmarshal(POLICY, AgentRestartPolicy.class);

    AgentRestartPolicy copy = serialization.clone(policy);

    assertThat(copy).isNotSameAs(policy);
    assertThat(copy.unreadable()).isEqualTo(policy.unreadable());
    assertThat(copy.unreadable().fields()).hasSize(3);
    AgentInstance instance = serialization.unmarshal(INSTANCE, AgentInstance.class);
    assertThat(serialization.clone(serialization.clone(instance)).unreadable()).isEqualTo(instance.unreadable());
  }

  @Test
  void theReportIsNeverWritten() {
    AgentRestartPolicy policy = serialization.unmarshal(POLICY, AgentRestartPolicy.class);

    String json = serialization.asJson(policy);

    assertThat(json).doesNotContain("unreadable", "maxRetries", "three", "initialDelay");
    Map<?, ?> spec = (Map<?, ?>) serialization.unmarshal(json, Map.class).get("spec");
    assertThat(spec.keySet()).map(Object::toString).containsExactlyInAnyOrder("backoff", "failureRules");
    assertThat(new KubernetesSerialization().unmarshal(json, AgentRestartPolicy.class).unreadable())
        .as("read back by anyone: nothing to report").isEqualTo(Unreadable.NONE);
  }

  @Test
  void theOperatorsJosdkCopiesKeepTheReport() {
    try (KubernetesClient client = clientWith(TolerantResources.serialization());
        RespawnOperator operator = new RespawnOperator(client, OperatorSettings.defaults(), DecisionSink.NONE,
            Optional.empty())) {
      AgentRestartPolicy policy = client.getKubernetesSerialization().unmarshal(POLICY, AgentRestartPolicy.class);

      AgentRestartPolicy copy = operator.josdk().getConfigurationService().getResourceCloner().clone(policy);

      assertThat(copy).isNotSameAs(policy);
      assertThat(copy.unreadable().describe()).startsWith("spec.maxRetries: must be an integer (got \"three\")")
          .isEqualTo(policy.unreadable().describe());
    }
  }

  /** The operator's own reads no managed fields, of any kind, and is as tolerant; the tests' keeps them. */
  @Test
  void theOperatorsOwnReadsNoManagedFieldsAndIsAsTolerant() {
    KubernetesSerialization operators = TolerantResources.forOperator();
    String managed = "\"managedFields\":[{\"manager\":\"kubectl-client-side-apply\",\"operation\":\"Update\","
        + "\"apiVersion\":\"v1\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:metadata\":{}}}],";
    String pod = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{" + managed
        + "\"name\":\"coder-1\",\"namespace\":\"test\",\"labels\":{\"respawn.dev/instance\":\"coder\"}}}";
    String instance = INSTANCE.replace("\"metadata\":{", "\"metadata\":{" + managed);

    Pod read = operators.unmarshal(pod, Pod.class);
    AgentInstance malformed = operators.unmarshal(instance, AgentInstance.class);

    assertThat(serialization.unmarshal(pod, Pod.class).getMetadata().getManagedFields()).as("the tests' keeps them")
        .singleElement().extracting(ManagedFieldsEntry::getManager).isEqualTo("kubectl-client-side-apply");
    assertThat(read.getMetadata().getManagedFields()).isNullOrEmpty();
    assertThat(read.getMetadata().getName()).isEqualTo("coder-1");
    assertThat(read.getMetadata().getLabels()).containsEntry("respawn.dev/instance", "coder");
    assertThat(read.getMetadata().getAdditionalProperties()).as("not kept aside either").isEmpty();
    assertThat(malformed.getMetadata().getManagedFields()).isNullOrEmpty();
    assertThat(malformed.unreadable().describe()).isEqualTo("spec.suspend: must be true or false (got \"maybe\")");
    assertThat(operators.clone(malformed).unreadable()).isEqualTo(malformed.unreadable());
    Pod given = serialization.unmarshal(pod, Pod.class);
    assertThat(operators.asJson(given)).as("nor written").doesNotContain("managedFields", "kubectl-client-side-apply")
        .contains("coder-1");
    try (KubernetesClient client = clientWith(operators)) {
      assertThat(TolerantResources.isTolerant(client)).isTrue();
    }
  }

  @Test
  void theOperatorRefusesAClientWithoutIt() {
    try (KubernetesClient client = clientWith(new KubernetesSerialization())) {
      assertThat(TolerantResources.isTolerant(client)).isFalse();
      assertThatThrownBy(() -> new RespawnOperator(client, OperatorSettings.defaults(), DecisionSink.NONE,
          Optional.empty())).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("withKubernetesSerialization(TolerantResources.forOperator())");
    }
  }

  @Test
  void nothingInSrcMainOpensPrivatePartsWithReflection() throws IOException {
    Path main = Path.of(System.getProperty("basedir", "."), "src", "main", "java");
    assertThat(main).isDirectory();
    try (Stream<Path> files = Files.walk(main)) {
      List<Path> sources = files.filter(f -> f.toString().endsWith(".java")).toList();
      assertThat(sources).as("sources found").hasSizeGreaterThan(50)
          .contains(main.resolve("dev/respawn/controller/TolerantResources.java"));
      assertThat(sources).filteredOn(f -> read(f).contains("setAccessible")).as("sources calling setAccessible")
          .isEmpty();
    }
  }

  private static String read(Path file) {
    try {
      return Files.readString(file);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** A client that is never connected (nothing listens on port 9 of the loopback address). */
  private static KubernetesClient clientWith(KubernetesSerialization serialization) {
    return new KubernetesClientBuilder().withConfig(new ConfigBuilder().withMasterUrl("http://127.0.0.1:9/")
        .withNamespace("test").build()).withKubernetesSerialization(serialization).build();
  }
}

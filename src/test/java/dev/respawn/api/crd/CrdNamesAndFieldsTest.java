package dev.respawn.api.crd;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/** Names, scope, version and subresources; the contract's field names; its required fields. */
class CrdNamesAndFieldsTest extends CrdSchemaFixture {
  // ---------------------------------------------------------------------------------------------
  // Names, scope, version, subresources

  @ParameterizedTest(name = "{0}: kind {1}, short name {4}")
  @CsvSource({
      "agentrestartpolicies.respawn.dev, AgentRestartPolicy, agentrestartpolicies, agentrestartpolicy, arp",
      "agentinstances.respawn.dev,       AgentInstance,      agentinstances,       agentinstance,       agi",
  })
  void namesScopeAndVersion(String crd, String kind, String plural, String singular, String shortName) {
    JsonNode doc = crd(crd);
    JsonNode spec = doc.path("spec");
    SoftAssertions soft = new SoftAssertions();
    soft.assertThat(doc.path("apiVersion").asText()).isEqualTo("apiextensions.k8s.io/v1");
    soft.assertThat(doc.path("kind").asText()).isEqualTo("CustomResourceDefinition");
    soft.assertThat(doc.path("metadata").path("name").asText()).isEqualTo(crd);
    soft.assertThat(spec.path("group").asText()).as("group").isEqualTo("respawn.dev");
    soft.assertThat(spec.path("scope").asText()).as("scope").isEqualTo("Namespaced");
    soft.assertThat(spec.path("names").path("kind").asText()).as("kind").isEqualTo(kind);
    soft.assertThat(spec.path("names").path("plural").asText()).as("plural").isEqualTo(plural);
    soft.assertThat(spec.path("names").path("singular").asText()).as("singular").isEqualTo(singular);
    soft.assertThat(texts(spec.path("names").path("shortNames"))).as("shortNames").containsExactly(shortName);
    soft.assertThat(texts(spec.path("names").path("categories"))).as("categories").containsExactly("respawn");
    soft.assertThat(spec.path("versions").size()).as("exactly one version").isEqualTo(1);
    JsonNode version = version(crd);
    soft.assertThat(version.path("name").asText()).as("version").isEqualTo("v1alpha1");
    soft.assertThat(version.path("served").asBoolean()).as("served").isTrue();
    soft.assertThat(version.path("storage").asBoolean()).as("storage").isTrue();
    soft.assertThat(version.path("subresources").has("status")).as("status subresource").isTrue();
    soft.assertThat(version.path("subresources").path("status").isObject()).as("status subresource is {}").isTrue();
    soft.assertThat(root(crd).path("type").asText()).as("root type").isEqualTo("object");
    soft.assertThat(fieldNames(root(crd).path("properties"))).as("root properties").contains("spec", "status");
    soft.assertAll();
  }

  // ---------------------------------------------------------------------------------------------
  // Field names (api.md: "Field names ... are fixed")

  static Stream<Arguments> fields() {
    return Stream.of(
        // spec: exactly the contract's fields
        Arguments.of(POLICY, "spec", true, List.of("backoff", "maxRetries", "resetAfter", "restartLimit",
            "circuitBreaker", "failureRules", "heartbeat", "restartRequestExitCode", "resume", "dependencies")),
        Arguments.of(POLICY, "spec.dependencies[]", true, List.of("name", "match", "failureThreshold", "window",
            "openDuration", "probes", "releaseRate")),
        Arguments.of(POLICY, "spec.backoff", true, List.of("type", "initialDelay", "multiplier", "maxDelay", "jitter")),
        Arguments.of(POLICY, "spec.restartLimit", true, List.of("maxRestarts", "window")),
        Arguments.of(POLICY, "spec.circuitBreaker", true, List.of("failureThreshold", "window", "openDuration", "latch")),
        Arguments.of(POLICY, "spec.failureRules[]", true, List.of("name", "match", "action", "maxRetries", "cooldown")),
        Arguments.of(POLICY, "spec.failureRules[].match", true, List.of("exitCodes", "reasons", "messageContains", "classes")),
        Arguments.of(POLICY, "spec.heartbeat", true, List.of("timeout", "startupGrace")),
        Arguments.of(POLICY, "spec.resume", true, List.of("mode", "maxAttempts", "cooldowns")),
        Arguments.of(POLICY, "spec.resume.cooldowns", true, List.of("ToolFailure", "Timeout", "ContextReset", "ProcessCrash")),
        Arguments.of(POLICY, "status", false, List.of("observedGeneration", "conditions", "instances", "totalRetryTime")),
        Arguments.of(POLICY, "status.conditions[]", false, List.of("type", "status", "reason", "message")),
        Arguments.of(INSTANCE, "spec", true, List.of("policyRef", "agentContainer", "task", "suspend", "heartbeat", "template")),
        Arguments.of(INSTANCE, "spec.policyRef", true, List.of("name")),
        Arguments.of(INSTANCE, "spec.heartbeat", true, List.of("leaseName")),
        // status: at least the contract's fields (the operator may keep more bookkeeping)
        Arguments.of(INSTANCE, "status", false, List.of("observedGeneration", "phase", "run", "currentPod", "attempt",
            "firstFailureAt", "restarts", "nextRestartAt", "lastFailure", "lastDecision", "circuitBreaker", "heartbeat",
            "resume", "lastRestart", "terminalReason", "recentRestarts", "history", "conditions")),
        Arguments.of(INSTANCE, "status.lastFailure", false, List.of("pod", "class", "failureReason", "reason", "exitCode",
            "message", "rule", "retryable", "at")),
        Arguments.of(INSTANCE, "status.lastDecision", false, List.of("action", "reasonCode", "attempt", "maxAttempts",
            "finalAttempt", "delaySeconds", "at")),
        Arguments.of(INSTANCE, "status.circuitBreaker", false, List.of("state", "failureCount", "trips", "openedAt",
            "halfOpenAt", "lastSuccessAt", "lastFailureAt")),
        Arguments.of(INSTANCE, "status.heartbeat", false, List.of("verdict", "since", "detail")),
        Arguments.of(INSTANCE, "status.resume", false, List.of("checkpoint", "checkpointStatus", "idempotent", "eligible",
            "reasonCode", "cooldownRemainingSeconds", "attempts")),
        Arguments.of(INSTANCE, "status.lastRestart", false, List.of("kind", "reason", "previousPod", "pod", "requestedAt",
            "startedAt", "requestId")),
        Arguments.of(INSTANCE, "status.history[]", false, List.of("run", "pod", "startedAt", "endedAt", "outcome", "class",
            "exitCode", "reasonCode")),
        Arguments.of(INSTANCE, "status.conditions[]", false, List.of("type", "status", "reason", "message")));
  }

  @ParameterizedTest(name = "{0} {1} has the contract''s fields")
  @MethodSource("fields")
  void fieldsOfTheContract(String crd, String path, boolean exactly, List<String> expected) {
    Set<String> actual = fieldNames(schema(crd, path).path("properties"));
    if (exactly) {
      assertThat(actual).as("%s %s: properties", crd, path).containsExactlyInAnyOrderElementsOf(expected);
    } else {
      assertThat(actual).as("%s %s: properties", crd, path).containsAll(expected);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Required fields

  @ParameterizedTest(name = "{0}: {1} requires {2}")
  @CsvSource({
      "agentrestartpolicies.respawn.dev, spec.failureRules[], name;action",
      "agentrestartpolicies.respawn.dev, spec.restartLimit,   maxRestarts;window",
      "agentinstances.respawn.dev,       spec,                template",
      "agentinstances.respawn.dev,       spec.policyRef,      name",
  })
  void requiredFields(String crd, String path, String required) {
    assertThat(texts(schema(crd, path).path("required")))
        .as("%s required", path)
        .containsExactlyInAnyOrder(required.split(";"));
  }

  @Test
  void policySpecHasNothingRequiredSoEmptySpecIsValid() {
    assertThat(schema(POLICY, "spec").has("required")).as("spec: {} must be a valid policy").isFalse();
  }
}

package dev.respawn.api.crd;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import java.util.Comparator;
import java.util.Map;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;

/**
 * Defaults the API server fills in from the CRD schema (api.md): a minimal policy, instance and dependency get every
 * default, and a fully specified policy is kept as written.
 */
class ServerDefaultsRealApiTest extends RealApiServerFixture {
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

  static JsonNode at(JsonNode node, String dotted) {
    for (String segment : dotted.split("\\.")) {
      node = node.path(segment);
    }
    return node;
  }
}

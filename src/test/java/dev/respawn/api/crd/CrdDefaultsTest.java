package dev.respawn.api.crd;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Schema defaults (api.md), parents that default to {}, and the fields whose omission means something. */
class CrdDefaultsTest extends CrdSchemaFixture {
  @ParameterizedTest(name = "{0}: {1} defaults to {2}")
  @CsvSource({
      "agentrestartpolicies.respawn.dev, spec.backoff.type,                       Exponential",
      "agentrestartpolicies.respawn.dev, spec.backoff.initialDelay,               2s",
      "agentrestartpolicies.respawn.dev, spec.backoff.multiplier,                 2.0",
      "agentrestartpolicies.respawn.dev, spec.backoff.maxDelay,                   120s",
      "agentrestartpolicies.respawn.dev, spec.backoff.jitter,                     0",
      "agentrestartpolicies.respawn.dev, spec.maxRetries,                         3",
      "agentrestartpolicies.respawn.dev, spec.resetAfter,                         60s",
      "agentrestartpolicies.respawn.dev, spec.circuitBreaker.failureThreshold,    5",
      "agentrestartpolicies.respawn.dev, spec.circuitBreaker.window,              10m",
      "agentrestartpolicies.respawn.dev, spec.circuitBreaker.openDuration,        5m",
      "agentrestartpolicies.respawn.dev, spec.circuitBreaker.latch,               false",
      "agentrestartpolicies.respawn.dev, spec.restartRequestExitCode,             42",
      "agentrestartpolicies.respawn.dev, spec.resume.mode,                        Prefer",
      "agentrestartpolicies.respawn.dev, spec.resume.maxAttempts,                 3",
      "agentrestartpolicies.respawn.dev, spec.resume.cooldowns.ToolFailure,       30s",
      "agentrestartpolicies.respawn.dev, spec.resume.cooldowns.Timeout,           120s",
      "agentrestartpolicies.respawn.dev, spec.resume.cooldowns.ContextReset,      10s",
      "agentrestartpolicies.respawn.dev, spec.resume.cooldowns.ProcessCrash,      60s",
      "agentinstances.respawn.dev,       spec.suspend,                            false",
  })
  void defaults(String crd, String path, String expected) {
    JsonNode field = schema(crd, path);
    JsonNode value = field.path("default");
    assertThat(value.isMissingNode()).as("%s has a default", path).isFalse();
    switch (field.path("type").asText()) {
      case "number", "integer" -> {
        assertThat(value.isNumber()).as("%s default %s is a number", path, value).isTrue();
        assertThat(value.asDouble()).as("%s default", path).isEqualTo(Double.parseDouble(expected));
      }
      case "boolean" -> {
        assertThat(value.isBoolean()).as("%s default %s is a boolean", path, value).isTrue();
        assertThat(value.asBoolean()).as("%s default", path).isEqualTo(Boolean.parseBoolean(expected));
      }
      default -> {
        assertThat(value.isTextual()).as("%s default %s is a string", path, value).isTrue();
        assertThat(value.asText()).as("%s default", path).isEqualTo(expected);
      }
    }
  }

  /** Nested defaults apply only when their parent object exists: the parents default to {}. */
  @ParameterizedTest(name = "{0} defaults to an empty object")
  @ValueSource(strings = {"spec.backoff", "spec.circuitBreaker", "spec.resume", "spec.resume.cooldowns"})
  void defaultedParentsDefaultToEmptyObject(String path) {
    JsonNode value = schema(POLICY, path).path("default");
    assertThat(value.isObject() && value.isEmpty()).as("%s default is {} (was %s)", path, value).isTrue();
  }

  /** Omitted means something in api.md (no window limit, no heartbeats, built-in table, default policy). */
  @ParameterizedTest(name = "{0}: {1} has no default")
  @CsvSource({
      "agentrestartpolicies.respawn.dev, spec.restartLimit",
      "agentrestartpolicies.respawn.dev, spec.heartbeat",
      "agentrestartpolicies.respawn.dev, spec.heartbeat.timeout",
      "agentrestartpolicies.respawn.dev, spec.failureRules",
      "agentrestartpolicies.respawn.dev, spec.failureRules[].maxRetries",
      "agentrestartpolicies.respawn.dev, spec.failureRules[].cooldown",
      "agentinstances.respawn.dev,       spec.policyRef",
      "agentinstances.respawn.dev,       spec.agentContainer",
  })
  void omittedMeansOmitted(String crd, String path) {
    assertThat(schema(crd, path).has("default")).as("%s must not have a default", path).isFalse();
  }
}

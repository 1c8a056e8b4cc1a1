package dev.respawn.api.crd;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.yaml.snakeyaml.Yaml;

/** Numeric ranges and enums, and enum values that stay strings for kubectl's YAML 1.1 reader. */
class CrdRangesAndEnumsTest extends CrdSchemaFixture {
  // ---------------------------------------------------------------------------------------------
  // Ranges

  @ParameterizedTest(name = "{0}: {1} in {3}..{4} ({2})")
  @CsvSource({
      "agentrestartpolicies.respawn.dev, spec.maxRetries,                          integer, 0,   1000",
      "agentrestartpolicies.respawn.dev, spec.backoff.multiplier,                  number,  1.0, 10.0",
      "agentrestartpolicies.respawn.dev, spec.backoff.jitter,                      number,  0.0, 1.0",
      "agentrestartpolicies.respawn.dev, spec.circuitBreaker.failureThreshold,     integer, 1,   100",
      "agentrestartpolicies.respawn.dev, spec.restartLimit.maxRestarts,            integer, 1,   1000",
      "agentrestartpolicies.respawn.dev, spec.restartRequestExitCode,              integer, 1,   255",
      // api.md gives no range for resume.maxAttempts; bounded like maxRetries (§9: bad input never crashes)
      "agentrestartpolicies.respawn.dev, spec.resume.maxAttempts,                  integer, 0,   1000",
      "agentrestartpolicies.respawn.dev, spec.failureRules[].maxRetries,           integer, 0,   1000",
      "agentrestartpolicies.respawn.dev, spec.dependencies[].failureThreshold,     integer, 1,   1000",
      "agentrestartpolicies.respawn.dev, spec.dependencies[].probes,               integer, 1,   100",
      "agentrestartpolicies.respawn.dev, spec.failureRules[].match.exitCodes[],    integer, 0,   255",
  })
  void ranges(String crd, String path, String type, double min, double max) {
    JsonNode field = schema(crd, path);
    SoftAssertions soft = new SoftAssertions();
    soft.assertThat(field.path("type").asText()).as("%s type", path).isEqualTo(type);
    soft.assertThat(field.path("minimum").isNumber()).as("%s has a minimum", path).isTrue();
    soft.assertThat(field.path("maximum").isNumber()).as("%s has a maximum", path).isTrue();
    soft.assertThat(field.path("minimum").asDouble()).as("%s minimum", path).isEqualTo(min);
    soft.assertThat(field.path("maximum").asDouble()).as("%s maximum", path).isEqualTo(max);
    soft.assertThat(field.path("exclusiveMinimum").asBoolean(false)).as("%s exclusiveMinimum", path).isFalse();
    soft.assertThat(field.path("exclusiveMaximum").asBoolean(false)).as("%s exclusiveMaximum", path).isFalse();
    soft.assertAll();
  }

  // ---------------------------------------------------------------------------------------------
  // Enums

  static Stream<Arguments> enums() {
    return Stream.of(
        Arguments.of(POLICY, "spec.backoff.type", List.of("None", "Immediate", "Linear", "Exponential")),
        Arguments.of(POLICY, "spec.resume.mode", List.of("Off", "Prefer", "Require")),
        Arguments.of(POLICY, "spec.failureRules[].action", List.of("Retry", "Fail", "Ignore")),
        Arguments.of(POLICY, "spec.failureRules[].match.classes[]",
            List.of("ToolFailure", "Timeout", "ContextReset", "ProcessCrash", "Unknown")),
        Arguments.of(INSTANCE, "status.phase", List.of("Pending", "Starting", "Running", "Backoff", "CircuitOpen",
            "Escalated", "Succeeded", "Failed", "Suspended")),
        Arguments.of(INSTANCE, "status.terminalReason", List.of("CleanExit", "RestartLimitExceeded",
            "CircuitBreakerOpen", "StallTimeout", "OperatorShutdown", "UnrecoverableError")),
        Arguments.of(INSTANCE, "status.circuitBreaker.state", List.of("Closed", "Open", "HalfOpen")));
  }

  @ParameterizedTest(name = "{0}: {1} is one of {2}")
  @MethodSource("enums")
  void enumValues(String crd, String path, List<String> values) {
    JsonNode field = schema(crd, path);
    assertThat(field.path("type").asText()).as("%s type", path).isEqualTo("string");
    assertThat(field.path("enum").isArray()).as("%s has an enum", path).isTrue();
    assertThat(texts(field.path("enum"))).as("%s enum", path).containsExactlyInAnyOrderElementsOf(values);
  }

  /**
   * kubectl reads YAML 1.1, where a bare {@code Off}, {@code Yes}, {@code On} ... is a boolean: every
   * enum value must still be a string when the file is read that way (SnakeYAML is YAML 1.1 too).
   */
  @ParameterizedTest(name = "{0}: enum values stay strings for a YAML 1.1 reader (kubectl)")
  @ValueSource(strings = {POLICY, INSTANCE})
  void enumValuesAreStringsInYaml11(String crd) throws IOException {
    Object doc;
    try (Reader reader = Files.newBufferedReader(file(crd), StandardCharsets.UTF_8)) {
      doc = new Yaml().load(reader);
    }
    List<String> problems = new ArrayList<>();
    List<Object> checked = new ArrayList<>();
    collectNonStringEnums(doc, "", problems, checked);
    assertThat(checked).as("%s: the string enums checked", crd).isNotEmpty();
    assertThat(problems).as("%s: enum values a YAML 1.1 reader does not read as strings", crd).isEmpty();
  }

  @SuppressWarnings("unchecked")
  private static void collectNonStringEnums(Object node, String where, List<String> problems, List<Object> checked) {
    if (node instanceof Map<?, ?> map) {
      for (var entry : ((Map<String, Object>) map).entrySet()) {
        if (entry.getKey().equals("enum") && entry.getValue() instanceof List<?> values
            && "string".equals(map.get("type"))) {
          checked.addAll(values);
          values.stream().filter(v -> !(v instanceof String))
              .forEach(v -> problems.add(where + ".enum: " + v + " (" + v.getClass().getSimpleName() + ")"));
        }
        collectNonStringEnums(entry.getValue(), where + "." + entry.getKey(), problems, checked);
      }
    } else if (node instanceof List<?> list) {
      for (int i = 0; i < list.size(); i++) {
        collectNonStringEnums(list.get(i), where + "[" + i + "]", problems, checked);
      }
    }
  }
}

package dev.respawn.api.crd;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/** Duration fields (a validated pattern, every one listed) and the CEL rules between and on them. */
class CrdDurationsAndCelRulesTest extends CrdSchemaFixture {
  // ---------------------------------------------------------------------------------------------
  // Durations

  static final List<String> DURATION_FIELDS = List.of(
      "spec.backoff.initialDelay", "spec.backoff.maxDelay", "spec.resetAfter", "spec.restartLimit.window",
      "spec.circuitBreaker.window", "spec.circuitBreaker.openDuration", "spec.failureRules[].cooldown",
      "spec.heartbeat.timeout", "spec.heartbeat.startupGrace", "spec.resume.cooldowns.ToolFailure",
      "spec.resume.cooldowns.Timeout", "spec.resume.cooldowns.ContextReset", "spec.resume.cooldowns.ProcessCrash",
      "spec.dependencies[].window", "spec.dependencies[].openDuration");

  static final List<String> GOOD_DURATIONS =
      List.of("0s", "500ms", "2s", "5m", "1h30m", "1.5h", "120s", "10m", "1h", "250us", "250µs", "100ns");
  static final List<String> BAD_DURATIONS =
      List.of("5x", "ten seconds", "-1s", "", "5", "s", "1h 30m", " 2s", "2s ", "2S", "1d", "1h-30m");

  static Stream<String> durationFields() {
    return DURATION_FIELDS.stream();
  }

  @ParameterizedTest(name = "{0} is a validated duration")
  @MethodSource("durationFields")
  void durationPattern(String path) {
    JsonNode field = schema(POLICY, path);
    assertThat(field.path("type").asText()).as("%s type", path).isEqualTo("string");
    assertThat(field.path("pattern").isTextual()).as("%s has a pattern", path).isTrue();
    assertThat(field.path("maxLength").isInt()).as("%s has a maxLength (bounds the CEL cost)", path).isTrue();
    Pattern pattern = Pattern.compile(field.path("pattern").asText());
    SoftAssertions soft = new SoftAssertions();
    for (String good : GOOD_DURATIONS) {
      soft.assertThat(pattern.matcher(good).find()).as("%s accepts \"%s\"", path, good).isTrue();
    }
    for (String bad : BAD_DURATIONS) {
      soft.assertThat(pattern.matcher(bad).find()).as("%s rejects \"%s\"", path, bad).isFalse();
    }
    if (field.has("default")) {
      soft.assertThat(pattern.matcher(field.path("default").asText()).find())
          .as("%s default matches its own pattern", path).isTrue();
    }
    soft.assertAll();
  }

  /** Completeness: a string field described as a duration must be in the list above. */
  @Test
  void everyDurationIsInTheList() {
    List<String> found = new ArrayList<>();
    walk(root(POLICY).path("properties").path("spec"), "spec", (path, node) -> {
      String description = node.path("description").asText("").toLowerCase();
      String pattern = node.path("pattern").asText("");
      if ("string".equals(node.path("type").asText())
          && (description.contains("duration") || pattern.contains("ms|"))) {
        found.add(path);
      }
    });
    assertThat(found).containsExactlyInAnyOrderElementsOf(DURATION_FIELDS);
  }

  // ---------------------------------------------------------------------------------------------
  // CEL rules

  static JsonNode validations(String crd, String path) {
    JsonNode rules = schema(crd, path).path("x-kubernetes-validations");
    assertThat(rules.isArray() && !rules.isEmpty()).as("%s has x-kubernetes-validations", path).isTrue();
    return rules;
  }

  /** The one rule at {@code path} that mentions every fragment; its message must name the field. */
  static JsonNode rule(String crd, String path, String messageMentions, String... ruleMentions) {
    List<JsonNode> matching = new ArrayList<>();
    for (JsonNode rule : validations(crd, path)) {
      String text = rule.path("rule").asText();
      if (Stream.of(ruleMentions).allMatch(text::contains)) {
        matching.add(rule);
      }
    }
    assertThat(matching).as("%s: a CEL rule mentioning %s", path, List.of(ruleMentions)).hasSize(1);
    JsonNode rule = matching.get(0);
    assertThat(rule.path("message").asText()).as("%s: CEL message", path).contains(messageMentions);
    return rule;
  }

  @Test
  void celMaxDelayAtLeastInitialDelay() {
    JsonNode rule = rule(POLICY, "spec.backoff", "maxDelay", "duration(self.maxDelay)", ">=",
        "duration(self.initialDelay)");
    assertThat(rule.path("fieldPath").asText()).as("reported on maxDelay").isEqualTo(".maxDelay");
  }

  @Test
  void celUniqueFailureRuleNames() {
    JsonNode rule = rule(POLICY, "spec.failureRules", "unique", ".name");
    assertThat(rule.path("rule").asText()).containsAnyOf("exists_one", "size()");
  }

  @ParameterizedTest(name = "{0}.{1} must be greater than 0 (CEL)")
  @CsvSource({
      "spec.restartLimit,   window",
      "spec.circuitBreaker, window",
      "spec.circuitBreaker, openDuration",
      "spec.heartbeat,      timeout",
      "spec,                resetAfter",
  })
  void celPositiveDurations(String object, String field) {
    JsonNode rule = rule(POLICY, object, field, "duration(self." + field + ")", "> duration('0s')");
    assertThat(rule.path("fieldPath").asText()).as("reported on %s", field).isEqualTo("." + field);
    assertThat(rule.path("message").asText()).contains("greater than 0");
  }
}

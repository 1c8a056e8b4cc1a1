package dev.respawn.api.crd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.yaml.snakeyaml.Yaml;

/**
 * The committed CRDs (crds/*.yaml) against the API contract, docs/design api.md sections 1, 2 and 9:
 * names, scope, printer columns, ranges, enums, defaults, duration patterns, CEL rules, required
 * fields and descriptions. A real API server's view of the same CRDs is {@link RealApiServerTest}.
 */
class CrdSchemaTest {
  static final String POLICY = "agentrestartpolicies.respawn.dev";
  static final String INSTANCE = "agentinstances.respawn.dev";
  static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  static JsonNode policy;
  static JsonNode instance;

  @BeforeAll
  static void load() throws IOException {
    policy = read(POLICY);
    instance = read(INSTANCE);
  }

  static Path file(String crd) {
    return CrdFreshnessTest.COMMITTED.resolve(crd + ".yaml");
  }

  static JsonNode read(String crd) throws IOException {
    Path file = file(crd);
    assertThat(file).as("committed CRD %s", file).isRegularFile();
    return YAML.readTree(file.toFile());
  }

  static JsonNode crd(String name) {
    return switch (name) {
      case POLICY -> policy;
      case INSTANCE -> instance;
      default -> throw new IllegalArgumentException(name);
    };
  }

  static JsonNode version(String crd) {
    return crd(crd).path("spec").path("versions").path(0);
  }

  static JsonNode root(String crd) {
    return version(crd).path("schema").path("openAPIV3Schema");
  }

  /**
   * The schema of a field, by its path below the root object: {@code spec.backoff.type};
   * {@code []} steps into an array's items ({@code spec.failureRules[].name}). Fails when absent.
   */
  static JsonNode schema(String crd, String path) {
    JsonNode node = root(crd);
    for (String segment : path.split("\\.")) {
      boolean items = segment.endsWith("[]");
      String name = items ? segment.substring(0, segment.length() - 2) : segment;
      node = node.path("properties").path(name);
      if (node.isMissingNode()) {
        fail("%s: no property %s in the schema (looking for %s)", crd, name, path);
      }
      if (items) {
        node = node.path("items");
        if (node.isMissingNode()) {
          fail("%s: %s is not an array with items (looking for %s)", crd, name, path);
        }
      }
    }
    return node;
  }

  static List<String> texts(JsonNode array) {
    return StreamSupport.stream(array.spliterator(), false).map(JsonNode::asText).collect(Collectors.toList());
  }

  static Set<String> fieldNames(JsonNode node) {
    Set<String> names = new LinkedHashSet<>();
    node.fieldNames().forEachRemaining(names::add);
    return names;
  }

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

  // ---------------------------------------------------------------------------------------------
  // Defaults

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

  // ---------------------------------------------------------------------------------------------
  // Printer columns (api.md order), with json paths that resolve in the schema

  static Stream<Arguments> printerColumns() {
    return Stream.of(
        Arguments.of(POLICY, List.of(
            List.of("TYPE", ".spec.backoff.type", "string"),
            List.of("MAX-RETRIES", ".spec.maxRetries", "integer"),
            List.of("INITIAL", ".spec.backoff.initialDelay", "string"),
            List.of("MAX-DELAY", ".spec.backoff.maxDelay", "string"),
            List.of("THRESHOLD", ".spec.circuitBreaker.failureThreshold", "integer"),
            List.of("ACCEPTED", ".status.conditions[?(@.type==\"Accepted\")].status", "string"),
            List.of("AGE", ".metadata.creationTimestamp", "date"))),
        Arguments.of(INSTANCE, List.of(
            List.of("PHASE", ".status.phase", "string"),
            List.of("RESTARTS", ".status.restarts", "integer"),
            List.of("ATTEMPT", ".status.attempt", "integer"),
            List.of("CIRCUIT", ".status.circuitBreaker.state", "string"),
            List.of("HEARTBEAT", ".status.heartbeat.verdict", "string"),
            // nextRestartAt is normally in the future; a "date" column prints the time SINCE a
            // timestamp, which the API server renders as "<invalid>" for a future one.
            List.of("NEXT-RESTART", ".status.nextRestartAt", "string"),
            List.of("AGE", ".metadata.creationTimestamp", "date"))));
  }

  @ParameterizedTest(name = "{0}: printer columns")
  @MethodSource("printerColumns")
  void printerColumnsInContractOrder(String crd, List<List<String>> expected) {
    JsonNode columns = version(crd).path("additionalPrinterColumns");
    List<String> names = StreamSupport.stream(columns.spliterator(), false)
        .map(c -> c.path("name").asText()).collect(Collectors.toList());
    assertThat(names).as("%s printer column names, in order", crd)
        .containsExactlyElementsOf(expected.stream().map(c -> c.get(0)).collect(Collectors.toList()));
    SoftAssertions soft = new SoftAssertions();
    for (int i = 0; i < expected.size(); i++) {
      JsonNode column = columns.get(i);
      String name = expected.get(i).get(0);
      soft.assertThat(column.path("jsonPath").asText()).as("%s jsonPath", name).isEqualTo(expected.get(i).get(1));
      soft.assertThat(column.path("type").asText())
          .as("%s type%s", name, name.equals("NEXT-RESTART")
              ? " (a \"date\" column prints the time since the timestamp: the API server shows a future"
                + " nextRestartAt, the normal case in phase Backoff, as <invalid>)" : "")
          .isEqualTo(expected.get(i).get(2));
      soft.assertThat(column.path("priority").asInt(0)).as("%s priority (shown by default)", name).isZero();
      String jsonPath = column.path("jsonPath").asText();
      if (!jsonPath.startsWith(".metadata.")) {
        // .status.conditions[?(@.type=="Accepted")].status -> status.conditions[].status
        String path = jsonPath.substring(1).replaceAll("\\[\\?\\(.*?\\)\\]", "[]");
        JsonNode field = schema(crd, path);
        String columnType = column.path("type").asText();
        soft.assertThat(field.path("type").asText()).as("%s: schema type of %s", name, path)
            .isEqualTo(columnType.equals("date") ? "string" : columnType);
      }
    }
    soft.assertAll();
  }

  // ---------------------------------------------------------------------------------------------
  // Descriptions

  interface Visitor {
    void visit(String path, JsonNode schema);
  }

  /** Visits every property below {@code node} (not node itself); does not descend into spec.template. */
  static void walk(JsonNode node, String path, Visitor visitor) {
    node.path("properties").fields().forEachRemaining(e -> {
      String child = path + "." + e.getKey();
      visitor.visit(child, e.getValue());
      if (!child.equals("spec.template")) {
        walk(e.getValue(), child, visitor);
      }
    });
    if (node.path("items").isObject()) {
      walk(node.path("items"), path + "[]", visitor);
    }
    if (node.path("additionalProperties").isObject()) {
      walk(node.path("additionalProperties"), path + "{}", visitor);
    }
  }

  @ParameterizedTest(name = "{0}: every property has a description")
  @ValueSource(strings = {POLICY, INSTANCE})
  void everyPropertyHasADescription(String crd) {
    JsonNode root = root(crd);
    assertThat(root.path("description").asText("")).as("%s: root description", crd).isNotBlank();
    List<String> missing = new ArrayList<>();
    int[] seen = {0};
    root.path("properties").fields().forEachRemaining(e -> {
      if (e.getValue().path("description").asText("").isBlank()) {
        missing.add(e.getKey());
      }
      seen[0]++;
      walk(e.getValue(), e.getKey(), (path, schema) -> {
        seen[0]++;
        if (schema.path("description").asText("").isBlank()) {
          missing.add(path);
        }
      });
    });
    assertThat(seen[0]).as("%s: properties walked", crd).isGreaterThan(10);
    assertThat(missing).as("%s: properties without a description", crd).isEmpty();
  }

  @Test
  void templateIsAPodTemplateSpecWithADescription() {
    JsonNode template = schema(INSTANCE, "spec.template");
    assertThat(template.path("description").asText("")).isNotBlank();
    assertThat(template.path("type").asText()).isEqualTo("object");
    assertThat(fieldNames(template.path("properties"))).contains("metadata", "spec");
    assertThat(fieldNames(schema(INSTANCE, "spec.template.spec").path("properties")))
        .contains("containers", "restartPolicy", "volumes");
    assertThat(schema(INSTANCE, "spec.template.spec.containers[]").path("properties").has("image")).isTrue();
  }
}

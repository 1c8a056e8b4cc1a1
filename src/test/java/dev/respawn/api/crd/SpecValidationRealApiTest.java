package dev.respawn.api.crd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.StatusCause;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The schema's validation on the real API server: the examples and valid edge cases are accepted (the bounds are
 * inclusive, every enum value works), invalid specs are refused with HTTP 422 naming the field.
 */
class SpecValidationRealApiTest extends RealApiServerFixture {
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
        Arguments.of("dependencies' failureThresholds adding up to 4000", POLICY, "{dependencies: ["
            + "{name: a, match: {}, failureThreshold: 1000}, {name: b, match: {}, failureThreshold: 1000},"
            + " {name: c, match: {}, failureThreshold: 1000}, {name: d, match: {}, failureThreshold: 997},"
            + " {name: e, match: {}}]}"),
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
        Arguments.of("dependencies' failureThresholds adding up to 4001 (one by its default)", POLICY,
            "{dependencies: [{name: a, match: {}, failureThreshold: 1000}, {name: b, match: {}, failureThreshold: 1000},"
            + " {name: c, match: {}, failureThreshold: 1000}, {name: d, match: {}, failureThreshold: 998},"
            + " {name: e, match: {}}]}", "spec.dependencies", "must add up to at most 4000"),
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
}

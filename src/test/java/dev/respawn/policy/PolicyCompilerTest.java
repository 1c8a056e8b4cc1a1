package dev.respawn.policy;

import static dev.respawn.policy.Specs.rule;
import static dev.respawn.policy.Specs.rules;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.api.v1alpha1.BackoffType;
import dev.respawn.api.v1alpha1.FailureAction;
import dev.respawn.api.v1alpha1.InterruptionClass;
import dev.respawn.api.v1alpha1.ResumeMode;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class PolicyCompilerTest {
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  static AgentRestartPolicySpec yaml(String text) throws Exception {
    return YAML.readValue(text, AgentRestartPolicySpec.class);
  }

  @Test
  void emptySpecGetsEveryDefaultOfTheContract() throws Exception {
    RestartPolicy p = PolicyCompiler.compile(new AgentRestartPolicySpec());
    assertThat(p.backoff().type()).isEqualTo(BackoffType.Exponential);
    assertThat(p.backoff().initialDelay()).isEqualTo(Duration.ofSeconds(2));
    assertThat(p.backoff().multiplier()).isEqualTo(2.0);
    assertThat(p.backoff().maxDelay()).isEqualTo(Duration.ofSeconds(120));
    assertThat(p.backoff().jitter()).isZero();
    assertThat(p.maxRetries()).isEqualTo(3);
    assertThat(p.resetAfter()).isEqualTo(Duration.ofSeconds(60));
    assertThat(p.restartLimit()).isEmpty();
    assertThat(p.circuitBreaker().failureThreshold()).isEqualTo(5);
    assertThat(p.circuitBreaker().window()).isEqualTo(Duration.ofMinutes(10));
    assertThat(p.circuitBreaker().openDuration()).isEqualTo(Duration.ofMinutes(5));
    assertThat(p.circuitBreaker().latch()).isFalse();
    assertThat(p.failureRules()).isEmpty();
    assertThat(p.heartbeat().timeout()).isEmpty();
    assertThat(p.heartbeat().startupGrace()).isEmpty();
    assertThat(p.restartRequestExitCode()).isEqualTo(42);
    assertThat(p.resume().mode()).isEqualTo(ResumeMode.Prefer);
    assertThat(p.resume().maxAttempts()).isEqualTo(3);
    assertThat(p.resume().cooldowns()).containsEntry(InterruptionClass.ToolFailure, Duration.ofSeconds(30))
        .containsEntry(InterruptionClass.Timeout, Duration.ofSeconds(120))
        .containsEntry(InterruptionClass.ContextReset, Duration.ofSeconds(10))
        .containsEntry(InterruptionClass.ProcessCrash, Duration.ofSeconds(60));
    assertThat(PolicyCompiler.compile(null)).isEqualTo(p);
  }

  @Test
  void theContractsExamplePolicyCompiles() throws Exception {
    RestartPolicy p = PolicyCompiler.compile(yaml("""
        backoff: {type: Exponential, initialDelay: 2s, multiplier: 2.0, maxDelay: 120s, jitter: 0.25}
        maxRetries: 3
        resetAfter: 60s
        restartLimit: {maxRestarts: 10, window: 1h}
        circuitBreaker: {failureThreshold: 5, window: 10m, openDuration: 5m, latch: false}
        failureRules:
        - name: permanent-config
          match:
            exitCodes: [2, 78]
            reasons: [Error]
            messageContains: [invalid_configuration, spec_not_found]
            classes: [ToolFailure]
          action: Fail
          maxRetries: 0
          cooldown: 30s
        heartbeat: {timeout: 60s, startupGrace: 120s}
        restartRequestExitCode: 42
        resume:
          mode: Prefer
          maxAttempts: 3
          cooldowns: {ToolFailure: 30s, Timeout: 120s, ContextReset: 10s, ProcessCrash: 60s}
        """));
    assertThat(p.restartLimit()).hasValueSatisfying(l -> {
      assertThat(l.maxRestarts()).isEqualTo(10);
      assertThat(l.window()).isEqualTo(Duration.ofHours(1));
    });
    assertThat(p.failureRules()).singleElement().satisfies(r -> {
      assertThat(r.name()).isEqualTo("permanent-config");
      assertThat(r.exitCodes()).containsExactly(2, 78);
      assertThat(r.classes()).containsExactly(InterruptionClass.ToolFailure);
      assertThat(r.action()).isEqualTo(FailureAction.Fail);
      assertThat(r.maxRetries()).contains(0);
      assertThat(r.cooldown()).contains(Duration.ofSeconds(30));
    });
    assertThat(p.heartbeat().startupGrace()).contains(Duration.ofSeconds(120));
    assertThat(p.backoff().jitter()).isEqualTo(0.25);
  }

  @Test
  void startupGraceDefaultsToTheTimeout() throws Exception {
    RestartPolicy p = PolicyCompiler.compile(yaml("heartbeat: {timeout: 45s}"));
    assertThat(p.heartbeat().startupGrace()).contains(Duration.ofSeconds(45));
  }

  /** Every rule the CRD schema enforces is enforced again, naming the field and the rule. */
  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
      "maxRetries: 1001 | spec.maxRetries | between 0 and 1000",
      "maxRetries: -1 | spec.maxRetries | between 0 and 1000",
      "backoff: {multiplier: 0.5} | spec.backoff.multiplier | between 1.0 and 10.0",
      "backoff: {multiplier: 11} | spec.backoff.multiplier | between 1.0 and 10.0",
      "backoff: {jitter: 1.5} | spec.backoff.jitter | between 0.0 and 1.0",
      "backoff: {jitter: -0.1} | spec.backoff.jitter | between 0.0 and 1.0",
      "backoff: {type: Fast} | spec.backoff.type | must be one of None, Immediate, Linear, Exponential",
      "backoff: {initialDelay: 5x} | spec.backoff.initialDelay | must be a duration",
      "backoff: {initialDelay: 10s, maxDelay: 5s} | spec.backoff.maxDelay | must be >= spec.backoff.initialDelay",
      "backoff: {maxDelay: '-1s'} | spec.backoff.maxDelay | must be a duration",
      "resetAfter: ten seconds | spec.resetAfter | must be a duration",
      "resetAfter: 0s | spec.resetAfter | greater than 0",
      "restartLimit: {maxRestarts: 0, window: 1h} | spec.restartLimit.maxRestarts | between 1 and 1000",
      "restartLimit: {maxRestarts: 1001, window: 1h} | spec.restartLimit.maxRestarts | between 1 and 1000",
      "restartLimit: {maxRestarts: 5, window: 0s} | spec.restartLimit.window | greater than 0",
      "restartLimit: {window: 1h} | spec.restartLimit.maxRestarts | is required",
      "restartLimit: {maxRestarts: 3} | spec.restartLimit.window | is required",
      "circuitBreaker: {failureThreshold: 0} | spec.circuitBreaker.failureThreshold | between 1 and 100",
      "circuitBreaker: {failureThreshold: 101} | spec.circuitBreaker.failureThreshold | between 1 and 100",
      "circuitBreaker: {window: 0s} | spec.circuitBreaker.window | greater than 0",
      "circuitBreaker: {openDuration: 1d} | spec.circuitBreaker.openDuration | must be a duration",
      "heartbeat: {timeout: 0s} | spec.heartbeat.timeout | greater than 0",
      "heartbeat: {timeout: 1m, startupGrace: soon} | spec.heartbeat.startupGrace | must be a duration",
      "restartRequestExitCode: 0 | spec.restartRequestExitCode | between 1 and 255",
      "restartRequestExitCode: 256 | spec.restartRequestExitCode | between 1 and 255",
      "resume: {mode: Always} | spec.resume.mode | must be one of Off, Prefer, Require",
      "resume: {maxAttempts: 1001} | spec.resume.maxAttempts | between 0 and 1000",
      "resume: {cooldowns: {Timeout: 2 minutes}} | spec.resume.cooldowns.Timeout | must be a duration",
      "failureRules: [{name: a, action: Explode}] | spec.failureRules[0].action | must be one of Retry, Fail, Ignore",
      "failureRules: [{action: Fail}] | spec.failureRules[0].name | is required",
      "failureRules: [{name: a}] | spec.failureRules[0].action | is required",
      "failureRules: [{name: a, action: Fail}, {name: a, action: Retry}] | spec.failureRules[1].name | must be unique",
      "failureRules: [{name: a, action: Retry, maxRetries: 5000}] | spec.failureRules[0].maxRetries | between 0 and 1000",
      "failureRules: [{name: a, action: Retry, cooldown: 3 s}] | spec.failureRules[0].cooldown | must be a duration",
      "failureRules: [{name: a, action: Fail, match: {exitCodes: [300]}}] | spec.failureRules[0].match.exitCodes[0] | 0..255",
      "failureRules: [{name: a, action: Fail, match: {classes: [Gremlins]}}] | spec.failureRules[0].match.classes[0] | must be one of",
      "failureRules: [{name: a, action: Fail, match: {messageContains: ['']}}] | spec.failureRules[0].match.messageContains[0] | 1..256",
      "dependencies: [{name: Model_API, match: {}}] | spec.dependencies[0].name | DNS-1123 label",
      "dependencies: [{match: {}}] | spec.dependencies[0].name | is required",
      "dependencies: [{name: m}] | spec.dependencies[0].match | is required",
      "dependencies: [{name: m, match: {}}, {name: m, match: {}}] | spec.dependencies[1].name | must be unique",
      "dependencies: [{name: m, match: {}, failureThreshold: 0}] | spec.dependencies[0].failureThreshold | between 1 and 1000",
      "dependencies: [{name: m, match: {}, failureThreshold: 1001}] | spec.dependencies[0].failureThreshold | between 1 and 1000",
      "dependencies: [{name: m, match: {}, probes: 101}] | spec.dependencies[0].probes | between 1 and 100",
      "dependencies: [{name: m, match: {}, releaseRate: -1}] | spec.dependencies[0].releaseRate | between 0.0 and 10000.0",
      "dependencies: [{name: m, match: {}, window: 0s}] | spec.dependencies[0].window | greater than 0",
      "dependencies: [{name: m, match: {}, openDuration: soon}] | spec.dependencies[0].openDuration | must be a duration",
      "dependencies: [{name: m, match: {classes: [Gremlins]}}] | spec.dependencies[0].match.classes[0] | must be one of",
      "dependencies: [{name: a, match: {}, failureThreshold: 1000}, {name: b, match: {}, failureThreshold: 1000},"
          + " {name: c, match: {}, failureThreshold: 1000}, {name: d, match: {}, failureThreshold: 998},"
          + " {name: e, match: {}}] | spec.dependencies | must add up to at most 4000 over all dependencies (it adds"
          + " up to 4001)",
  })
  void refusesWithTheFieldAndTheRule(String yaml, String field, String rule) {
    assertThatThrownBy(() -> PolicyCompiler.compile(yaml(yaml)))
        .isInstanceOfSatisfying(PolicyInvalidException.class, e -> {
          assertThat(e.violations()).anySatisfy(v -> {
            assertThat(v.field()).isEqualTo(field);
            assertThat(v.rule()).contains(rule);
          });
          assertThat(e.getMessage()).contains(field + ": ");
        });
  }

  @Test
  void aDependencyGetsTheDefaultsOfTheContract() throws Exception {
    RestartPolicy p = PolicyCompiler.compile(yaml("dependencies: [{name: model-api, match: {messageContains: "
        + "[HTTP 503]}}]"));
    assertThat(p.dependencies()).singleElement().satisfies(d -> {
      assertThat(d.name()).isEqualTo("model-api");
      assertThat(d.failureThreshold()).isEqualTo(3);
      assertThat(d.window()).isEqualTo(java.time.Duration.ofMinutes(1));
      assertThat(d.openDuration()).isEqualTo(java.time.Duration.ofSeconds(30));
      assertThat(d.probes()).isEqualTo(1);
      assertThat(d.releaseRate()).isEqualTo(5.0);
      assertThat(d.match().messageContains()).containsExactly("HTTP 503");
    });
  }

  @Test
  void reportsEveryViolationAtOnce() {
    assertThatThrownBy(() -> PolicyCompiler.compile(yaml("{maxRetries: 2000, backoff: {jitter: 3}}")))
        .isInstanceOfSatisfying(PolicyInvalidException.class, e -> assertThat(e.violations())
            .extracting(Violation::field).containsExactlyInAnyOrder("spec.maxRetries", "spec.backoff.jitter"));
  }

  @Test
  void enormousAndNonAsciiValuesAreQuotedShortly() {
    String huge = "∞".repeat(10_000);
    var spec = new AgentRestartPolicySpec();
    spec.resetAfter = huge;
    assertThatThrownBy(() -> PolicyCompiler.compile(spec)).isInstanceOfSatisfying(PolicyInvalidException.class,
        e -> assertThat(e.getMessage().length()).isLessThan(200));
  }

  @Test
  void ruleWithEmptyMatchIsACatchAll() throws Exception {
    RestartPolicy p = PolicyCompiler.compile(rules(new AgentRestartPolicySpec(), rule("everything", "Ignore")));
    assertThat(p.failureRules().get(0).exitCodes()).isEmpty();
    assertThat(p.failureRules().get(0).action()).isEqualTo(FailureAction.Ignore);
  }

  /**
   * §9: the operator refuses again what the schema refuses, and only that: every schema limit itself (64 rules,
   * 63-character names, 64 exit codes in 0..255, 32 reasons of up to 128 characters, an empty reason, 32 messages
   * of up to 256 characters, 16 classes, 16 dependencies whose failureThresholds add up to 4000, a 32-character
   * duration) is accepted.
   */
  @Test
  void everySchemaLimitItselfIsAccepted() throws Exception {
    AgentRestartPolicySpec spec = new AgentRestartPolicySpec();
    java.util.List<dev.respawn.api.v1alpha1.FailureRule> many = new java.util.ArrayList<>();
    for (int i = 0; i < 64; i++) {
      many.add(rule(i == 0 ? "r".repeat(63) : "rule-" + i, "Retry"));
    }
    var edge = many.get(0);
    edge.match.exitCodes = java.util.stream.IntStream.concat(java.util.stream.IntStream.rangeClosed(0, 62),
        java.util.stream.IntStream.of(255)).boxed().toList();
    edge.match.reasons = java.util.stream.IntStream.range(0, 32).mapToObj(i -> i == 0 ? "" : "x".repeat(128))
        .toList();
    edge.match.messageContains = java.util.stream.IntStream.range(0, 32).mapToObj(i -> "m".repeat(256)).toList();
    edge.match.classes = java.util.Collections.nCopies(16, "ToolFailure");
    edge.cooldown = "0000000000000000000000000000030s"; // 32 characters
    spec.failureRules = many;
    spec.dependencies = new java.util.ArrayList<>();
    for (int i = 0; i < 16; i++) {
      var d = new dev.respawn.api.v1alpha1.DependencySpec();
      d.name = i == 0 ? "d".repeat(63) : "dep-" + i;
      d.match = new dev.respawn.api.v1alpha1.FailureMatch();
      d.failureThreshold = i < 3 ? Integer.valueOf(1000) : i == 3 ? Integer.valueOf(964) : null; // with the other twelve's default 3: 4000
      spec.dependencies.add(d);
    }
    RestartPolicy p = PolicyCompiler.compile(spec);
    assertThat(p.failureRules()).hasSize(64);
    assertThat(p.failureRules().get(0).exitCodes()).hasSize(64).contains(0, 255);
    assertThat(p.failureRules().get(0).cooldown()).contains(Duration.ofSeconds(30));
    assertThat(p.dependencies()).hasSize(16);
    assertThat(p.dependencies().get(0).failureThreshold()).isEqualTo(1000);
  }

  /** §9: one past each schema limit is refused, naming the field. */
  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
      "rules | spec.failureRules | at most 64",
      "ruleName | spec.failureRules[0].name | 1..63",
      "exitCodes | spec.failureRules[0].match.exitCodes | at most 64",
      "negativeExitCode | spec.failureRules[0].match.exitCodes[0] | 0..255",
      "exitCode256 | spec.failureRules[0].match.exitCodes[0] | 0..255",
      "reasons | spec.failureRules[0].match.reasons | at most 32",
      "longReason | spec.failureRules[0].match.reasons[0] | 0..128",
      "longMessage | spec.failureRules[0].match.messageContains[0] | 1..256",
      "classes | spec.failureRules[0].match.classes | at most 16",
      "longDuration | spec.failureRules[0].cooldown | at most 32",
      "dependencies | spec.dependencies | at most 16",
      "dependencyName | spec.dependencies[0].name | DNS-1123 label",
  })
  void onePastEachSchemaLimitIsRefused(String what, String field, String rule) {
    AgentRestartPolicySpec spec = new AgentRestartPolicySpec();
    var r = rule("r", "Retry");
    spec.failureRules = new java.util.ArrayList<>(java.util.List.of(r));
    switch (what) {
      case "rules" -> {
        for (int i = 1; i <= 64; i++) {
          spec.failureRules.add(rule("rule-" + i, "Retry"));
        }
      }
      case "ruleName" -> r.name = "r".repeat(64);
      case "exitCodes" -> r.match.exitCodes = java.util.stream.IntStream.range(0, 65).boxed().toList();
      case "negativeExitCode" -> r.match.exitCodes = java.util.List.of(-1);
      case "exitCode256" -> r.match.exitCodes = java.util.List.of(256);
      case "reasons" -> r.match.reasons = java.util.Collections.nCopies(33, "Error");
      case "longReason" -> r.match.reasons = java.util.List.of("x".repeat(129));
      case "longMessage" -> r.match.messageContains = java.util.List.of("m".repeat(257));
      case "classes" -> r.match.classes = java.util.Collections.nCopies(17, "ToolFailure");
      case "longDuration" -> r.cooldown = "00000000000000000000000000000030s"; // 33 characters
      case "dependencies", "dependencyName" -> {
        spec.dependencies = new java.util.ArrayList<>();
        for (int i = 0; i < (what.equals("dependencies") ? 17 : 1); i++) {
          var d = new dev.respawn.api.v1alpha1.DependencySpec();
          d.name = what.equals("dependencies") ? "dep-" + i : "d".repeat(64);
          d.match = new dev.respawn.api.v1alpha1.FailureMatch();
          spec.dependencies.add(d);
        }
      }
      default -> throw new IllegalArgumentException(what);
    }
    assertThatThrownBy(() -> PolicyCompiler.compile(spec))
        .isInstanceOfSatisfying(PolicyInvalidException.class, e -> assertThat(e.violations()).anySatisfy(v -> {
          assertThat(v.field()).isEqualTo(field);
          assertThat(v.rule()).contains(rule);
        }));
  }
}

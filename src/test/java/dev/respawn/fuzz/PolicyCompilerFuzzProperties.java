package dev.respawn.fuzz;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.fuzz.SpecGenerator.Generated;
import dev.respawn.policy.Backoff;
import dev.respawn.policy.Bounds;
import dev.respawn.policy.PolicyCompiler;
import dev.respawn.policy.PolicyInvalidException;
import dev.respawn.policy.RestartPolicy;
import dev.respawn.policy.Violation;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.statistics.Statistics;

/**
 * Fuzzing the policy compiler (api.md §9: a spec the CRD schema should have refused is refused again by
 * the operator, with the field and the rule; nothing restarts on an invalid policy) with thousands of
 * generated specs, valid and not: out-of-range numbers, bad durations, 10 KiB and non-ASCII strings,
 * missing required fields, unknown enum values, duplicate and conflicting rules (see {@link SpecGenerator}).
 *
 * <p>Seeds are fixed (CI is deterministic); run with {@code -Djqwik.seeds.whenfixed=ALLOW} and another
 * {@code seed} to explore.
 */
class PolicyCompilerFuzzProperties {

  /**
   * The compiler either returns a policy, exactly when the contract accepts the spec, or throws
   * PolicyInvalidException naming every refused field (spec.*) with a non-empty rule; never anything else.
   */
  @Property(tries = 4000, seed = "20261122")
  void refusesExactlyTheInvalidSpecsNamingEachField(@ForAll long seed) {
    Generated g = SpecGenerator.generate(seed, false, 0.12);
    Statistics.label("spec").collect(g.valid() ? "valid" : "invalid");
    Statistics.label("refused fields").collect(g.invalid().size() > 3 ? "more than 3" : g.invalid().size());
    AgentRestartPolicySpec spec = Serialization.jsonMapper().convertValue(g.spec(), AgentRestartPolicySpec.class);
    RestartPolicy policy;
    try {
      policy = PolicyCompiler.compile(spec);
    } catch (PolicyInvalidException e) {
      List<Violation> violations = e.violations();
      assertThat(g.invalid()).as("refused a valid spec: %s%n%s", e.getMessage(), json(g)).isNotEmpty();
      assertThat(violations).as("violations of %s", json(g)).isNotEmpty().allSatisfy(v -> {
        assertThat(v.field()).startsWith("spec.");
        assertThat(v.rule()).isNotBlank();
        assertThat(v.toString().getBytes(StandardCharsets.UTF_8).length).as("violation size").isLessThanOrEqualTo(
            Bounds.MESSAGE_BYTES);
      });
      Set<String> named = violations.stream().map(Violation::field).collect(Collectors.toSet());
      assertThat(named).as("fields named for %s", json(g)).containsAll(g.invalid());
      assertThat(e.getMessage()).isEqualTo(violations.stream().map(Violation::toString)
          .collect(Collectors.joining("; ")));
      return;
    }
    if (!g.valid()) {
      fail("accepted a spec the contract refuses (fields %s): %s", g.invalid(), json(g));
    }
    checkBounds(policy);
  }

  /** Valid specs only: each one compiles, and its numbers stay inside the contract's bounds. */
  @Property(tries = 2000, seed = "42")
  void validSpecsCompileWithinBounds(@ForAll long seed) throws PolicyInvalidException {
    Generated g = SpecGenerator.generate(seed, false, 0);
    assertThat(g.valid()).isTrue();
    checkBounds(PolicyCompiler.compile(Serialization.jsonMapper().convertValue(g.spec(),
        AgentRestartPolicySpec.class)));
  }

  static void checkBounds(RestartPolicy p) {
    assertThat(p.maxRetries()).isBetween(0, Bounds.MAX_RETRIES);
    assertThat(p.circuitBreaker().failureThreshold()).isBetween(1, Bounds.MAX_FAILURE_THRESHOLD);
    p.restartLimit().ifPresent(l -> assertThat(l.maxRestarts()).isBetween(1, Bounds.MAX_RESTARTS));
    assertThat(p.backoff().multiplier()).isBetween(1.0, 10.0);
    assertThat(p.backoff().jitter()).isBetween(0.0, 1.0);
    assertThat(p.backoff().maxDelay()).isGreaterThanOrEqualTo(p.backoff().initialDelay());
    assertThat(p.resetAfter().isNegative() || p.resetAfter().isZero()).as("resetAfter <= 0").isFalse();
    assertThat(Backoff.totalRetryTime(p).isNegative()).as("totalRetryTime < 0").isFalse();
    for (int n : List.of(1, 2, Math.max(1, p.maxRetries()), Bounds.MAX_RETRIES)) {
      assertThat(Backoff.delay(p.backoff(), n)).isBetween(Duration.ZERO, p.backoff().maxDelay());
    }
    assertThat(p.failureRules().stream().map(RestartPolicy.Rule::name).distinct().count()).isEqualTo(p.failureRules().size());
  }

  private static String json(Generated g) {
    String s = Serialization.asJson(g.spec());
    return s.length() > 2000 ? s.substring(0, 2000) + "..." : s;
  }

  // --- disagreements between the operator and the CRD schema, found by this fuzzing (policy package) ---

  /** The schema caps durations at 32 characters; the compiler accepts any length. */
  @Example
  void aDurationLongerThan32CharactersIsRefused() {
    assertRefused("{\"resetAfter\": \"1s1s1s1s1s1s1s1s1s1s1s1s1s1s1s1s1s\"}", "spec.resetAfter");
  }

  /** The schema caps match.reasons entries at 128 characters; the compiler at 256. */
  @Example
  void aReasonLongerThan128CharactersIsRefused() {
    assertRefused("{\"failureRules\": [{\"name\": \"r\", \"action\": \"Fail\", \"match\": {\"reasons\": [\""
        + "R".repeat(200) + "\"]}}]}", "spec.failureRules[0].match.reasons[0]");
  }

  /** The schema allows at most FailureMatch.MAX_CLASSES match.classes; so does the compiler. */
  @Example
  void moreClassesThanTheSchemaAllowsAreRefused() throws PolicyInvalidException {
    String most = String.join(", ", java.util.Collections.nCopies(
        dev.respawn.api.v1alpha1.FailureMatch.MAX_CLASSES, "\"Timeout\""));
    String rule = "{\"failureRules\": [{\"name\": \"r\", \"action\": \"Fail\", \"match\": {\"classes\": [";
    PolicyCompiler.compile(Serialization.unmarshal(rule + most + "]}}]}", AgentRestartPolicySpec.class));
    assertRefused(rule + most + ", \"Timeout\"]}}]}", "spec.failureRules[0].match.classes");
  }

  /**
   * The schema counts characters (code points); the compiler counts UTF-16 units, so a rule name of 40
   * emoji (80 units) or a messageContains entry of 200 emoji is refused although the schema accepts it.
   */
  @Example
  void lengthsCountCharactersNotUtf16Units() throws PolicyInvalidException {
    PolicyCompiler.compile(Serialization.unmarshal("{\"failureRules\": [{\"name\": \"" + "😀".repeat(40)
        + "\", \"action\": \"Fail\", \"match\": {\"messageContains\": [\"" + "😀".repeat(200) + "\"]}}]}",
        AgentRestartPolicySpec.class));
  }

  private static void assertRefused(String json, String field) {
    try {
      PolicyCompiler.compile(Serialization.unmarshal(json, AgentRestartPolicySpec.class));
      fail("accepted " + json);
    } catch (PolicyInvalidException e) {
      assertThat(e.violations()).extracting(Violation::field).contains(field);
    }
  }
}

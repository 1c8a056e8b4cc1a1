package dev.respawn.fuzz;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.api.v1alpha1.DependencySpec;
import dev.respawn.api.v1alpha1.FailureMatch;
import dev.respawn.policy.PolicyCompiler;
import dev.respawn.policy.PolicyInvalidException;
import dev.respawn.policy.RestartPolicy;
import dev.respawn.policy.Violation;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Fuzzed spec.dependencies (api.md §11): the compiler accepts exactly the specs the contract accepts,
 * and refuses the others naming every broken field with its rule; never any other exception.
 */
class DependencySpecFuzzProperties {
  static final List<String> GOOD_NAMES = List.of("model-api", "a", "tool-server-2", "x".repeat(63));
  static final List<String> BAD_NAMES = List.of("Model_API", "-api", "api-", "", "x".repeat(64), "a.b");
  static final List<String> GOOD_DURATIONS = List.of("1m", "30s", "500ms", "1h30m");
  static final List<String> BAD_DURATIONS = List.of("0s", "soon", "-1s", "1d", "5");

  @Provide
  Arbitrary<List<DependencySpec>> dependencies() {
    Arbitrary<String> names = Arbitraries.oneOf(Arbitraries.of(GOOD_NAMES), Arbitraries.of(BAD_NAMES));
    Arbitrary<Integer> thresholds = Arbitraries.integers().between(-3, 1003).injectNull(0.2);
    Arbitrary<Integer> probes = Arbitraries.integers().between(-2, 103).injectNull(0.2);
    Arbitrary<Double> rates = Arbitraries.doubles().between(-5, 12_000).injectNull(0.2);
    Arbitrary<String> windows = Arbitraries.oneOf(Arbitraries.of(GOOD_DURATIONS), Arbitraries.of(BAD_DURATIONS))
        .injectNull(0.2);
    Arbitrary<Boolean> withMatch = Arbitraries.of(true, true, true, false);
    return Combinators.combine(names, thresholds, probes, rates, windows, withMatch).as((name, t, p, r, w, m) -> {
      DependencySpec d = new DependencySpec();
      d.name = name;
      d.failureThreshold = t;
      d.probes = p;
      d.releaseRate = r;
      d.window = w;
      d.openDuration = w;
      d.match = m ? new FailureMatch() : null;
      return d;
    }).list().ofMaxSize(4);
  }

  @Property(tries = 3000, seed = "20261124")
  void refusesExactlyTheBrokenFieldsAndNothingElse(@ForAll("dependencies") List<DependencySpec> deps) {
    AgentRestartPolicySpec spec = new AgentRestartPolicySpec();
    spec.dependencies = deps;
    Set<String> expected = expectedViolations(spec.dependencies);
    try {
      RestartPolicy p = PolicyCompiler.compile(spec);
      if (!expected.isEmpty()) {
        fail("accepted a spec the contract refuses (%s)", expected);
      }
      assertThat(p.dependencies()).hasSize(spec.dependencies.size());
      p.dependencies().forEach(d -> {
        assertThat(d.failureThreshold()).isBetween(1, 1000);
        assertThat(d.probes()).isBetween(1, 100);
        assertThat(d.releaseRate()).isBetween(0.0, 10_000.0);
        assertThat(d.window().isNegative() || d.window().isZero()).isFalse();
      });
    } catch (PolicyInvalidException e) {
      Set<String> named = e.violations().stream().map(Violation::field).collect(Collectors.toSet());
      assertThat(named).as("fields named: %s", e.getMessage()).isEqualTo(expected);
      assertThat(e.violations()).allSatisfy(v -> assertThat(v.rule()).isNotBlank());
    }
  }

  private static Set<String> expectedViolations(List<DependencySpec> deps) {
    Set<String> out = new HashSet<>();
    List<String> seen = new ArrayList<>();
    for (int i = 0; i < deps.size(); i++) {
      DependencySpec d = deps.get(i);
      String at = "spec.dependencies[" + i + "]";
      if (BAD_NAMES.contains(d.name)) {
        out.add(at + ".name");
      } else if (seen.contains(d.name)) {
        out.add(at + ".name");
      } else {
        seen.add(d.name);
      }
      if (d.match == null) {
        out.add(at + ".match");
      }
      if (d.failureThreshold != null && (d.failureThreshold < 1 || d.failureThreshold > 1000)) {
        out.add(at + ".failureThreshold");
      }
      if (d.probes != null && (d.probes < 1 || d.probes > 100)) {
        out.add(at + ".probes");
      }
      if (d.releaseRate != null && (d.releaseRate < 0 || d.releaseRate > 10_000)) {
        out.add(at + ".releaseRate");
      }
      if (d.window != null && BAD_DURATIONS.contains(d.window)) {
        out.add(at + ".window");
        out.add(at + ".openDuration");
      }
    }
    return out;
  }
}

package dev.respawn.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.api.v1alpha1.BackoffType;
import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.policy.RestartPolicy.BackoffSettings;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;

/** Properties of the decision core that must hold for every policy and story. */
class DecisionCoreProperties {

  @Property(seed = "26112721")
  void delayNeverExceedsMaxDelay(@ForAll("backoffs") BackoffSettings b, @ForAll @IntRange(min = 1, max = 1000) int n,
      @ForAll long seed) {
    Duration base = Backoff.delay(b, n);
    assertThat(base).isLessThanOrEqualTo(b.maxDelay()).isGreaterThanOrEqualTo(Duration.ZERO);
    Duration jittered = Backoff.jitter(base, b.jitter(), new SplittableRandom(seed));
    assertThat(jittered.toNanos()).isLessThanOrEqualTo(Math.round(b.maxDelay().toNanos() * (1 + b.jitter())) + 1);
  }

  @Property(seed = "26112722")
  void withoutJitterTheDelayNeverDecreases(@ForAll("backoffs") BackoffSettings b,
      @ForAll @IntRange(min = 1, max = 999) int n) {
    assertThat(Backoff.delay(b, n + 1)).isGreaterThanOrEqualTo(Backoff.delay(b, n));
  }

  @Provide
  Arbitrary<BackoffSettings> backoffs() {
    Arbitrary<BackoffType> type = Arbitraries.of(BackoffType.class);
    Arbitrary<Long> initialMs = Arbitraries.longs().between(0, 3_600_000L);
    Arbitrary<Double> multiplier = Arbitraries.doubles().between(1.0, 10.0);
    Arbitrary<Long> extraMs = Arbitraries.longs().between(0, 100L * 3_600_000L);
    Arbitrary<Double> jitter = Arbitraries.doubles().between(0.0, 1.0);
    return Combinators.combine(type, initialMs, multiplier, extraMs, jitter).as((t, i, m, x, j) ->
        new BackoffSettings(t, Duration.ofMillis(i), m, Duration.ofMillis(i + x), j));
  }

  /** However a failure sequence goes, it never gets more restarts than maxRetries. */
  @Property(tries = 300, seed = "26112723")
  void neverMoreRestartsThanMaxRetriesInOneSequence(@ForAll @IntRange(min = 0, max = 15) int maxRetries,
      @ForAll @IntRange(min = 1, max = 100) int threshold, @ForAll("exitCodes") List<Integer> exits,
      @ForAll @DoubleRange(min = 0, max = 1) double jitter) {
    AgentRestartPolicySpec spec = Specs.circuit(Specs.retries(new AgentRestartPolicySpec(), maxRetries), threshold,
        "10m", "1m", false);
    spec.backoff = new dev.respawn.api.v1alpha1.BackoffSpec();
    spec.backoff.jitter = jitter;
    AgentSim s = new AgentSim(AgentSim.policy(spec)).started();
    int restarts = 0;
    for (int exit : exits) {
      s.exit(exit);
      if (s.state.phase.isTerminal()) {
        break;
      }
      s.restartAndRun();
      restarts++;
      assertThat(restarts).isLessThanOrEqualTo(maxRetries);
    }
    assertThat(s.state.restarts).isLessThanOrEqualTo(maxRetries);
    if (exits.size() > maxRetries) {
      assertThat(s.state.phase).isIn(Phase.Escalated, Phase.Failed);
    }
  }

  @Provide
  Arbitrary<List<Integer>> exitCodes() {
    return Arbitraries.of(1, 3, 137, 139, 255).list().ofMinSize(1).ofMaxSize(40);
  }

  private static final Set<String> LEGAL = Set.of("Closed>Closed", "Closed>Open", "Open>Open", "Open>HalfOpen",
      "HalfOpen>HalfOpen", "HalfOpen>Open", "HalfOpen>Closed");

  /** A random story of failures, healthy stretches and waits only ever makes legal circuit transitions. */
  @Property(tries = 300, seed = "26112724")
  void onlyLegalCircuitTransitions(@ForAll("stories") List<Integer> story,
      @ForAll @IntRange(min = 1, max = 5) int threshold) {
    AgentSim s = new AgentSim(AgentSim.policy(Specs.circuit(Specs.retries(new AgentRestartPolicySpec(), 1000),
        threshold, "10m", "2m", false))).started();
    for (int step : story) {
      switch (step) {
        case 0 -> s.exit(1);
        case 1 -> s.advance(Duration.ofSeconds(61));
        default -> s.advance(Duration.ofSeconds(5));
      }
      if (s.pod == null && s.state.nextRestartAt != null) {
        s.now = s.now.isBefore(s.state.nextRestartAt) ? s.state.nextRestartAt : s.now;
        s.reconcile();
        s.running();
      } else {
        s.reconcile();
      }
    }
    List<String> transitions = new ArrayList<>();
    CircuitState previous = CircuitState.Closed;
    for (Decision d : s.decisions) {
      transitions.add(previous + ">" + d.state().circuit.state());
      previous = d.state().circuit.state();
    }
    assertThat(transitions).contains("Closed>Closed");
    assertThat(transitions).allSatisfy(t -> assertThat(LEGAL).contains(t));
  }

  @Provide
  Arbitrary<List<Integer>> stories() {
    return Arbitraries.integers().between(0, 2).list().ofMinSize(1).ofMaxSize(60);
  }

  /** An invalid policy is refused, naming the field and the rule; no RestartPolicy exists, so it restarts nothing. */
  @Property(tries = 500, seed = "26112725")
  void invalidPoliciesAreRefusedWithTheFieldAndTheRule(@ForAll("invalidSpecs") Invalid invalid) {
    assertThatThrownBy(() -> PolicyCompiler.compile(invalid.spec()))
        .isInstanceOfSatisfying(PolicyInvalidException.class, e -> assertThat(e.violations())
            .anySatisfy(v -> {
              assertThat(v.field()).isEqualTo(invalid.field());
              assertThat(v.rule()).isNotBlank();
            }));
  }

  record Invalid(AgentRestartPolicySpec spec, String field) {}

  @Provide
  Arbitrary<Invalid> invalidSpecs() {
    Arbitrary<Integer> tooManyRetries = Arbitraries.oneOf(Arbitraries.integers().between(1001, Integer.MAX_VALUE),
        Arbitraries.integers().between(Integer.MIN_VALUE, -1));
    Arbitrary<String> badDuration = Arbitraries.oneOf(Arbitraries.strings().ofMinLength(0).ofMaxLength(40)
        .filter(t -> !t.matches("([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+")), Arbitraries.of("-1s", "1d", "5", "∞s"));
    Arbitrary<Double> badMultiplier = Arbitraries.oneOf(Arbitraries.doubles().between(-1e9, 0.99),
        Arbitraries.doubles().between(10.01, 1e9));
    Arbitrary<Long> shortMs = Arbitraries.longs().between(1, 10_000);
    return Arbitraries.oneOf(
        tooManyRetries.map(n -> {
          AgentRestartPolicySpec s = new AgentRestartPolicySpec();
          s.maxRetries = n;
          return new Invalid(s, "spec.maxRetries");
        }),
        badDuration.map(d -> {
          AgentRestartPolicySpec s = new AgentRestartPolicySpec();
          s.resetAfter = d;
          return new Invalid(s, "spec.resetAfter");
        }),
        badMultiplier.map(m -> {
          AgentRestartPolicySpec s = Specs.backoff("Exponential", "1s", m, "10s");
          return new Invalid(s, "spec.backoff.multiplier");
        }),
        shortMs.map(ms -> {
          AgentRestartPolicySpec s = Specs.backoff("Linear", (ms + 1) + "ms", 2.0, ms + "ms");
          return new Invalid(s, "spec.backoff.maxDelay");
        }),
        Arbitraries.strings().alpha().ofMinLength(1).ofMaxLength(20)
            .filter(t -> !Set.of("None", "Immediate", "Linear", "Exponential").contains(t)).map(t -> {
              AgentRestartPolicySpec s = Specs.backoff(t, "1s", 2.0, "10s");
              return new Invalid(s, "spec.backoff.type");
            }),
        Arbitraries.integers().between(101, 100_000).map(n -> {
          AgentRestartPolicySpec s = Specs.circuit(new AgentRestartPolicySpec(), n, "1m", "1m", false);
          return new Invalid(s, "spec.circuitBreaker.failureThreshold");
        }),
        Arbitraries.integers().between(256, 100_000).map(n -> {
          AgentRestartPolicySpec s = new AgentRestartPolicySpec();
          s.restartRequestExitCode = n;
          return new Invalid(s, "spec.restartRequestExitCode");
        }));
  }

  @Property(tries = 200, seed = "26112726")
  void attemptsUpTo1000NeverOverflow(@ForAll @LongRange(min = 1, max = 1_000_000) long initialMs,
      @ForAll @DoubleRange(min = 1.0, max = 10.0) double multiplier) {
    BackoffSettings b = new BackoffSettings(BackoffType.Exponential, Duration.ofMillis(initialMs), multiplier,
        GoDuration.parse("2562047h"), 0);
    assertThat(Backoff.delay(b, 1000)).isPositive().isLessThanOrEqualTo(b.maxDelay());
  }
}

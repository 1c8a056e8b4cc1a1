package dev.respawn.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.BackoffType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class TierTest {
  @ParameterizedTest(name = "{0} asked {1} -> {2}")
  @CsvSource({
      "Core, None, None, false", "Core, Immediate, None, true", "Core, Exponential, None, true",
      "WriterPro, Linear, Linear, false", "WriterPro, Exponential, Linear, true", "WriterPro, Immediate, Immediate, false",
      "Teams, Exponential, Exponential, false", "Enterprise, Exponential, Exponential, false"})
  void softGateServesTheStrongestAllowedType(Tier tier, BackoffType asked, BackoffType served, boolean restricted) {
    RestartPolicy p = AgentSim.policy(Specs.backoff(asked.name(), "2s", 2.0, "120s"));
    Tier.Gated g = tier.gate(p);
    assertThat(g.policy().backoff().type()).isEqualTo(served);
    assertThat(g.restriction().isPresent()).isEqualTo(restricted);
    g.restriction().ifPresent(m -> assertThat(m).contains("spec.backoff.type").contains(tier.name()));
    assertThat(g.policy().backoff().initialDelay()).isEqualTo(p.backoff().initialDelay());
  }

  @Test
  void onlyEnterpriseRunsCustomEvaluators() {
    assertThat(Tier.Enterprise.allowsCustomEvaluators()).isTrue();
    assertThat(Tier.Teams.allowsCustomEvaluators()).isFalse();
    assertThat(Tier.Core.allowsCustomEvaluators()).isFalse();
  }
}

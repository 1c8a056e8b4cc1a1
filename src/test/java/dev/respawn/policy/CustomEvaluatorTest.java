package dev.respawn.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.api.v1alpha1.Phase;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class CustomEvaluatorTest {
  @Test
  void enterpriseLoadsEvaluatorsFromTheClassPath() {
    assertThat(RestartEvaluator.forTier(Tier.Enterprise).evaluators()).extracting(e -> e.name())
        .containsExactly("quota");
    assertThat(RestartEvaluator.forTier(Tier.Teams).evaluators()).isEmpty();
  }

  @Test
  void anEvaluatorsVerdictDecidesFailuresNoRuleMatched() {
    AgentSim sim = new AgentSim(AgentSim.policy(new AgentRestartPolicySpec()),
        RestartEvaluator.forTier(Tier.Enterprise)).started();
    sim.exit(1, "Error", "quota_exceeded for model x");
    assertThat(sim.state.lastFailure.rule()).isEqualTo("evaluator:quota");
    assertThat(sim.state.phase).isEqualTo(Phase.Backoff);
    assertThat(Duration.between(sim.now, sim.state.nextRestartAt)).isEqualTo(Duration.ofMinutes(15));
  }

  @Test
  void withoutTheTierTheSameFailureFollowsTheBuiltInTable() {
    AgentSim sim = new AgentSim(AgentSim.policy(new AgentRestartPolicySpec()),
        RestartEvaluator.forTier(Tier.Teams)).started();
    sim.exit(1, "Error", "quota_exceeded for model x");
    assertThat(sim.state.lastFailure.rule()).isEmpty();
    assertThat(Duration.between(sim.now, sim.state.nextRestartAt)).isEqualTo(Duration.ofSeconds(2));
  }
}

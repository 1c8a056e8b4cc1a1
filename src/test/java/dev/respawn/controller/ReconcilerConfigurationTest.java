package dev.respawn.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.javaoperatorsdk.operator.api.config.BaseConfigurationService;
import org.junit.jupiter.api.Test;

/**
 * How the operator framework is told to run the reconcilers: nothing happens because time passed (api.md
 * §12), so there is no periodic fail-safe reconcile, whose cancelled timer task of every deleted instance
 * would stay in memory for its whole interval (api.md §8).
 */
class ReconcilerConfigurationTest {
  @Test
  void neitherReconcilerIsWokenPeriodically() {
    BaseConfigurationService config = new BaseConfigurationService();
    OperatorSettings settings = OperatorSettings.defaults();
    assertThat(config.getConfigurationFor(new AgentInstanceReconciler(settings, DecisionSink.NONE))
        .maxReconciliationInterval()).isEmpty();
    assertThat(config.getConfigurationFor(new AgentRestartPolicyReconciler(settings, DecisionSink.NONE))
        .maxReconciliationInterval()).isEmpty();
  }
}

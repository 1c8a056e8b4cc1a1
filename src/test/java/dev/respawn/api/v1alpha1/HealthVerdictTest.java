package dev.respawn.api.v1alpha1;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** api.md §5: the agent's respawn.dev/health annotation is Healthy | Stalled | Crashed | Ambiguous. */
class HealthVerdictTest {

  @Test
  void theAgentMayReportExactlyTheFourVerdictsOfItsLease() {
    assertThat(Arrays.stream(HealthVerdict.values()).filter(HealthVerdict::agentMayReport))
        .containsExactly(HealthVerdict.Healthy, HealthVerdict.Stalled, HealthVerdict.Crashed, HealthVerdict.Ambiguous);
  }
}

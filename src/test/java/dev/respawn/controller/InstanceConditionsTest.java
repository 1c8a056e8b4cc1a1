package dev.respawn.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.api.v1alpha1.StatusCondition;
import dev.respawn.policy.Decision;
import dev.respawn.policy.InstanceState;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The conditions of a status the operator did not write itself (restored in part): no placeholder text. */
class InstanceConditionsTest {
  private static Decision decision(InstanceState s) {
    return new Decision(s, List.of(), Optional.empty(), false, false, false, null, Optional.empty(), List.of(), 0,
        Optional.empty(), new Decision.Liveness(false, "PodNotRunning", "no pod running"));
  }

  private static StatusCondition condition(List<StatusCondition> all, String type) {
    return all.stream().filter(c -> type.equals(c.type)).findFirst().orElseThrow();
  }

  @Test
  void anAttemptWithNoDecisionRecordedShowsTheAttemptAlone() {
    InstanceState s = new InstanceState();
    s.phase = Phase.Backoff;
    s.attempt = 7;
    s.nextRestartAt = Instant.parse("2026-11-27T10:00:00Z");
    assertThat(condition(InstanceStatusWriter.conditions(decision(s)), "Recovering").message)
        .isEqualTo("attempt 7; next run at 2026-11-27T10:00:00Z");
  }

  @Test
  void anEscalatedPhaseWithNoTerminalReasonIsNotCalledPolicyNone() {
    InstanceState s = new InstanceState();
    s.phase = Phase.Escalated;
    assertThat(condition(InstanceStatusWriter.conditions(decision(s)), "Escalated").reason).isEqualTo("Escalated");
    s.phase = Phase.Failed; // backoff type None: Failed with no terminal reason
    assertThat(condition(InstanceStatusWriter.conditions(decision(s)), "Escalated").reason)
        .isEqualTo("RestartPolicyNone");
  }
}

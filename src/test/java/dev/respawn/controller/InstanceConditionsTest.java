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

  /**
   * A condition another party added under a domain-qualified type (API conventions: conditions are keyed by type) is
   * kept as it is by the operator's writes; the operator's own types follow the decision.
   */
  @Test
  void aConditionAnotherPartyAddedIsKept() {
    StatusCondition audited = Conditions.of("example.com/Audited", true, "Reviewed", "by the audit bot");
    audited.lastTransitionTime = "2026-11-01T00:00:00Z";
    StatusCondition oldReady = Conditions.of("Ready", true, "Healthy", "");
    StatusCondition stale = Conditions.of("Stalled", true, "Old", ""); // no domain: not another party's
    List<StatusCondition> merged = Conditions.merge(List.of(oldReady, audited, stale),
        List.of(Conditions.of("Ready", false, "PodNotRunning", "")), 3L, Instant.parse("2026-11-27T10:00:00Z"));
    assertThat(merged).extracting(c -> c.type).containsExactly("Ready", "example.com/Audited");
    assertThat(merged.get(1)).isSameAs(audited);
    assertThat(merged.get(1).lastTransitionTime).isEqualTo("2026-11-01T00:00:00Z");
  }
}

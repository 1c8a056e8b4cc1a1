package dev.respawn.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.policy.Decision;
import dev.respawn.policy.Decision.PodStart;
import dev.respawn.policy.InstanceState;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ReleaseGateTest {
  static final Instant T0 = Instant.parse("2026-11-24T10:00:00Z");

  @Test
  void turnsThatComeDueTogetherLeaveOnePerSlot() {
    ReleaseGate gate = new ReleaseGate();
    Duration five = Duration.ofMillis(200);
    // five turns due at once (the operator fell behind): the first goes, the others wait their slot
    assertThat(gate.hold("agents/fleet/model-api", five, T0)).isEmpty();
    assertThat(gate.hold("agents/fleet/model-api", five, T0)).contains(Duration.ofMillis(200));
    assertThat(gate.hold("agents/fleet/model-api", five, T0.plusMillis(150))).contains(Duration.ofMillis(50));
    assertThat(gate.hold("agents/fleet/model-api", five, T0.plusMillis(200))).isEmpty();
    assertThat(gate.hold("agents/fleet/model-api", five, T0.plusMillis(250))).contains(Duration.ofMillis(150));
    // another dependency has a gate of its own
    assertThat(gate.hold("agents/fleet/tool-server", five, T0.plusMillis(250))).isEmpty();
    // turns that come at the rate are never held
    for (int k = 2; k < 10; k++) {
      assertThat(gate.hold("agents/other/model-api", Duration.ofMillis(500), T0.plusMillis(500L * k))).isEmpty();
    }
  }

  /**
   * §11 "at most releaseRate per second", at the server: a create that took long (a new process's first) moves the
   * next slot to one spacing after it was taken, so the next create, quick again, does not follow it too closely.
   */
  @Test
  void theNextSlotCountsFromWhenTheServerTookThePod() {
    ReleaseGate gate = new ReleaseGate();
    Duration second = Duration.ofSeconds(1);
    assertThat(gate.hold("agents/fleet/model-api", second, T0)).isEmpty();
    gate.created("agents/fleet/model-api", second, T0.plusMillis(700));
    assertThat(gate.hold("agents/fleet/model-api", second, T0.plusMillis(1050))).contains(Duration.ofMillis(650));
    assertThat(gate.hold("agents/fleet/model-api", second, T0.plusMillis(1700))).isEmpty();
    // a quick create moves the slot the decision took by its own few milliseconds only
    gate.created("agents/fleet/model-api", second, T0.plusMillis(1710));
    assertThat(gate.hold("agents/fleet/model-api", second, T0.plusMillis(2700))).contains(Duration.ofMillis(10));
    assertThat(gate.hold("agents/fleet/model-api", second, T0.plusMillis(2710))).isEmpty();
  }

  static Decision start(boolean existing) {
    PodStart start = new PodStart(2, "coder-2", 0, Optional.empty(), Optional.empty(), Optional.of("model-api"),
        java.time.Instant.parse("2026-11-21T10:00:00Z"));
    return new Decision(new InstanceState(), List.of(), Optional.of(start), false, false, existing, null,
        Optional.empty(), List.of(), 0, Optional.empty(), new Decision.Liveness(false, "PodNotRunning", ""));
  }

  @Test
  void onlyAPodToCreateTakesASlotOfTheRelease() {
    assertThat(ReleaseGate.releasing(start(false))).contains("model-api");
    // its pod exists (made in its turn): what is left is writing its status, which must not wait a slot
    assertThat(ReleaseGate.releasing(start(true))).isEmpty();
  }
}

package dev.respawn.controller;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class ReleaseGateTest {
  static final Instant T0 = Instant.parse("2026-11-24T10:00:00Z");

  @Test
  void turnsThatComeDueTogetherLeaveOnePerSlot() {
    ReleaseGate gate = new ReleaseGate();
    // five turns due at once (the operator fell behind): the first goes, the others wait their slot
    assertThat(gate.hold("agents/fleet/model-api", 5, T0)).isEmpty();
    assertThat(gate.hold("agents/fleet/model-api", 5, T0)).contains(Duration.ofMillis(200));
    assertThat(gate.hold("agents/fleet/model-api", 5, T0.plusMillis(150))).contains(Duration.ofMillis(50));
    assertThat(gate.hold("agents/fleet/model-api", 5, T0.plusMillis(200))).isEmpty();
    assertThat(gate.hold("agents/fleet/model-api", 5, T0.plusMillis(250))).contains(Duration.ofMillis(150));
    // another dependency has a gate of its own
    assertThat(gate.hold("agents/fleet/tool-server", 5, T0.plusMillis(250))).isEmpty();
    // turns that come at the rate are never held
    for (int k = 2; k < 10; k++) {
      assertThat(gate.hold("agents/other/model-api", 2, T0.plusMillis(500L * k))).isEmpty();
    }
  }
}

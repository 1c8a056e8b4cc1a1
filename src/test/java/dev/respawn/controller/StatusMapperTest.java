package dev.respawn.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentInstanceStatus;
import dev.respawn.api.v1alpha1.CircuitBreakerStatus;
import dev.respawn.policy.Bounds;
import dev.respawn.policy.InstanceState;
import org.junit.jupiter.api.Test;

class StatusMapperTest {

  /**
   * §9: counts a hand edit put out of range (the schema allows any int32) are read as 0 or a limit far from
   * overflow: an attempt of -5 made the next failure's backoff throw on every reconcile (black-box tester), a run of
   * 2147483647 named the next pod with a negative number.
   */
  @Test
  void countsOutOfRangeAreReadAsZeroOrTheLimit() {
    AgentInstanceStatus st = new AgentInstanceStatus();
    st.attempt = -5;
    st.run = Integer.MAX_VALUE;
    st.restarts = Integer.MAX_VALUE;
    st.circuitBreaker = new CircuitBreakerStatus();
    st.circuitBreaker.trips = -1;

    InstanceState s = StatusMapper.toState(st);

    assertThat(s.attempt).isZero();
    assertThat(s.run).isEqualTo(Bounds.COUNT_LIMIT);
    assertThat(s.run + 1).as("counted on without overflow").isPositive();
    assertThat(s.restarts).isEqualTo(Bounds.COUNT_LIMIT);
    assertThat(s.circuit.trips()).isZero();
  }
}

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
   * overflow: an attempt of -5 made the next failure's backoff throw on every reconcile (black-box tester). The run
   * number is read as written: pods are matched to it by their run label (a clamped one would take an ended pod of
   * run 1e9+1 for the next run, and adopt its way up from 1e9 to a pod's larger run).
   */
  @Test
  void countsOutOfRangeAreReadAsZeroOrTheLimit() {
    AgentInstanceStatus st = new AgentInstanceStatus();
    st.attempt = -5;
    st.run = 1_500_000_000;
    st.restarts = Integer.MAX_VALUE;
    st.circuitBreaker = new CircuitBreakerStatus();
    st.circuitBreaker.trips = -1;

    InstanceState s = StatusMapper.toState(st);

    assertThat(s.attempt).isZero();
    assertThat(s.run).isEqualTo(1_500_000_000);
    assertThat(s.restarts).isEqualTo(Bounds.COUNT_LIMIT);
    assertThat(s.circuit.trips()).isZero();
  }
}

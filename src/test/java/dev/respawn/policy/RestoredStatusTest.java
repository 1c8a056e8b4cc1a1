package dev.respawn.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.Phase;
import org.junit.jupiter.api.Test;

/**
 * Status is the operator's input too: one it did not write (edited by hand, restored in part from a backup) must not
 * leave an instance stuck.
 */
class RestoredStatusTest {
  /** A status that shows a run but never made one, and names no pod: the first run is started. */
  @Test
  void aRunningPhaseWithNoRunMadeStartsTheFirstRun() {
    AgentSim s = new AgentSim(AgentSim.policy(Specs.spec()));
    s.state.phase = Phase.Running;
    Decision d = s.reconcile();
    assertThat(d.start()).hasValueSatisfying(start -> assertThat(start.podName()).isEqualTo("coder-1"));
    assertThat(s.state.phase).isEqualTo(Phase.Starting);
  }

  /**
   * A status that shows run 2 but names no pod, and no pod of it exists: the run's pod is the one by its name, gone
   * (the same as a current pod that vanished), and the next run follows after the backoff.
   */
  @Test
  void aStartingPhaseThatNamesNoPodIsTheRunsPodByItsName() {
    AgentSim s = new AgentSim(AgentSim.policy(Specs.spec()));
    s.state.phase = Phase.Starting;
    s.state.run = 2;
    s.reconcile();
    assertThat(s.state.phase).isEqualTo(Phase.Backoff);
    assertThat(s.state.lastFailure.pod()).isEqualTo("coder-2");
    assertThat(s.state.attempt).isEqualTo(1);
  }
}

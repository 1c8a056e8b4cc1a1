package dev.respawn.policy;

import static dev.respawn.policy.Fleet.OUTAGE;
import static dev.respawn.policy.Fleet.T0;
import static dev.respawn.policy.Fleet.modelApiPolicy;
import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.policy.Fleet.Member;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * api.md §11 over a small fleet in virtual time: failures of failureThreshold distinct instances within window open the
 * shared circuit; the failures that decided before it showed Open are counted, the one that opened it and any after it
 * are taken back and wait.
 */
class FleetCircuitOpensTest {
  /**
   * §3 d2 "or that this very failure opens": instances that fail at once each decide before the circuit's one writer
   * has counted the others, so each counts its failure as usual; once the circuit shows Open, the failure that
   * brought it to its threshold (and any after it) is taken back out of its instance's count; the two before it stay
   * counted (§11 "Closed: the failure follows §3 as usual").
   */
  @Test
  void failuresAtOnceThatOpenTheCircuitCountOnlyThoseBeforeTheThreshold() {
    Fleet f = new Fleet(modelApiPolicy("maxRetries: 5\n", "failureThreshold: 3\nwindow: 1m\nopenDuration: 30s\n"),
        "a", "b", "c", "d");
    f.startAll();
    for (String name : List.of("a", "b", "c")) {
      f.now = f.now.plusMillis(1);
      assertThat(f.fail(name, OUTAGE).reasonCode()).as(name + " decided on a Closed circuit")
          .isEqualTo(ReasonCode.RESTART_SCHEDULED);
    }
    f.now = f.now.plusMillis(5);
    f.fail("d", OUTAGE); // after the threshold, still before the circuit's writer stepped: not counted either
    assertThat(f.m("d").state.attempt).isEqualTo(1);
    f.settle();
    assertThat(f.circuit("model-api").state()).isEqualTo(CircuitState.Open);
    assertThat(f.circuit("model-api").openedAt()).as("opened by c's failure")
        .isEqualTo(f.m("c").state.lastFailure.at());
    Map<String, Integer> attempts = new LinkedHashMap<>();
    for (String name : List.of("a", "b", "c", "d")) {
      Member m = f.m(name);
      assertThat(m.state.phase).as(name).isEqualTo(Phase.CircuitOpen);
      assertThat(m.state.waitingFor).as(name).isEqualTo("model-api");
      attempts.put(name, m.state.attempt);
    }
    assertThat(attempts).containsExactly(Map.entry("a", 1), Map.entry("b", 1), Map.entry("c", 0), Map.entry("d", 0));
    for (String name : List.of("c", "d")) {
      InstanceState st = f.m(name).state;
      assertThat(st.firstFailureAt).as(name).isNull();
      assertThat(st.circuit.failureTimes()).as(name + ": its own circuit breaker untouched").isEmpty();
      assertThat(st.history.get(st.history.size() - 1).reasonCode()).as(name)
          .isEqualTo(ReasonCode.DEPENDENCY_CIRCUIT_OPEN);
      assertThat(st.lastDecision.attempt()).as(name).isZero();
    }
    assertThat(f.m("a").state.circuit.failureTimes()).hasSize(1);
    // and nothing flips back: a later look changes none of it
    f.runUntil(T0.plusSeconds(20));
    assertThat(f.m("c").state.attempt).isZero();
    assertThat(f.m("a").state.attempt).isEqualTo(1);
  }

  /**
   * §11 d2 "the instance restarts when the dependency lets it", and README "No periodic reconcile": the failure that
   * opens the circuit waits openDuration, shown in lastDecision and as a wake-up of its own.
   */
  @Test
  void theFailureThatOpensTheCircuitWaitsItsOpenDurationWithAWakeUpOfItsOwn() {
    Fleet f = new Fleet(modelApiPolicy("", "failureThreshold: 1\nopenDuration: 30s\n"), "a");
    f.startAll();
    f.now = T0.plusSeconds(10);
    Decision d = f.fail("a", OUTAGE);
    assertThat(d.reasonCode()).isEqualTo(ReasonCode.DEPENDENCY_CIRCUIT_OPEN);
    assertThat(f.m("a").state.nextRestartAt).isEqualTo(T0.plusSeconds(40));
    assertThat(f.m("a").state.lastDecision.delaySeconds()).isEqualTo(30.0);
    assertThat(d.wakeAt()).contains(T0.plusSeconds(40));
  }

  /**
   * §11: "failures of >= failureThreshold distinct instances within window open the circuit": one instance failing
   * again and again is one instance, and its own failures never open the shared circuit (its backoff handles it).
   */
  @Test
  void repeatedFailuresOfOneInstanceNeverOpenTheSharedCircuit() {
    Fleet f = new Fleet(modelApiPolicy("maxRetries: 5\n", "failureThreshold: 2\nwindow: 1m\nopenDuration: 30s\n"),
        "a", "b");
    f.startAll();
    f.now = T0.plusSeconds(10);
    assertThat(f.fail("a", OUTAGE).reasonCode()).isEqualTo(ReasonCode.RESTART_SCHEDULED);
    f.settle();
    f.runUntil(T0.plusSeconds(15)); // a's 2 s backoff is over: run 2
    f.running("a");
    f.settle();
    f.now = T0.plusSeconds(20);
    Decision again = f.fail("a", OUTAGE);
    assertThat(again.reasonCode()).as("a's second failure is no second instance").isEqualTo(ReasonCode.RESTART_SCHEDULED);
    f.settle();
    assertThat(f.circuit("model-api").state()).isEqualTo(CircuitState.Closed);
    assertThat(f.m("a").state.attempt).isEqualTo(2);
    assertThat(f.m("a").state.waitingFor).isNull();
  }

  /** §11: only blames "within window" count towards the threshold; an older one has been forgotten. */
  @Test
  void aBlameOlderThanTheWindowDoesNotHelpOpenTheSharedCircuit() {
    Fleet f = new Fleet(modelApiPolicy("maxRetries: 5\n", "failureThreshold: 2\nwindow: 1m\nopenDuration: 30s\n"),
        "a", "b");
    f.startAll();
    f.now = T0.plusSeconds(10);
    f.fail("a", OUTAGE);
    f.settle();
    f.runUntil(T0.plusSeconds(71)); // 61 s after a's failure: outside the 1m window
    Decision b = f.fail("b", OUTAGE);
    assertThat(b.reasonCode()).isEqualTo(ReasonCode.RESTART_SCHEDULED);
    f.settle();
    assertThat(f.circuit("model-api").state()).isEqualTo(CircuitState.Closed);
    assertThat(f.m("b").state.phase).isEqualTo(Phase.Backoff);
    assertThat(f.m("b").state.attempt).isEqualTo(1);
  }
}

package dev.respawn.controller;

import static dev.respawn.controller.OperatorFixture.at;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.api.v1alpha1.DependencyStatus;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.sandbox.Run;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A shared dependency's circuit when its policy or its instances change while it is open (api.md §11). */
class DependencyEditsScenarioTest extends MockClusterScenario {
  static final String MSG = "upstream model API answered HTTP 503";

  static DependencyStatus dep(AgentRestartPolicy p) {
    return p.getStatus() == null || p.getStatus().dependencies == null ? null
        : p.getStatus().dependencies.stream().filter(d -> "model-api".equals(d.name)).findFirst().orElse(null);
  }

  static String fleet(String openDuration, String resetAfter) {
    return """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 100ms}
        maxRetries: 3
        resetAfter: %s
        dependencies:
        - name: model-api
          match: {messageContains: ["model API"]}
          failureThreshold: 1
          window: 1m
          openDuration: %s
          probes: 1
          releaseRate: 5
        """.formatted(resetAfter, openDuration);
  }

  private void twoWaiting(String a, String b) {
    f.policy("fleet", fleet("1h", "1s"));
    for (String n : List.of(a, b)) {
      f.kubelet.script(n, Run.exit(1, "Error", MSG).after(Duration.ofMillis(300)), Run.runForever());
      f.instance(n, "fleet");
    }
    f.awaitPolicy("fleet", p -> dep(p) != null && dep(p).state == CircuitState.Open && dep(p).waiting != null
        && dep(p).waiting == 2);
  }

  /**
   * A policy edit that shortens the dependency's openDuration while its circuit is Open: "openDuration: Open ->
   * HalfOpen after this" (api.md §11), as the instance's own circuitBreaker.openDuration is honoured when edited
   * (CircuitBreaker.trialAt is openedAt + the current openDuration): the fleet does not wait the old hour.
   */
  @Test
  void anOpenDurationShortenedWhileOpenTakesEffect() {
    twoWaiting("o0", "o1");
    f.editPolicy("fleet", p -> {
      p.getSpec().dependencies.get(0).openDuration = "1s";
      return p;
    });
    AgentRestartPolicy edited = f.awaitPolicy("fleet", p -> p.getStatus().observedGeneration != null
        && p.getStatus().observedGeneration == 2);
    await("the circuit goes HalfOpen once openedAt + the new openDuration (1s) has passed; status: "
        + dep(edited).state + " halfOpenAt " + dep(edited).halfOpenAt + " openedAt " + dep(edited).openedAt)
        .atMost(Duration.ofSeconds(10)).until(() -> dep(f.getPolicy("fleet")).state != CircuitState.Open);
    f.awaitInstance("o0", i -> at(i, 2, Phase.Running));
  }

  /**
   * A waiting instance being deleted (deletionTimestamp set, held by a finalizer: foreground deletion, Argo CD, someone's
   * finalizer) starts nothing any more (README): the shared circuit neither counts it as waiting nor picks it as the
   * probe (which would never run), so the other waiter is probed.
   */
  @Test
  void aWaiterBeingDeletedIsNoProbeThatNeverRuns() {
    f.policy("fleet", fleet("2s", "1s"));
    f.kubelet.script("d0", Run.exit(1, "Error", MSG).after(Duration.ofMillis(300)), Run.runForever());
    f.instance("d0", "fleet", spec -> { });
    f.edit("d0", i -> {
      i.getMetadata().setFinalizers(List.of("example.com/hold"));
      return i;
    });
    f.awaitInstance("d0", i -> i.getStatus().phase == Phase.CircuitOpen);
    f.kubelet.script("d1", Run.exit(1, "Error", MSG).after(Duration.ofMillis(300)), Run.runForever());
    f.instance("d1", "fleet");
    f.awaitInstance("d1", i -> i.getStatus().phase == Phase.CircuitOpen);
    f.client.resources(AgentInstance.class).inNamespace(OperatorFixture.NS).withName("d0").delete();
    await().atMost(OperatorFixture.AT_MOST).until(() -> f.get("d0").getMetadata().getDeletionTimestamp() != null);
    try {
      AgentInstance d1 = f.awaitInstance("d1", i -> at(i, 2, Phase.Running));
      assertThat(d1.getStatus().attempt).isZero();
    } catch (AssertionError e) {
      throw new AssertionError("policy status: " + io.fabric8.kubernetes.client.utils.Serialization.asYaml(
          f.getPolicy("fleet").getStatus()) + "\n" + e.getMessage(), e);
    } finally {
      AgentInstance still = f.get("d0");
      if (still != null) {
        still.getMetadata().setFinalizers(List.of());
        f.client.resource(still).update();
      }
    }
  }
}

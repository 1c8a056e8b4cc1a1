package dev.respawn.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.OperatorException;
import io.javaoperatorsdk.operator.api.monitoring.Metrics;
import io.javaoperatorsdk.operator.monitoring.micrometer.MicrometerMetrics;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ReconcileMetricsTest {
  final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  final Metrics micrometer = MicrometerMetrics.withoutPerResourceMetrics(registry);

  /** A reconcile of "coder" that throws {@code thrown}, or returns "done". */
  static Metrics.ControllerExecution<String> reconcile(RuntimeException thrown) {
    return new Metrics.ControllerExecution<>() {
      @Override
      public String name() {
        return "reconcile";
      }

      @Override
      public String controllerName() {
        return "agentinstance";
      }

      @Override
      public String successTypeName(String result) {
        return "noUpdate";
      }

      @Override
      public ResourceID resourceID() {
        return new ResourceID("coder", "agents");
      }

      @Override
      public Map<String, Object> metadata() {
        return Map.of();
      }

      @Override
      public String execute() {
        if (thrown != null) {
          throw thrown;
        }
        return "done";
      }
    };
  }

  @Test
  void aConflictReachesJosdkAsThrownSoThatItIsLoggedAsOne() {
    KubernetesClientException conflict = new KubernetesClientException("the object has been modified", 409, null);
    assertThatThrownBy(() -> micrometer.timeControllerExecution(reconcile(conflict)))
        .as("JOSDK's Micrometer timer wraps it").isInstanceOf(OperatorException.class).hasCause(conflict);

    assertThatThrownBy(() -> new ReconcileMetrics(micrometer).timeControllerExecution(reconcile(conflict)))
        .isSameAs(conflict);
  }

  @Test
  void everythingElseIsJosdksMetricsUnchanged() throws Exception {
    ReconcileMetrics metrics = new ReconcileMetrics(micrometer);
    IllegalStateException other = new IllegalStateException("a bug");
    assertThatThrownBy(() -> metrics.timeControllerExecution(reconcile(other))).isInstanceOf(OperatorException.class)
        .hasCause(other);
    assertThat(metrics.timeControllerExecution(reconcile(null))).isEqualTo("done");
    assertThat(registry.getMeters()).as("JOSDK's timer of the executions").isNotEmpty()
        .anySatisfy(m -> assertThat(m.getId().getName()).contains("reconcile"));
  }
}

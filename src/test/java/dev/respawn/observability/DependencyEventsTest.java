package dev.respawn.observability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.policy.DependencyCircuit;
import dev.respawn.testsupport.MockApi;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.events.v1.Event;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * api.md §11 "Each transition writes a DependencyCircuitChanged Event on the policy". The jar builds its
 * recorder with KubeEventRecorder.Settings.defaults() (OperatorCommand), whose per-object rate limit (10 new Events a
 * minute) must not drop transitions of a circuit that opens and closes often (short openDuration, rotating probes).
 */
class DependencyEventsTest {

  @Test
  void everyTransitionOfASharedCircuitWritesItsEventWithTheJarsRecorder() {
    try (MockApi api = MockApi.start()) {
      var client = api.client();
      AgentRestartPolicy p = new AgentRestartPolicy();
      p.setMetadata(new ObjectMetaBuilder().withName("fleet").withNamespace(MockApi.NAMESPACE).build());
      p.setSpec(new AgentRestartPolicySpec());
      AgentRestartPolicy policy = client.resource(p).create();
      // as OperatorCommand builds it
      ReportingSink sink = new ReportingSink(new KubeEventRecorder(client, "respawn-operator", InstantSource.system()),
          new RestartMetrics(new SimpleMeterRegistry()));
      Instant t = Instant.now();
      // an outage as a fleet of 8 meets it with openDuration 2s: each HalfOpen restarts the instance that waited
      // longest, whose probe fails again (a different instance each round), then the upstream recovers
      List<DependencyCircuit.Transition> all = new ArrayList<>();
      all.add(new DependencyCircuit.Transition(CircuitState.Closed, CircuitState.Open, t,
          "failures of 3 distinct instances within 1m"));
      for (int k = 0; k < 8; k++) {
        all.add(new DependencyCircuit.Transition(CircuitState.Open, CircuitState.HalfOpen, t,
            "open for its openDuration: 1 probe(s)"));
        all.add(new DependencyCircuit.Transition(CircuitState.HalfOpen, CircuitState.Open, t,
            "probe a" + k + " failed again"));
      }
      all.add(new DependencyCircuit.Transition(CircuitState.Open, CircuitState.HalfOpen, t,
          "open for its openDuration: 1 probe(s)"));
      all.add(new DependencyCircuit.Transition(CircuitState.HalfOpen, CircuitState.Closed, t,
          "probe a0 was healthy for resetAfter"));
      for (DependencyCircuit.Transition tr : all) {
        sink.dependencies(policy, List.of(), Map.of("model-api", List.of(tr)));
      }
      sink.close(); // writes what waits (series included)
      await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
        List<Event> events = client.events().v1().events().inNamespace(MockApi.NAMESPACE).list().getItems().stream()
            .filter(e -> "DependencyCircuitChanged".equals(e.getReason())).toList();
        int told = events.stream().mapToInt(e -> e.getSeries() == null ? 1 : e.getSeries().getCount()).sum();
        assertThat(told).as("DependencyCircuitChanged Events (series counts included) for %d transitions; notes: %s",
            all.size(), events.stream().map(Event::getNote).toList()).isEqualTo(all.size());
      });
    }
  }
}

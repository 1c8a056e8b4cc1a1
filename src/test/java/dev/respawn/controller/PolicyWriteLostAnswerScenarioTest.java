package dev.respawn.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.sandbox.Run;
import dev.respawn.testsupport.ApiFaults;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Commit first, then tell, for a shared dependency's circuit (api.md §11): the policy status write that opens it lands,
 * but its answer is lost (5xx on the write and on every retry of it). The retried reconcile finds the circuit Open
 * already and steps no transition of its own: the {@code DependencyCircuitChanged} Event of the write that landed is
 * still told, once.
 */
class PolicyWriteLostAnswerScenarioTest extends MockClusterScenario {
  /** The fixture's operator client tries a write 11 times (fabric8's default requestRetryBackoffLimit, 10). */
  private static final int CLIENT_ATTEMPTS = 11;

  private static Integer trips(AgentRestartPolicy p) {
    DependencyStatusView d = DependencyStatusView.of(p);
    return d == null ? null : d.trips();
  }

  private record DependencyStatusView(CircuitState state, Integer trips) {
    static DependencyStatusView of(AgentRestartPolicy p) {
      return p.getStatus() == null || p.getStatus().dependencies == null ? null : p.getStatus().dependencies.stream()
          .filter(d -> "model-api".equals(d.name)).findFirst().map(d -> new DependencyStatusView(d.state, d.trips))
          .orElse(null);
    }
  }

  @Test
  void theOpeningOfACircuitWhoseStatusWriteLandedWithItsAnswerLostIsToldOnce() {
    AtomicInteger lost = new AtomicInteger();
    java.util.concurrent.atomic.AtomicReference<RecordedRequest> opening = new java.util.concurrent.atomic.AtomicReference<>();
    f.api.faults(new ApiFaults() {
      @Override
      public MockResponse before(RecordedRequest r) {
        boolean policyStatus = "PATCH".equals(r.getMethod()) && r.getPath().contains("/agentrestartpolicies/fleet/status");
        if (policyStatus && lost.get() == 0 && new String(r.getBody().getBytes(), java.nio.charset.StandardCharsets.UTF_8).contains("\"Open\"")) {
          opening.compareAndSet(null, r); // applied, and its answer lost (below)
        } else if (policyStatus && lost.get() > 0 && lost.get() < CLIENT_ATTEMPTS) {
          lost.incrementAndGet(); // the client's retries of it, and the next reconcile's writes: not answered
          return ApiFaults.status(503, "ServiceUnavailable", "the answer was lost");
        }
        return null;
      }

      @Override
      public MockResponse after(RecordedRequest r, MockResponse handled) {
        if (r == opening.get() && lost.compareAndSet(0, 1)) {
          return ApiFaults.status(503, "ServiceUnavailable", "the answer was lost");
        }
        return handled;
      }
    });
    f.policy("fleet", """
        backoff: {type: Exponential, initialDelay: 20s, maxDelay: 20s}
        maxRetries: 3
        dependencies:
        - name: model-api
          match: {messageContains: ["model API"]}
          failureThreshold: 2
          window: 1m
          openDuration: 1h
        """);
    for (String name : List.of("a0", "a1")) {
      f.kubelet.script(name, Run.exit(1, "Error", "upstream model API answered HTTP 503").after(Duration.ofMillis(300)));
      f.instance(name, "fleet");
    }
    f.awaitPolicy("fleet", p -> DependencyStatusView.of(p) != null && DependencyStatusView.of(p).state() == CircuitState.Open);
    await().atMost(Duration.ofSeconds(40)).until(() -> lost.get() >= CLIENT_ATTEMPTS); // the client gave up
    await().atMost(OperatorFixture.AT_MOST).untilAsserted(() -> assertThat(f.events("fleet"))
        .filteredOn(e -> "DependencyCircuitChanged".equals(e.getReason()))
        .anySatisfy(e -> assertThat(e.getNote()).contains("Closed -> Open")));
    f.holdsFor(Duration.ofSeconds(2), () -> f.events("fleet").stream()
        .filter(e -> "DependencyCircuitChanged".equals(e.getReason()))
        .mapToInt(e -> e.getSeries() == null ? 1 : e.getSeries().getCount()).sum(), told -> told == 1);
    assertThat(trips(f.getPolicy("fleet"))).isEqualTo(1);
  }
}

package dev.respawn.controller;

import static dev.respawn.controller.OperatorFixture.at;
import static dev.respawn.controller.OperatorFixture.hasCondition;
import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.sandbox.Run;
import dev.respawn.testsupport.RequestLog;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * What ending a run costs in reads (README, "A run is ended on the API server's word"): one GET of its pod and one of
 * its Lease, none at rest; also when many runs are ended at once, and a reconcile that comes before the watch told
 * the operator's own delete judges the run again.
 */
class RunEndReadsScenarioTest extends MockClusterScenario {
  private static final Duration RENEW = Duration.ofMillis(500);

  private List<RequestLog.Request> operatorReads() {
    return f.api.requests().matching(r -> OperatorFixture.OPERATOR_AGENT.equals(r.userAgent()) && !r.isWrite()
        && !r.path().contains("watch="));
  }

  @Test
  void manyRunsEndedAtOnceCostOneReadOfTheirPodAndOneOfTheirLeaseEach() {
    int n = 30;
    f.policy("hb", """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
        resetAfter: 30m
        heartbeat: {timeout: 3s, startupGrace: 10s}
        """);
    List<String> names = IntStream.range(0, n).mapToObj(k -> "stall-" + k).toList();
    names.forEach(name -> {
      f.kubelet.script(name, Run.runForever().heartbeat(RENEW), Run.runForever().heartbeat(RENEW));
      f.instance(name, "hb");
    });
    names.forEach(name -> f.awaitInstance(name, i -> at(i, 1, Phase.Running)
        && hasCondition(i, "Ready", "True", "Healthy")));
    // at rest over two timeouts: no read at all
    f.api.requests().clear();
    f.holdsFor(Duration.ofSeconds(6), () -> f.get("stall-0"), i -> at(i, 1, Phase.Running));
    assertThat(operatorReads()).as("reads at rest").isEmpty();

    f.kubelet.stopHeartbeats();
    names.forEach(name -> f.awaitInstance(name, i -> at(i, 2, Phase.Running)
        && hasCondition(i, "Ready", "True", "Healthy")));
    Map<String, Long> perObject = operatorReads().stream().collect(Collectors.groupingBy(RequestLog.Request::path,
        TreeMap::new, Collectors.counting()));
    assertThat(perObject).as("GETs per object while %d runs are ended", n).hasSize(2 * n)
        .allSatisfy((path, count) -> assertThat(count).as(path).isEqualTo(1L));
  }
}

package dev.respawn.acceptance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.Pod;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledFuture;
import org.junit.jupiter.api.Test;

/**
 * api.md §12 (the operator writes when something changed, never because time passed; a restarted operator writes
 * nothing for an instance whose state did not change) and §3 (a restart scheduled before the operator died
 * happens at nextRestartAt, once, by the new operator). The operator process is killed (SIGKILL) and started again.
 */
class OperatorRestartAndApiEconomyIT extends OperatorScenario {

  List<ApiRequest> writesInThisNamespaceSince(Instant since) {
    return cluster.operatorWritesSince(since).stream().filter(r -> r.path().contains("/namespaces/" + ns + "/"))
        .toList();
  }

  Instant restartOperator() throws Exception {
    operator.kill();
    Instant restarted = Instant.now();
    operator.start();
    await().atMost(PATIENCE).until(() -> cluster.operatorRequestedSince(restarted));
    return restarted;
  }

  /**
   * The operator and the plugin name themselves to the API server (User-Agent), apart from each other and from any
   * other program built on fabric8: the API server's audit log and a request trace tell whose request it was.
   */
  @Test
  void theOperatorAndThePluginNameThemselvesInTheirRequests() throws Exception {
    Instant before = Instant.now();
    PluginCli.Result status = plugin.run("status", "nobody", "-n", ns);
    assertThat(status.exitCode()).as(status.err()).isEqualTo(1);
    List<String> agents = cluster.requests.stream().filter(r -> r.byOperator()).map(ApiRequest::userAgent).distinct()
        .toList();
    assertThat(agents).as("user agents of the operator's and the plugin's requests")
        .anySatisfy(a -> assertThat(a).startsWith("respawn-operator/"))
        .anySatisfy(a -> assertThat(a).startsWith("kubectl-respawn/"))
        .allSatisfy(a -> assertThat(a).matches("(respawn-operator|kubectl-respawn)/.+"));
    assertThat(cluster.requests.stream().filter(r -> !r.at().isBefore(before)
        && r.path().contains("/agentinstances/nobody"))).as("the plugin's read").isNotEmpty()
        .allSatisfy(r -> assertThat(r.userAgent()).startsWith("kubectl-respawn/"));
  }

  /**
   * The Deployment runs the operator leader-elected and the kubelet stops it with SIGTERM: it must stop within the
   * pod's grace period (30 s), not hang until it is killed (and never write its last Events).
   */
  @Test
  void aLeaderStopsOnSigtermWithinTheGracePeriod() throws Exception {
    try (OperatorProcess leader = new OperatorProcess(cluster, "leader", "--leader-election",
        "--leader-election-namespace=" + ns, "--namespaces=" + ns)) {
      leader.start();
      await().atMost(PATIENCE).until(() -> cluster.client.leases().inNamespace(ns)
          .withName("respawn-operator-leader").get() != null && leader.log().contains("New leader"));
      assertThat(leader.terminate(Duration.ofSeconds(20))).as("exited on SIGTERM; log: %s", leader.tail()).isTrue();
      assertThat(leader.log()).contains("Stopping the operator").doesNotContain("Exiting");
    }
  }

  /** A leader whose Lease another replica took exits (the Deployment starts it again, to stand by). */
  @Test
  void aLeaderThatLostItsLeaseExits() throws Exception {
    try (OperatorProcess leader = new OperatorProcess(cluster, "lost", "--leader-election",
        "--leader-election-namespace=" + ns, "--namespaces=" + ns)) {
      leader.start();
      var lease = cluster.client.leases().inNamespace(ns).withName("respawn-operator-leader");
      await().atMost(PATIENCE).until(() -> lease.get() != null && leader.log().contains("New leader"));
      // another replica takes the Lease over; an edit racing the leader's own renewal (409) is made again
      await().atMost(PATIENCE).ignoreExceptionsInstanceOf(io.fabric8.kubernetes.client.KubernetesClientException.class)
          .until(() -> lease.edit(l -> {
            l.getSpec().setHolderIdentity("another-replica");
            l.getSpec().setRenewTime(java.time.ZonedDateTime.now(java.time.ZoneOffset.UTC).plusHours(1));
            return l;
          }) != null);
      assertThat(leader.exitedWith(Duration.ofSeconds(30))).as("log: %s", leader.tail()).isEqualTo(1);
      assertThat(leader.log()).contains("Lost the leader Lease respawn-operator-leader: exiting");
    }
  }

  @Test
  void aHealthyHeartbeatingInstanceCostsNoWritesHoweverLongItRuns() {
    policy("p", "heartbeat: {timeout: 3s, startupGrace: 3s}\nresume: {mode: 'Off'}");
    instance("h", "p");
    awaitPod("h-1");
    await().atMost(PATIENCE).until(() -> agent.get(ns, "h") != null);
    ScheduledFuture<?> beating = agent.keepRenewing(ns, "h", "h-1", 500);
    try {
      kubelet.running(ns, "h-1");
      awaitStatus("h", s -> "True".equals(condition(s, "Ready").path("status").asText()));
      Instant atRest = Instant.now();
      holdsFor(Duration.ofSeconds(8), () -> writesInThisNamespaceSince(atRest).isEmpty());
      assertThat(phase("h")).isEqualTo("Running");
    } finally {
      beating.cancel(false);
    }
  }

  @Test
  void aRestartedOperatorWritesNothingForInstancesWhoseStateDidNotChange() throws Exception {
    policy("slow", "backoff: {type: Linear, initialDelay: 120s, maxDelay: 300s}\nmaxRetries: 3\nresume: {mode: 'Off'}");
    policy("esc", "backoff: {type: Immediate}\nmaxRetries: 0\nresume: {mode: 'Off'}");
    policy("circ", "backoff: {type: Immediate}\nmaxRetries: 5\nresume: {mode: 'Off'}\n"
        + "circuitBreaker: {failureThreshold: 1, window: 10m, openDuration: 120s}");
    policy("hb", "heartbeat: {timeout: 4s, startupGrace: 4s}\nresume: {mode: 'Off'}");
    Map<String, String> instances = Map.of("backoff", "slow", "failed", "slow", "succeeded", "slow",
        "running", "slow", "escalated", "esc", "circuit", "circ", "beating", "hb");
    instances.forEach(this::instance);
    awaitPod("beating-1");
    await().atMost(PATIENCE).until(() -> agent.get(ns, "beating") != null);
    ScheduledFuture<?> beating = agent.keepRenewing(ns, "beating", "beating-1", 500);
    try {
      for (String n : instances.keySet()) {
        startRun(n, n + "-1");
      }
      kubelet.terminated(ns, "backoff-1", 1, "Error", "boom");
      kubelet.terminated(ns, "failed-1", 1, "Error", "invalid_configuration: bad key");
      kubelet.terminated(ns, "succeeded-1", 0, "Completed", null);
      kubelet.terminated(ns, "escalated-1", 1, "Error", "boom");
      kubelet.terminated(ns, "circuit-1", 1, "Error", "boom");
      awaitPhase("backoff", "Backoff");
      awaitPhase("failed", "Failed");
      awaitPhase("succeeded", "Succeeded");
      awaitPhase("escalated", "Escalated");
      awaitPhase("circuit", "CircuitOpen");
      awaitStatus("beating", s -> "True".equals(condition(s, "Ready").path("status").asText()));
      Instant atRest = Instant.now();
      holdsFor(Duration.ofSeconds(3), () -> writesInThisNamespaceSince(atRest).isEmpty());

      Instant restarted = restartOperator();
      holdsFor(Duration.ofSeconds(10), () -> writesInThisNamespaceSince(restarted).isEmpty());
      assertThat(phase("beating")).isEqualTo("Running");
    } finally {
      beating.cancel(false);
    }
  }

  @Test
  void aRestartScheduledBeforeTheOperatorDiedHappensOnceAtNextRestartAt() throws Exception {
    policy("p", "backoff: {type: Linear, initialDelay: 12s, maxDelay: 60s}\nmaxRetries: 3\nresume: {mode: 'Off'}");
    instance("a", "p");
    startRun("a", "a-1");
    kubelet.terminated(ns, "a-1", 1, "Error", "boom");
    Instant next = Instant.parse(awaitPhase("a", "Backoff").path("nextRestartAt").asText());
    restartOperator();

    Pod made = await().atMost(PATIENCE).until(() -> pod("a-2"), p -> p != null);
    // when the API server made it (whole seconds), not when this test saw it
    Instant created = Instant.parse(made.getMetadata().getCreationTimestamp());
    assertThat(created).as("not before nextRestartAt " + next).isAfterOrEqualTo(next.truncatedTo(ChronoUnit.SECONDS));
    assertThat(created).as("on time").isBefore(next.plusSeconds(10));
    startRun("a", "a-2");
    holdsFor(Duration.ofSeconds(3), () -> pod("a-3") == null);
    assertThat(cluster.podCreatesIn(ns)).as("pod creates, by both operators").isEqualTo(2);
    JsonNode s = status("a");
    assertThat(s.path("run").asInt()).isEqualTo(2);
    assertThat(s.path("restarts").asInt()).isEqualTo(1);
    assertThat(s.path("attempt").asInt()).isEqualTo(1);
  }
}

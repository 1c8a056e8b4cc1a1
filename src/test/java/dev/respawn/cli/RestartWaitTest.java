package dev.respawn.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.controller.DecisionSink;
import dev.respawn.controller.OperatorSettings;
import dev.respawn.controller.RespawnOperator;
import dev.respawn.testsupport.MockApi;
import dev.respawn.sandbox.Run;
import dev.respawn.sandbox.SimulatedKubelet;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Optional;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * restart --wait, resume --wait and verify-restarted against the real operator and a simulated kubelet
 * (the controller package's OperatorFixture, rebuilt here from its public parts).
 */
class RestartWaitTest {
  static final String NS = MockApi.NAMESPACE;
  MockApi api;
  SimulatedKubelet kubelet;
  RespawnOperator operator;

  @BeforeEach
  void start() {
    api = MockApi.start();
    kubelet = new SimulatedKubelet(api.newClient(), NS).start();
    operator = new RespawnOperator(api.newClient(), OperatorSettings.defaults(), DecisionSink.NONE, Optional.empty())
        .start();
  }

  @AfterEach
  void stop() {
    operator.close();
    kubelet.close();
    api.close();
  }

  Cli.Result cli(String... args) {
    return Cli.run(PluginEnvironment.using(api.client(), InstantSource.system()), args);
  }

  AgentInstance awaitInstance(String name, Predicate<AgentInstance> condition) {
    return await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20))
        .until(() -> Instances.get(api.client(), NS, name), i -> i != null && i.getStatus() != null
            && condition.test(i));
  }

  /**
   * With heartbeats, the new run's status is written once its agent renewed (or 3 s after its start): the wait
   * sees that write, whether the new agent renews or never does.
   */
  @Test
  void restartWaitSeesTheNewRunOfAnAgentWithHeartbeats() {
    Instances.policy(api.client(), NS, "beating", "{heartbeat: {timeout: 60s}}");
    kubelet.script("hb", Run.runForever().heartbeat(Duration.ofMillis(200)), Run.runForever(),
        Run.runForever().heartbeat(Duration.ofMillis(200)));
    api.client().resources(AgentInstance.class).inNamespace(NS).resource(Instances.instance(NS, "hb", "beating"))
        .create();
    awaitInstance("hb", i -> i.getStatus().phase == Phase.Running && Integer.valueOf(1).equals(i.getStatus().run));
    for (String pod : new String[] {"hb-2", "hb-3"}) {
      Cli.Result r = cli("restart", "hb", "--reason", "new tools", "--wait", "--timeout", "20s", "-o", "json");
      assertThat(r.exit()).as(r.toString()).isZero();
      assertThat(r.json().get("pod").asText()).isEqualTo(pod);
    }
  }

  /**
   * The new run fails before its first heartbeat, so its start and its end reach status in one write, and
   * lastRestart is the failure's by then: --wait still reports the restart it asked for (status's history).
   */
  @Test
  void restartWaitReportsARestartWhoseNewRunFailedAtOnce() {
    Instances.policy(api.client(), NS, "slow", "{backoff: {type: Exponential, initialDelay: 1h, maxDelay: 1h}, "
        + "heartbeat: {timeout: 60s}}");
    kubelet.script("quick", Run.runForever().heartbeat(Duration.ofMillis(200)),
        Run.exit(1).after(Duration.ofMillis(500)), Run.runForever());
    api.client().resources(AgentInstance.class).inNamespace(NS).resource(Instances.instance(NS, "quick", "slow"))
        .create();
    awaitInstance("quick", i -> i.getStatus().phase == Phase.Running && Integer.valueOf(1).equals(i.getStatus().run));

    Cli.Result r = cli("restart", "quick", "--reason", "new tools", "--wait", "--timeout", "20s", "-o", "json");

    assertThat(r.exit()).as(r.toString()).isZero();
    assertThat(r.json().get("pod").asText()).isEqualTo("quick-2");
    assertThat(r.json().get("message").asText()).contains("quick-2 started", "ended since");
  }

  @Test
  void restartWaitReturnsOnceTheNewRunStartedAndVerifyConfirmsIt() {
    api.client().resources(AgentInstance.class).inNamespace(NS).resource(Instances.instance(NS, "coder", null))
        .create();
    awaitInstance("coder", i -> i.getStatus().phase == Phase.Running && Integer.valueOf(1).equals(i.getStatus().run));
    Instant before = Instant.now();

    Cli.Result r = cli("restart", "coder", "--reason", "Load new GitConfig implementation", "--wait",
        "--timeout", "30s", "-o", "json");

    assertThat(r.exit()).as(r.toString()).isZero();
    JsonNode j = r.json();
    assertThat(j.get("restarted").asBoolean()).isTrue();
    assertThat(j.get("previous_pod").asText()).isEqualTo("coder-1");
    assertThat(j.get("pod").asText()).isEqualTo("coder-2");
    AgentInstance after = Instances.get(api.client(), NS, "coder");
    assertThat(after.getStatus().lastRestart.requestId).isEqualTo(j.get("request_id").asText());
    assertThat(after.getStatus().lastRestart.reason).isEqualTo("Load new GitConfig implementation");
    assertThat(after.getStatus().lastRestart.kind).isEqualTo("Manual");
    assertThat(after.getStatus().handledRequests.get("restart")).isEqualTo(j.get("request_id").asText());
    assertThat(after.getStatus().attempt).isZero();

    Cli.Result verified = cli("verify-restarted", "coder", "--since", before.toString(), "-o", "json");
    assertThat(verified.exit()).as(verified.toString()).isZero();
    assertThat(verified.json().get("pod").asText()).isEqualTo("coder-2");
    Cli.Result notSince = cli("verify-restarted", "coder", "--since", after.getStatus().lastRestart.startedAt);
    assertThat(notSince.exit()).isEqualTo(1);
    assertThat(notSince.err()).contains("has not restarted since");
  }

  /**
   * A user allowed to patch the instance but not to watch it: the request is made, and the error says so (a user
   * told only "forbidden" would ask again, and restart the agent twice).
   */
  @Test
  void aWaitTheUserMayNotWatchSaysTheRequestWasMade() {
    api.client().resources(AgentInstance.class).inNamespace(NS).resource(Instances.instance(NS, "coder", null))
        .create();
    awaitInstance("coder", i -> i.getStatus().phase == Phase.Running && Integer.valueOf(1).equals(i.getStatus().run));
    api.faults(new dev.respawn.testsupport.ApiFaults() {
      @Override
      public io.fabric8.mockwebserver.http.MockResponse before(io.fabric8.mockwebserver.http.RecordedRequest r) {
        // the plugin's wait: a watch of the one instance (the operator's informers watch without a field selector)
        if ("GET".equals(r.getMethod()) && r.getPath().contains("/agentinstances") && r.getPath().contains("watch=true")
            && r.getPath().contains("fieldSelector")) {
          return dev.respawn.testsupport.ApiFaults.status(403, "Forbidden", "agentinstances.respawn.dev \"coder\" is "
              + "forbidden: User \"dev\" cannot watch resource \"agentinstances\"");
        }
        return null;
      }
    });

    Cli.Result r = cli("restart", "coder", "--reason", "new tools", "--wait", "--timeout", "30s", "-o", "json");

    assertThat(r.exit()).as(r.toString()).isEqualTo(1);
    String id = Instances.get(api.client(), NS, "coder").getMetadata().getAnnotations()
        .get(AgentInstance.RESTART_ANNOTATION);
    assertThat(id).as("the request was made").isNotBlank();
    assertThat(r.json().get("request_id").asText()).as("a script keeps the request id").isEqualTo(id);
    assertThat(r.json().get("error").asText()).isEqualTo("wait_failed");
    assertThat(r.err()).as(r.toString()).startsWith("error: request " + id + " was made (annotation set), but waiting "
        + "for it failed: forbidden (403)").contains("watch on agentinstances", "kubectl respawn status coder");
    AgentInstance restarted = awaitInstance("coder", i -> Integer.valueOf(2).equals(i.getStatus().run));
    assertThat(restarted.getStatus().lastRestart.requestId).isEqualTo(id);
  }

  @Test
  void restartWaitOfAnEscalatedAgentIsRefusedAndResumeWaitBringsItBack() {
    Instances.policy(api.client(), NS, "once", "{maxRetries: 0, backoff: {type: Immediate}}");
    kubelet.script("stuck", Run.exit(1, "Error", "network_timeout: upstream"));
    api.client().resources(AgentInstance.class).inNamespace(NS).resource(Instances.instance(NS, "stuck", "once"))
        .create();
    awaitInstance("stuck", i -> i.getStatus().phase == Phase.Escalated);

    Cli.Result refused = cli("restart", "stuck", "--reason", "try again", "--wait", "--timeout", "30s");

    assertThat(refused.exit()).as(refused.toString()).isEqualTo(1);
    assertThat(refused.err()).startsWith("error: restart request cli-").contains("refused", "Escalated is terminal",
        "kubectl respawn resume stuck --force");
    assertThat(refused.err().lines()).hasSize(1);

    Cli.Result status = cli("status", "stuck", "-o", "json");
    assertThat(status.json().get("can_retry").asBoolean()).isFalse();
    assertThat(status.json().get("reason").asText()).isEqualTo("retries_exhausted");

    Cli.Result resumed = cli("resume", "stuck", "--force", "--wait", "--timeout", "30s", "-o", "json");

    assertThat(resumed.exit()).as(resumed.toString()).isZero();
    assertThat(resumed.json().get("restarted").asBoolean()).isTrue();
    assertThat(resumed.json().get("pod").asText()).isEqualTo("stuck-2");
    AgentInstance running = awaitInstance("stuck", i -> i.getStatus().phase == Phase.Running);
    assertThat(running.getStatus().lastRestart.kind).isEqualTo("Resume");
    assertThat(running.getStatus().attempt).isZero();
  }
}

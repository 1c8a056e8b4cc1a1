package dev.respawn.agent;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.respawn.heartbeat.HeartbeatLeases;
import dev.respawn.testsupport.ApiFaults;
import dev.respawn.testsupport.MockApi;
import dev.respawn.testsupport.PythonAgent;
import dev.respawn.testsupport.PythonAgent.Result;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent's helper, agent/python/respawn_agent.py, run as a real process against the mock API server:
 * what it writes on the heartbeat Lease (api.md §5), "restart me" (§3 step 3) and its confirmation, and
 * its errors (a missing Lease, a 403, a conflict): a clear message, exit code 2, never a traceback.
 */
class PythonAgentHelperTest {
  @RegisterExtension
  static final MockApi API = new MockApi();
  static final String NS = MockApi.NAMESPACE;

  @AfterEach
  void noFaults() {
    API.faults(ApiFaults.NONE);
  }

  static Lease lease(String name) {
    return API.client().leases().inNamespace(NS).resource(new LeaseBuilder().withNewMetadata().withName(name)
        .withNamespace(NS).endMetadata().withNewSpec().endSpec().build()).create();
  }

  static Lease get(String name) {
    return API.client().leases().inNamespace(NS).withName(name).get();
  }

  static PythonAgent agent(String lease, String pod) {
    return new PythonAgent(API.url(), NS, lease, pod);
  }

  static void assertClearError(Result r, String... phrases) {
    assertThat(r.exitCode()).as("exit code; stderr: %s", r.err()).isEqualTo(2);
    assertThat(r.err()).startsWith("respawn_agent: ").contains(phrases).doesNotContain("Traceback");
  }

  @Test
  void aHeartbeatRenewsTheLeaseAsThePodWithItsVerdictAndDetail() {
    lease("beat");
    Instant before = Instant.now().minusSeconds(1);
    Result r = agent("beat", "beat-1").run("heartbeat", "--verdict", "Healthy", "--detail", "step 3 of 7");
    assertThat(r.exitCode()).as(r.err()).isZero();
    Lease l = get("beat");
    assertThat(l.getSpec().getHolderIdentity()).isEqualTo("beat-1");
    assertThat(l.getSpec().getRenewTime().toInstant()).isBetween(before, Instant.now().plusSeconds(1));
    assertThat(l.getMetadata().getAnnotations()).containsEntry(HeartbeatLeases.HEALTH, "Healthy")
        .containsEntry("respawn.dev/detail", "step 3 of 7");
    // the next run takes the Lease over: a new holder, one transition; a heartbeat without detail drops it
    Result next = agent("beat", "beat-2").run("heartbeat", "--verdict", "Stalled");
    assertThat(next.exitCode()).as(next.err()).isZero();
    Lease taken = get("beat");
    assertThat(taken.getSpec().getHolderIdentity()).isEqualTo("beat-2");
    assertThat(taken.getSpec().getLeaseTransitions()).isEqualTo(1);
    assertThat(taken.getSpec().getAcquireTime()).isNotNull();
    assertThat(taken.getMetadata().getAnnotations()).containsEntry(HeartbeatLeases.HEALTH, "Stalled")
        .doesNotContainKey("respawn.dev/detail");
  }

  @Test
  void aCheckpointIsReportedWithItsStatusIdempotenceAndArtifacts() {
    lease("ckpt");
    Result r = agent("ckpt", "ckpt-1").run("checkpoint", "ckpt-17", "--status", "in_progress", "--not-idempotent");
    assertThat(r.exitCode()).as(r.err()).isZero();
    assertThat(get("ckpt").getMetadata().getAnnotations()).containsEntry("respawn.dev/checkpoint", "ckpt-17")
        .containsEntry("respawn.dev/checkpoint-status", "in_progress")
        .containsEntry("respawn.dev/step-idempotent", "false").containsEntry("respawn.dev/artifacts-ready", "true");
    assertThat(get("ckpt").getSpec().getHolderIdentity()).isEqualTo("ckpt-1");
  }

  @Test
  void aRestartRequestExitsWithTheCodeAndTheReasonAndTheNextRunCanConfirmIt(@TempDir Path dir) throws Exception {
    lease("tdd");
    String since = Instant.now().minusSeconds(1).toString();
    Path terminationLog = dir.resolve("termination-log");
    Result r = agent("tdd", "tdd-1").with("RESPAWN_TERMINATION_LOG", terminationLog.toString())
        .run("request-restart", "--reason", "Load new GitConfig implementation");
    assertThat(r.exitCode()).as(r.err()).isEqualTo(42);
    assertThat(Files.readString(terminationLog, StandardCharsets.UTF_8)).isEqualTo("Load new GitConfig implementation");
    // the same run has not been replaced: not restarted
    Result same = agent("tdd", "tdd-1").run("verify-restarted", "--since", since);
    assertThat(same.exitCode()).isEqualTo(1);
    assertThat(json(same).get("restarted").asBoolean()).isFalse();
    assertThat(json(same).get("error").asText()).contains("has not been replaced");
    // the next run confirms it
    Result next = agent("tdd", "tdd-2").run("verify-restarted", "--since", since);
    assertThat(next.exitCode()).as(next.err()).isZero();
    JsonNode confirmed = json(next);
    assertThat(confirmed.get("restarted").asBoolean()).isTrue();
    assertThat(confirmed.get("previous_pod").asText()).isEqualTo("tdd-1");
    assertThat(confirmed.get("reason").asText()).isEqualTo("Load new GitConfig implementation");
    // a request older than --since is not this restart
    Result later = agent("tdd", "tdd-2").run("verify-restarted", "--since", Instant.now().plusSeconds(5).toString());
    assertThat(later.exitCode()).isEqualTo(1);
    assertThat(json(later).get("error").asText()).contains("older than");
    // another code when the policy sets restartRequestExitCode
    Result other = agent("tdd", "tdd-2").with("RESPAWN_TERMINATION_LOG", terminationLog.toString())
        .with("RESPAWN_RESTART_EXIT_CODE", "75").run("request-restart", "--reason", "again");
    assertThat(other.exitCode()).isEqualTo(75);
  }

  @Test
  void aRestartRequestStillExitsWhenTheLeaseCannotBeMarked(@TempDir Path dir) throws Exception {
    Path terminationLog = dir.resolve("termination-log");
    Result r = agent("no-such-lease", "x-1").with("RESPAWN_TERMINATION_LOG", terminationLog.toString())
        .run("request-restart", "--reason", "reload");
    assertThat(r.exitCode()).isEqualTo(42);
    assertThat(r.err()).contains("not recorded on the Lease").doesNotContain("Traceback");
    assertThat(Files.readString(terminationLog, StandardCharsets.UTF_8)).isEqualTo("reload");
  }

  @Test
  void aMissingLeaseIsNamedWithWhatCreatesIt() {
    Result r = agent("absent", "absent-1").run("heartbeat");
    assertClearError(r, "Lease test/absent does not exist", "right after the first run's pod");
  }

  @Test
  void aForbiddenRequestNamesTheVerbTheLeaseAndTheRoleRuleNeeded() {
    lease("guarded");
    API.faults(new ApiFaults() {
      @Override
      public MockResponse before(RecordedRequest request) {
        return request.getPath().contains("/leases/guarded") ? ApiFaults.status(403, "Forbidden",
            "leases.coordination.k8s.io \"guarded\" is forbidden: User \"system:serviceaccount:test:agent\" cannot get")
            : null;
      }
    });
    Result r = agent("guarded", "guarded-1").run("checkpoint", "c-1");
    assertClearError(r, "403", "may not get Lease test/guarded", "resourceNames [guarded]", "verbs [get, update, patch]");
  }

  @Test
  void aConflictOnEveryUpdateIsRetriedABoundedNumberOfTimesThenReported() {
    lease("contended");
    AtomicInteger puts = new AtomicInteger();
    API.faults(new ApiFaults() {
      @Override
      public MockResponse before(RecordedRequest request) {
        if (request.getPath().contains("/leases/contended") && "PUT".equals(request.getMethod())) {
          puts.incrementAndGet();
          return ApiFaults.status(409, "Conflict", "the object has been modified; please apply your changes to the "
              + "latest version and try again");
        }
        return null;
      }
    });
    Result r = agent("contended", "contended-1").run("heartbeat");
    assertClearError(r, "Lease test/contended changed under each of 5 attempts", "409");
    assertThat(puts.get()).isEqualTo(5);
  }

  @Test
  void aRealConflictIsResolvedByReadingAgain() {
    lease("busy");
    AtomicInteger puts = new AtomicInteger();
    API.faults(new ApiFaults() {
      @Override
      public MockResponse before(RecordedRequest request) {
        // someone renews the Lease between the helper's read and its first write: a stale resourceVersion
        if (request.getPath().contains("/leases/busy") && "PUT".equals(request.getMethod())
            && puts.incrementAndGet() == 1) {
          return ApiFaults.status(409, "Conflict", "the object has been modified");
        }
        return null;
      }
    });
    Result r = agent("busy", "busy-1").run("heartbeat", "--detail", "second try");
    assertThat(r.exitCode()).as(r.err()).isZero();
    assertThat(puts.get()).isEqualTo(2);
    assertThat(get("busy").getMetadata().getAnnotations()).containsEntry("respawn.dev/detail", "second try");
  }

  @Test
  void valuesOutsideTheContractAreRefusedBeforeAnyRequest() {
    lease("strict");
    long before = API.requests().all().size();
    Result tooLong = agent("strict", "strict-1").run("checkpoint", "c".repeat(257));
    assertClearError(tooLong, "checkpoint id is 257 bytes, at most 256 allowed");
    Result badTime = agent("strict", "strict-1").run("verify-restarted", "--since", "yesterday");
    assertClearError(badTime, "not a time: 'yesterday'");
    Result badVerdict = agent("strict", "strict-1").run("heartbeat", "--verdict", "Fine");
    assertThat(badVerdict.exitCode()).isEqualTo(2);
    assertThat(badVerdict.err()).contains("invalid choice: 'Fine'").doesNotContain("Traceback");
    assertThat(API.requests().all().size()).as("no request for refused values").isEqualTo(before);
  }

  @Test
  void withoutTheRespawnEnvItSaysWhatIsMissing() {
    Result r = new PythonAgent(API.url(), NS, "x", "x-1").with("RESPAWN_LEASE_NAME", "").run("heartbeat");
    assertClearError(r, "missing the Lease name (RESPAWN_LEASE_NAME)");
  }

  @Test
  void anUnreachableApiServerIsReportedNotRaised() {
    Result r = new PythonAgent("http://127.0.0.1:9", NS, "x", "x-1").run("heartbeat");
    assertClearError(r, "GET http://127.0.0.1:9/apis/coordination.k8s.io/v1/namespaces/test/leases/x failed");
  }

  @Test
  void theExampleAgentAsksForOneRestartAndFinishesInTheNextRun(@TempDir Path dir) {
    lease("example");
    PythonAgent first = agent("example", "example-1").with("EXAMPLE_STEP_SECONDS", "0")
        .with("RESPAWN_RUN", "1").with("RESPAWN_TERMINATION_LOG", dir.resolve("log").toString());
    Result run1 = first.run(PythonAgent.EXAMPLE);
    assertThat(run1.exitCode()).as(run1.err()).isEqualTo(42);
    assertThat(run1.out()).contains("step implement").doesNotContain("step test");
    assertThat(get("example").getMetadata().getAnnotations()).containsEntry("respawn.dev/checkpoint", "implement");
    Result run2 = agent("example", "example-2").with("EXAMPLE_STEP_SECONDS", "0").with("RESPAWN_RUN", "2")
        .run(PythonAgent.EXAMPLE);
    assertThat(run2.exitCode()).as(run2.err()).isZero();
    assertThat(run2.out()).contains("step test", "done");
    assertThat(get("example").getMetadata().getAnnotations()).containsEntry("respawn.dev/checkpoint", "test")
        .containsEntry("respawn.dev/checkpoint-status", "complete");
  }

  private static JsonNode json(Result r) {
    return Serialization.unmarshal(r.out(), JsonNode.class);
  }
}

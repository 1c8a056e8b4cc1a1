package dev.respawn.controller;

import static dev.respawn.controller.OperatorFixture.at;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import com.fasterxml.jackson.databind.JsonNode;
import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.api.v1alpha1.PolicyReference;
import dev.respawn.policy.Decision;
import dev.respawn.policy.EventReason;
import dev.respawn.sandbox.Run;
import dev.respawn.testsupport.ApiFaults;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The operator stopped in the middle of a restart cycle (api.md §3 "once, by the new operator", §6, §8): a start
 * whose telling waited for its status write, a decision whose status write or pod delete the stopped operator never
 * made, a request made while no operator ran.
 */
class OperatorDeathScenarioTest extends FaultScenario {

  /**
   * §3 "a restart scheduled before the operator died happens at nextRestartAt, once, by the new operator" and §8
   * "Every decision is also one JSON audit log line": the start at nextRestartAt whose status write is deferred
   * (its pod takes 3 s to start) is told (RestartStarted) once, also when the operator stops before status shows it.
   */
  @Test
  void aDeferredStartIsToldOnceAcrossAnOperatorRestart() {
    observe();
    f.policy("slow", "backoff: {type: Linear, initialDelay: 1s, maxDelay: 1s}\nresetAfter: 30m");
    f.kubelet.script("defer", Run.exit(1).after(Duration.ofMillis(300)),
        Run.runForever().startAfter(Duration.ofSeconds(4)));
    f.instance("defer", "slow");
    f.awaitInstance("defer", i -> i.getStatus().phase == Phase.Backoff);
    // the pod of run 2 is made, its status write waits for it to run
    await().atMost(OperatorFixture.AT_MOST).pollInterval(OperatorFixture.POLL)
        .until(() -> f.podsEverCreated("defer").contains("defer-2"));
    assertThat(f.get("defer").getStatus().run).as("the start's status write waits").isEqualTo(1);
    f.stopOperator();
    f.startOperator();
    f.awaitInstance("defer", i -> at(i, 2, Phase.Running));
    onceThroughout(Duration.ofMillis(1500), () -> events("defer", "RestartStarted"));
    assertThat(f.podsEverCreated("defer")).containsExactly("defer-1", "defer-2");
    assertThat(f.get("defer").getStatus().restarts).isEqualTo(1);
    assertThat(events("defer", "RestartStarted")).as("RestartStarted Events of defer-2: %s", f.events("defer"))
        .isEqualTo(1);
  }

  /**
   * §6 "restart now ... Not a failure", across an operator death: the operator cannot write the status of a restart
   * request before it stops. The request's decision is recorded before the live pod is deleted, so the pod is still
   * there; the next operator finds the request not yet handled: that is the request's restart, once, not a failure.
   */
  @Test
  void aRestartRequestWhoseOperatorDiedBeforeItsStatusWriteIsNoFailure() {
    running("died", "plain", "backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}\nresetAfter: 30m", 2);
    java.util.concurrent.atomic.AtomicInteger refused = new java.util.concurrent.atomic.AtomicInteger();
    f.api.faults(ApiFaults.refuseStatusWrites("died", 503, "ServiceUnavailable", "the API server is unavailable",
        refused));
    f.annotate("died", AgentInstance.RESTART_ANNOTATION, "r1");
    await().atMost(OperatorFixture.AT_MOST).pollInterval(OperatorFixture.POLL).until(() -> refused.get() > 0);
    assertThat(f.pod("died-1")).as("recorded first, deleted then").isNotNull();
    f.stopOperator();
    f.api.faults(ApiFaults.NONE);
    assertThat(f.get("died").getStatus().run).as("nothing of the restart was written").isEqualTo(1);
    f.startOperator();
    var st = f.awaitInstance("died", i -> at(i, 2, Phase.Running)).getStatus();
    assertThat(st.attempt).as("not a failure: %s", f.describe("died")).isZero();
    assertThat(st.lastFailure).isNull();
    assertThat(st.restarts).isEqualTo(1);
    assertThat(st.lastRestart.kind.toString()).isEqualTo("Manual");
    assertThat(st.lastRestart.requestId).isEqualTo("r1");
    assertThat(st.history).singleElement().satisfies(h -> assertThat(h.outcome.toString()).isEqualTo("Restarted"));
    assertThat(f.podsEverCreated("died")).containsExactly("died-1", "died-2");
  }

  /**
   * A run that ends by its stale heartbeat (§5), whose operator stops before the decision's status is written: the
   * decision is recorded before its pod is deleted, so the next operator finds the run live, grants it a fresh timeout
   * (§12) and ends it again as what it was, a Timeout; not as a pod that vanished (ContextReset, §4 "deleted by
   * someone else").
   */
  @Test
  void aStallWhoseStatusWriteTheStoppedOperatorNeverMadeIsStillATimeout() {
    running("stall", "hb", "backoff: {type: Linear, initialDelay: 1h, maxDelay: 1h}\nheartbeat: {timeout: 1s}", 2);
    java.util.concurrent.atomic.AtomicInteger refused = new java.util.concurrent.atomic.AtomicInteger();
    f.api.faults(ApiFaults.refuseStatusWrites("stall", 503, "ServiceUnavailable", "the API server is unavailable",
        refused));
    await().atMost(OperatorFixture.AT_MOST).pollInterval(OperatorFixture.POLL).until(() -> refused.get() > 0);
    f.stopOperator();
    f.api.faults(ApiFaults.NONE);
    assertThat(f.pod("stall-1")).as("recorded first, deleted then: %s", f.describe("stall")).isNotNull();
    f.startOperator();
    var st = f.awaitInstance("stall", i -> i.getStatus().phase == Phase.Backoff).getStatus();
    assertThat(st.lastFailure.failureClass.toString()).as("%s", f.describe("stall")).isEqualTo("Timeout");
    assertThat(st.lastFailure.failureReason).isEqualTo("HealthCheckFailed");
    assertThat(st.attempt).isEqualTo(1);
    assertThat(st.history).hasSize(1);
    await().atMost(OperatorFixture.AT_MOST).pollInterval(OperatorFixture.POLL).until(() -> f.pod("stall-1") == null);
  }

  /**
   * The other side of it: the stall's status is written, and the operator stops before its pod is deleted (the
   * delete refused). The next operator deletes the pod of the run status says ended; it neither takes it for a live
   * run nor decides its ending again.
   */
  @Test
  void aStallRecordedWhosePodTheStoppedOperatorNeverDeletedIsDeletedByTheNext() {
    running("kept", "hb", "backoff: {type: Linear, initialDelay: 1h, maxDelay: 1h}\nheartbeat: {timeout: 1s}", 2);
    java.util.concurrent.atomic.AtomicInteger refused = refusePodDeletes("kept-1");
    deletedByTheNextOperator("kept", refused, "Timeout");
    assertThat(f.podsEverCreated("kept")).containsExactly("kept-1");
  }

  /**
   * A run whose agent container failed while a sidecar keeps its pod alive: the failure is recorded before that pod is
   * deleted, so an operator that stops with the delete not made (refused here) leaves the failure in status, and the
   * next one deletes the pod without deciding anything again.
   */
  @Test
  void aSidecarPodsFailureIsRecordedBeforeItsPodIsDeleted() {
    f.policy("hour", "backoff: {type: Linear, initialDelay: 1h, maxDelay: 1h}");
    f.kubelet.script("sc", Run.runForever(), Run.runForever());
    f.instance("sc", "hour", spec -> spec.template = new io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder()
        .withNewSpec().addNewContainer().withName("agent").withImage("registry.example/agents/coder:1.4").endContainer()
        .addNewContainer().withName("proxy").withImage("registry.example/proxy:1").endContainer().endSpec().build());
    f.awaitInstance("sc", i -> at(i, 1, Phase.Running));
    java.util.concurrent.atomic.AtomicInteger refused = refusePodDeletes("sc-1");
    f.kubelet.terminateContainer("sc-1", "agent", 1, "Error", "network_timeout: upstream");
    deletedByTheNextOperator("sc", refused, "ToolFailure");
  }

  /**
   * The failure of {@code name}'s run 1 is recorded (Backoff) while the delete of its pod is refused; the operator
   * stops, the API server takes deletes again, and the next operator deletes the pod, deciding nothing again.
   */
  void deletedByTheNextOperator(String name, java.util.concurrent.atomic.AtomicInteger refused, String failureClass) {
    var decided = f.awaitInstance(name, i -> i.getStatus().phase == Phase.Backoff).getStatus();
    await().atMost(OperatorFixture.AT_MOST).pollInterval(OperatorFixture.POLL).until(() -> refused.get() > 0);
    f.stopOperator();
    f.api.faults(ApiFaults.NONE);
    assertThat(f.pod(name + "-1")).isNotNull();
    f.startOperator();
    await().atMost(OperatorFixture.AT_MOST).pollInterval(OperatorFixture.POLL).until(() -> f.pod(name + "-1") == null);
    var st = f.holdsFor(Duration.ofMillis(1500), () -> f.get(name).getStatus(), s -> s.phase == Phase.Backoff);
    assertThat(st.lastFailure.failureClass.toString()).isEqualTo(failureClass);
    assertThat(st.attempt).isEqualTo(1);
    assertThat(st.history).hasSize(1);
    assertThat(st.lastDecision.at).as("not decided again").isEqualTo(decided.lastDecision.at);
  }

  /** Every DELETE of the pod {@code pod} is answered 503 (nothing deleted); returns the count of them. */
  java.util.concurrent.atomic.AtomicInteger refusePodDeletes(String pod) {
    java.util.concurrent.atomic.AtomicInteger refused = new java.util.concurrent.atomic.AtomicInteger();
    f.api.faults(new ApiFaults() {
      @Override
      public io.fabric8.mockwebserver.http.MockResponse before(io.fabric8.mockwebserver.http.RecordedRequest r) {
        if ("DELETE".equals(r.getMethod()) && r.getPath().contains("/pods/" + pod)) {
          refused.incrementAndGet();
          return ApiFaults.status(503, "ServiceUnavailable", "the API server is unavailable");
        }
        return null;
      }
    });
    return refused;
  }

  /** §6 "each distinct value is acted on once": a request made while the operator is down, then another restart. */
  @Test
  void aRequestMadeWhileTheOperatorIsDownIsActedOnOnce() {
    running("down", "plain", "backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}\nresetAfter: 30m", 3);
    f.stopOperator();
    f.annotate("down", AgentInstance.RESTART_ANNOTATION, "r1");
    f.startOperator();
    f.awaitInstance("down", i -> at(i, 2, Phase.Running));
    f.holdsFor(Duration.ofMillis(1500), () -> f.podsEverCreated("down"), p -> p.size() == 2);
    f.stopOperator();
    f.api.requests().clear();
    f.startOperator();
    f.awaitDecisions(1); // the new process looked at it
    f.holdsFor(Duration.ofMillis(2500), () -> f.podsEverCreated("down"), p -> p.size() == 2);
    assertThat(f.operatorWrites()).isEmpty();
    var st = f.get("down").getStatus();
    assertThat(st.attempt).isZero();
    assertThat(st.restarts).isEqualTo(1);
    assertThat(events("down", "RestartRequested")).isEqualTo(1);
    assertThat(events("down", "RestartStarted") + f.events("down").stream().filter(e -> e.getNote() != null
        && e.getNote().contains("RestartStarted")).count()).isGreaterThanOrEqualTo(1);
  }
}

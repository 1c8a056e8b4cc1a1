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
 * API faults in the middle of a restart cycle (api.md §8 every decision told once, §12): a status write whose answer
 * was lost, a brief outage on a status write after the decision acted on the pods, Events refused for a while, a
 * write owed across a spec edit.
 */
class OperatorFaultsScenarioTest extends FaultScenario {

  /**
   * §8 "Every decision is also one JSON audit log line" / one Event: the failure's status write reaches the store but
   * its answer is lost (a 500 after the write was applied). The failure must still be told once.
   */
  @Test
  void aFailureWhoseStatusWriteAnswerWasLostIsToldOnce() {
    observe();
    running("lostanswer", "slow", "backoff: {type: Linear, initialDelay: 1h, maxDelay: 1h}\nresetAfter: 30m", 1);
    java.util.concurrent.atomic.AtomicInteger hit = loseStatusAnswers("lostanswer", 1);
    f.kubelet.terminate("lostanswer-1", 1, "Error", "network_timeout: upstream");
    f.awaitInstance("lostanswer", i -> i.getStatus().phase == Phase.Backoff);
    onceThroughout(Duration.ofMillis(3000), () -> events("lostanswer", "RestartFailed"));
    f.api.faults(ApiFaults.NONE);
    assertThat(hit.get()).isPositive();
    assertThat(f.get("lostanswer").getStatus().attempt).isEqualTo(1);
    assertThat(f.get("lostanswer").getStatus().history).hasSize(1);
    assertThat(toldCount("lostanswer", EventReason.RestartFailed) + toldCount("lostanswer", EventReason.RestartScheduled))
        .as("told: %s; Events: %s", told, f.events("lostanswer")).isPositive();
    assertThat(events("lostanswer", "RestartFailed")).as("Events: %s", f.events("lostanswer")).isEqualTo(1);
  }

  /**
   * The same when every answer is lost, the client's own retries too (a timeout, a 5xx burst): the write landed, the
   * reconcile failed. The next reconcile finds the decision in status and tells it, once; it is not decided anew.
   */
  @Test
  void aFailureWhoseStatusWriteLandedButEveryAnswerWasLostIsToldOnce() {
    jarLikeOperator(); // two retries of its own, as the jar's client: all of them lost too
    running("everylost", "slow", "backoff: {type: Linear, initialDelay: 1h, maxDelay: 1h}\nresetAfter: 30m", 1);
    java.util.concurrent.atomic.AtomicInteger hit = loseStatusAnswers("everylost", 8);
    f.kubelet.terminate("everylost-1", 1, "Error", "network_timeout: upstream");
    f.awaitInstance("everylost", i -> i.getStatus().phase == Phase.Backoff);
    onceThroughout(Duration.ofMillis(3000), () -> events("everylost", "RestartFailed"));
    f.api.faults(ApiFaults.NONE);
    assertThat(hit.get()).isGreaterThan(1);
    assertThat(f.get("everylost").getStatus().attempt).isEqualTo(1);
    assertThat(events("everylost", "RestartFailed")).as("Events: %s", f.events("everylost")).isEqualTo(1);
    assertThat(toldCount("everylost", EventReason.RestartFailed)).as("told: %s", told).isEqualTo(1);
  }

  /**
   * §3 "an Escalated Event" for a decision that ends the lifecycle: the API server takes no Event for two seconds
   * (503 on every create, the client's own retries included) while the instance fails for good. The Event is written
   * once the server takes Events again, once.
   */
  @Test
  void anEscalatedEventDecidedWhileTheApiServerTookNoEventsIsWrittenAfter() {
    jarLikeOperator();
    running("noevents", "none", "backoff: {type: None}", 1);
    java.util.concurrent.atomic.AtomicInteger refused = new java.util.concurrent.atomic.AtomicInteger();
    AtomicReference<Instant> until = new AtomicReference<>(Instant.MAX);
    f.api.faults(new ApiFaults() {
      @Override
      public MockResponse before(RecordedRequest r) {
        if (r.getMethod().equals("POST") && r.getPath().contains("/events") && Instant.now().isBefore(until.get())) {
          refused.incrementAndGet();
          return ApiFaults.status(503, "ServiceUnavailable", "no Events for now");
        }
        return null;
      }
    });
    f.kubelet.terminate("noevents-1", 1, "Error", "network_timeout: upstream");
    f.awaitInstance("noevents", i -> i.getStatus().phase == Phase.Failed);
    await().atMost(OperatorFixture.AT_MOST).until(() -> refused.get() >= 3); // the client's own three tries
    until.set(Instant.now().plusSeconds(2));
    await().atMost(OperatorFixture.AT_MOST).until(() -> events("noevents", "Escalated") >= 1);
    f.api.faults(ApiFaults.NONE);
    assertThat(refused.get()).as("the queue tried again after the client gave up").isGreaterThan(3);
    f.holdsFor(Duration.ofMillis(1500), () -> events("noevents", "Escalated"), n -> n == 1);
    assertThat(events("noevents", "Escalated")).as("Events: %s", f.events("noevents")).isEqualTo(1);
  }

  /**
   * §3 step 3 / §6 "restart now ... Not a failure": a one-second API server outage (5xx, longer than the jar's client
   * retries) hits the status write of the decision that deleted the live pod for a restart request. The retried
   * reconcile must not take the pod the operator deleted itself for a failure (ContextReset, attempt 1).
   */
  @Test
  void aRestartRequestWhoseStatusWriteHitABriefOutageIsNoFailure() {
    jarLikeOperator();
    running("blip", "plain", "backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}\nresetAfter: 30m", 2);
    AtomicReference<Instant> until = briefStatusOutage("blip");
    f.annotate("blip", AgentInstance.RESTART_ANNOTATION, "r1");
    AgentInstance running = f.awaitInstance("blip", i -> at(i, 2, Phase.Running));
    f.api.faults(ApiFaults.NONE);
    assertThat(until.get()).as("the outage was hit").isNotNull();
    var st = running.getStatus();
    assertThat(st.attempt).as("not a failure: %s", f.describe("blip")).isZero();
    assertThat(st.lastFailure).isNull();
    assertThat(st.restarts).isEqualTo(1);
    assertThat(st.lastRestart.kind.toString()).isEqualTo("Manual");
  }

  /**
   * §8: with backoff Immediate the failure and the next run's start are one decision. A brief API server outage (5xx
   * longer than the jar's client retries) on its status write: the retry takes up the pod made (startsExisting, "no
   * notices: they were given when it was made") although nothing was told then. RestartStarted must be told once.
   */
  @Test
  void anImmediateRestartWhoseStatusWriteHitABriefOutageIsToldStarted() {
    jarLikeOperator();
    running("imm", "now", "backoff: {type: Immediate}\nresetAfter: 30m", 2);
    AtomicReference<Instant> until = briefStatusOutage("imm");
    f.kubelet.terminate("imm-1", 1, "Error", "network_timeout: upstream");
    AgentInstance running = f.awaitInstance("imm", i -> at(i, 2, Phase.Running));
    f.api.faults(ApiFaults.NONE);
    onceThroughout(Duration.ofMillis(1000), () -> toldCount("imm", EventReason.RestartStarted));
    assertThat(until.get()).as("the outage was hit").isNotNull();
    assertThat(running.getStatus().restarts).isEqualTo(1);
    assertThat(running.getStatus().attempt).isEqualTo(1);
    assertThat(f.podsEverCreated("imm")).containsExactly("imm-1", "imm-2");
    assertThat(running.getStatus().lastFailure.message).as("the failure as it ended: %s", f.describe("imm"))
        .isEqualTo("network_timeout: upstream");
    assertThat(running.getStatus().lastFailure.exitCode).isEqualTo(1);
    assertThat(toldCount("imm", EventReason.RestartFailed)).as("told %s", told).isEqualTo(1);
    double started = jarMetrics.registry().find("respawn.restart.attempts").tag("result", "started").counters().stream()
        .mapToDouble(c -> c.count()).sum();
    assertThat(toldCount("imm", EventReason.RestartStarted)).as("told %s; started metric %s", told, started)
        .isEqualTo(1);
  }

  /**
   * api.md §3 step 1 / §8 / §9: one edit suspends the instance and points it at a policy that does not exist. The
   * decision (it deletes the live pod) hits a brief outage on its status write; the owed write later lands. The
   * refusal must still be told (PolicyInvalid Event or notice, and its audit line), as it is without the outage.
   */
  @Test
  void aRefusalFirstShownByAnOwedDecisionIsStillTold() {
    jarLikeOperator();
    running("rs", "plain", "backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}\nresetAfter: 30m", 2);
    AtomicReference<Instant> until = briefStatusOutage("rs");
    f.edit("rs", i -> {
      i.getSpec().suspend = true;
      i.getSpec().policyRef = new PolicyReference("missing");
      return i;
    });
    f.awaitInstance("rs", i -> i.getStatus().phase == Phase.Suspended);
    // the owed write lands once the outage is over, and the refusal is told then
    await().atMost(OperatorFixture.AT_MOST).pollInterval(OperatorFixture.POLL).until(() -> !refusals.isEmpty()
        && f.events("rs").stream().anyMatch(e -> "PolicyInvalid".equals(e.getReason())
            || e.getNote() != null && e.getNote().contains("PolicyNotFound")));
    f.api.faults(ApiFaults.NONE);
    assertThat(until.get()).as("the outage was hit").isNotNull();
    assertThat(f.pods("rs")).isEmpty();
    long policyInvalid = f.events("rs").stream().filter(e -> "PolicyInvalid".equals(e.getReason())
        || e.getNote() != null && e.getNote().contains("PolicyNotFound")).count();
    assertThat(refusals).as("the refusal's audit line; told %s; Events %s", told, f.events("rs")).isNotEmpty();
    assertThat(policyInvalid).as("Events %s", f.events("rs")).isPositive();
  }

  /**
   * Kubernetes' observedGeneration: status that says it observed generation N reflects spec N. A restart request's
   * status write hits a brief outage (owed); meanwhile the user suspends the instance (generation 2). No status
   * stored with observedGeneration 2 may show the instance not Suspended.
   */
  @Test
  void anOwedDecisionIsNotWrittenAsObservingANewerSpec() {
    jarLikeOperator();
    running("og", "plain", "backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}\nresetAfter: 30m", 3);
    long gen = f.get("og").getMetadata().getGeneration();
    AtomicReference<Instant> until = new AtomicReference<>();
    ApiFaults down = outage("og", until);
    List<String> stored = new CopyOnWriteArrayList<>();
    f.api.faults(new ApiFaults() {
      @Override
      public MockResponse before(RecordedRequest r) {
        return down.before(r);
      }

      @Override
      public MockResponse after(RecordedRequest r, MockResponse handled) {
        if (ApiFaults.isStatusWrite(r, "og")) {
          try {
            JsonNode st = Serialization.jsonMapper().readTree(new String(handled.getBody().getBytes(), java.nio.charset.StandardCharsets.UTF_8)).path("status");
            stored.add(st.path("observedGeneration").asLong() + ":" + st.path("phase").asText() + ":" + handled.code());
          } catch (Exception e) {
            stored.add("?" + e);
          }
        }
        return handled;
      }
    });
    f.annotate("og", AgentInstance.RESTART_ANNOTATION, "r1");
    await().atMost(Duration.ofSeconds(5)).until(() -> until.get() != null);
    f.edit("og", i -> {
      i.getSpec().suspend = true;
      return i;
    });
    f.awaitInstance("og", i -> i.getStatus().phase == Phase.Suspended);
    long newGen = f.get("og").getMetadata().getGeneration();
    // no write of the new generation says anything but Suspended, however long it is watched
    f.holdsFor(Duration.ofMillis(1000), () -> stored.stream().filter(x -> x.startsWith(newGen + ":"))
        .allMatch(x -> x.contains(":Suspended:")), suspendedOnly -> suspendedOnly);
    f.api.faults(ApiFaults.NONE);
    assertThat(newGen).isGreaterThan(gen);
    assertThat(stored).as("statuses stored (observedGeneration:phase)")
        .filteredOn(s -> s.startsWith(newGen + ":")).allMatch(s -> s.contains(":Suspended:"));
  }

  /**
   * An owed decision whose status the API server refuses for good (a 422: e.g. an admission policy, a schema rule)
   * must not block every later decision of the instance: the user's suspend (whose own status is accepted) shows.
   */
  @Test
  void anOwedWriteThatFailsForeverDoesNotBlockTheUsersSuspend() {
    jarLikeOperator();
    running("blk", "plain", "backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}\nresetAfter: 30m", 3);
    java.util.concurrent.atomic.AtomicInteger refused = new java.util.concurrent.atomic.AtomicInteger();
    f.api.faults(new ApiFaults() {
      @Override
      public MockResponse before(RecordedRequest r) {
        if (ApiFaults.isStatusWrite(r, "blk")
            && new String(r.getBody().getBytes(), java.nio.charset.StandardCharsets.UTF_8).contains("\"Backoff\"")) {
          refused.incrementAndGet();
          return ApiFaults.status(422, "Invalid", "status.phase: Backoff refused by an admission policy");
        }
        return null;
      }
    });
    f.annotate("blk", AgentInstance.RESTART_ANNOTATION, "r1");
    await().atMost(Duration.ofSeconds(5)).until(() -> refused.get() > 0);
    f.edit("blk", i -> {
      i.getSpec().suspend = true;
      return i;
    });
    // given up after its write failed again twice (each failure waits out JOSDK's cache poll and its retry delay)
    await().atMost(Duration.ofSeconds(90)).pollInterval(OperatorFixture.POLL)
        .until(() -> f.get("blk").getStatus().phase == Phase.Suspended);
  }

  /**
   * §8 one decision, told once: an Immediate restart (failure and next start in one decision, pods made) whose status
   * write is applied but whose answer is lost (500 after the store changed). Owed, then found landed: told once, and
   * status records the run once.
   */
  @Test
  void anImmediateRestartWhoseAnswerWasLostIsToldOnceAndRecordedOnce() {
    jarLikeOperator();
    running("lost", "now", "backoff: {type: Immediate}\nresetAfter: 30m", 2);
    java.util.concurrent.atomic.AtomicInteger hit = loseStatusAnswers("lost", 3);
    f.kubelet.terminate("lost-1", 1, "Error", "network_timeout: upstream");
    f.awaitInstance("lost", i -> at(i, 2, Phase.Running));
    onceThroughout(Duration.ofMillis(2500), () -> told.stream().filter("lost:RestartStarted"::equals).count());
    f.api.faults(ApiFaults.NONE);
    var st = f.get("lost").getStatus();
    assertThat(hit.get()).isPositive();
    assertThat(f.podsEverCreated("lost")).containsExactly("lost-1", "lost-2");
    assertThat(st.restarts).isEqualTo(1);
    assertThat(st.history).hasSize(1);
    assertThat(told.stream().filter("lost:RestartStarted"::equals).count()).as("told %s", told).isEqualTo(1);
    assertThat(told.stream().filter("lost:RestartFailed"::equals).count()).as("told %s", told).isEqualTo(1);
  }
}

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
 * Operator restarts and API faults in the middle of a restart cycle (api.md §3 "once, by the new operator", §8 every
 * decision told once): a start whose telling waited for its status write, a status write that fails after the
 * decision acted on the pods.
 */
class OperatorFaultsScenarioTest extends MockClusterScenario {

  /** Every notice reason the operator's sink was told of, per instance. */
  final List<String> told = new CopyOnWriteArrayList<>();
  /** The refusals the jar-like operator's sink was told of. */
  final List<String> refusals = new CopyOnWriteArrayList<>();

  void observe() {
    f.observer = new DecisionSink() {
      @Override
      public void decided(AgentInstance instance, Decision decision, Pod pod) {
        decision.notices().forEach(n -> told.add(instance.getMetadata().getName() + ":" + n.reason()));
      }

      @Override
      public void policyRefused(AgentInstance instance, Refusal reason, String message, Instant at) {}
    };
  }

  long toldCount(String instance, EventReason reason) {
    return told.stream().filter((instance + ":" + reason)::equals).count();
  }

  long events(String instance, String reason) {
    return f.events(instance).stream().filter(e -> reason.equals(e.getReason()))
        .mapToLong(e -> e.getSeries() == null ? 1 : e.getSeries().getCount()).sum();
  }

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

  dev.respawn.observability.RestartMetrics jarMetrics;

  /** An operator whose client retries as the jar's does (OperatorCommand: withRequestRetryBackoffLimit(2)). */
  void jarLikeOperator() {
    f.stopOperator();
    var client = f.api.newOperatorClient(b -> b.withUserAgent(OperatorFixture.OPERATOR_AGENT)
        .withRequestRetryBackoffLimit(2));
    var events = new dev.respawn.observability.KubeEventRecorder(client, "respawn-test", f.settings.clock(),
        new dev.respawn.observability.KubeEventRecorder.Settings(Duration.ofMinutes(10), 4096, 1000, Duration.ZERO));
    jarMetrics = new dev.respawn.observability.RestartMetrics(new io.micrometer.core.instrument.simple.SimpleMeterRegistry());
    var reporting = new dev.respawn.observability.ReportingSink(events, jarMetrics);
    DecisionSink both = new DecisionSink() {
      @Override
      public void decided(AgentInstance instance, Decision decision, Pod pod) {
        reporting.decided(instance, decision, pod);
        decision.notices().forEach(n -> told.add(instance.getMetadata().getName() + ":" + n.reason()));
      }

      @Override
      public void policyRefused(AgentInstance instance, Refusal reason, String message, Instant at) {
        refusals.add("event+audit:" + reason);
        reporting.policyRefused(instance, reason, message, at);
      }

      @Override
      public void refusalInDecision(AgentInstance instance, Refusal reason, Instant at) {
        refusals.add("audit:" + reason);
        reporting.refusalInDecision(instance, reason, at);
      }

      @Override
      public void flushPending() {
        reporting.flushPending();
      }

      @Override
      public void close() {
        reporting.close();
      }
    };
    f.operator = new RespawnOperator(client, f.settings, both, java.util.Optional.empty()).start();
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
    f.policy("hb", "backoff: {type: Linear, initialDelay: 1h, maxDelay: 1h}\nheartbeat: {timeout: 1s}");
    f.kubelet.script("stall", Run.runForever(), Run.runForever());
    f.instance("stall", "hb");
    f.awaitInstance("stall", i -> at(i, 1, Phase.Running));
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
    f.policy("hb", "backoff: {type: Linear, initialDelay: 1h, maxDelay: 1h}\nheartbeat: {timeout: 1s}");
    f.kubelet.script("kept", Run.runForever(), Run.runForever());
    f.instance("kept", "hb");
    f.awaitInstance("kept", i -> at(i, 1, Phase.Running));
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

  /**
   * From the first status write of {@code instance} on, 1.5 s of 503s on its status writes (longer than the jar
   * client's retries); the returned reference holds when the outage ends, once it began.
   */
  AtomicReference<Instant> briefStatusOutage(String instance) {
    AtomicReference<Instant> until = new AtomicReference<>();
    f.api.faults(outage(instance, until));
    return until;
  }

  /** The faults of {@link #briefStatusOutage}, {@code until} set at the first status write. */
  static ApiFaults outage(String instance, AtomicReference<Instant> until) {
    return new ApiFaults() {
      @Override
      public MockResponse before(RecordedRequest r) {
        if (ApiFaults.isStatusWrite(r, instance)) {
          until.compareAndSet(null, Instant.now().plusMillis(1500));
          if (Instant.now().isBefore(until.get())) {
            return ApiFaults.status(503, "ServiceUnavailable", "the API server is briefly unavailable");
          }
        }
        return null;
      }
    };
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

  /**
   * What is told once: it is, and it stays once for {@code window} (a late second telling, e.g. of a retried write,
   * would show within it).
   */
  private void onceThroughout(Duration window, java.util.function.Supplier<Long> count) {
    await().atMost(OperatorFixture.AT_MOST).pollInterval(OperatorFixture.POLL).until(count::get, n -> n >= 1);
    f.holdsFor(window, count, n -> n == 1);
  }

  /** Instance {@code name} under a new policy {@code policy} ({@code spec}), its agent running for {@code runs} runs. */
  private void running(String name, String policy, String spec, int runs) {
    f.policy(policy, spec);
    f.kubelet.script(name, java.util.stream.Stream.generate(Run::runForever).limit(runs).toArray(Run[]::new));
    f.instance(name, policy);
    f.awaitInstance(name, i -> at(i, 1, Phase.Running));
  }

  /**
   * The first {@code times} status writes of the instance are applied, but their answer is lost: a 500 after the
   * store changed. Returns the count of status writes seen.
   */
  java.util.concurrent.atomic.AtomicInteger loseStatusAnswers(String instance, int times) {
    java.util.concurrent.atomic.AtomicInteger hit = new java.util.concurrent.atomic.AtomicInteger();
    f.api.faults(new ApiFaults() {
      @Override
      public MockResponse after(RecordedRequest r, MockResponse handled) {
        if (ApiFaults.isStatusWrite(r, instance)
            && hit.getAndIncrement() < times) {
          return ApiFaults.status(500, "InternalError", "the answer was lost");
        }
        return handled;
      }
    });
    return hit;
  }
}

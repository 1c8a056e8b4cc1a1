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
 * What the tests of faults in the middle of a restart cycle share: what the operator told, an operator whose client
 * retries as the jar's does, and the faults themselves (answers lost, brief outages).
 */
abstract class FaultScenario extends MockClusterScenario {

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
   * What is told once: it is, and it stays once for {@code window} (a late second telling, e.g. of a retried write,
   * would show within it).
   */
  void onceThroughout(Duration window, java.util.function.Supplier<Long> count) {
    await().atMost(OperatorFixture.AT_MOST).pollInterval(OperatorFixture.POLL).until(count::get, n -> n >= 1);
    f.holdsFor(window, count, n -> n == 1);
  }

  /** Instance {@code name} under a new policy {@code policy} ({@code spec}), its agent running for {@code runs} runs. */
  void running(String name, String policy, String spec, int runs) {
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

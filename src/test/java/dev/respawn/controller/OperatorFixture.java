package dev.respawn.controller;

import dev.respawn.testsupport.PodHistory;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentInstanceSpec;
import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.api.v1alpha1.PolicyReference;
import dev.respawn.api.v1alpha1.StatusCondition;
import dev.respawn.observability.KubeEventRecorder;
import dev.respawn.observability.ReportingSink;
import dev.respawn.observability.RestartMetrics;
import dev.respawn.testsupport.MockApi;
import dev.respawn.sandbox.SimulatedKubelet;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.events.v1.Event;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import dev.respawn.testsupport.RequestLog;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import org.awaitility.core.ConditionTimeoutException;

/**
 * One mock API server, one Respawn operator and one simulated kubelet, talking only through the
 * Kubernetes API. Tests create policies and instances and assert on what the API server holds.
 *
 * <p>The operator reports through the production sink, so its Events land on the API server. A pod
 * watch of the test's own ({@link #history}) records every pod that ever existed and every moment an
 * instance had two live pods; {@link #close()} fails the test when that happened.
 */
final class OperatorFixture implements AutoCloseable {
  static final String NS = MockApi.NAMESPACE;
  static final Duration AT_MOST = Duration.ofSeconds(30);
  static final Duration POLL = Duration.ofMillis(20);
  final MockApi api;
  final KubernetesClient client;
  final SimulatedKubelet kubelet;
  final OperatorSettings settings;
  final PodHistory history;
  RespawnOperator operator;

  OperatorFixture(OperatorSettings settings) {
    this.api = MockApi.start();
    this.client = api.client();
    this.settings = settings;
    this.history = new PodHistory(api.newClient(), NS);
    this.kubelet = new SimulatedKubelet(api.newClient(), NS).start();
    this.operator = newOperator().start();
  }

  OperatorFixture() {
    this(OperatorSettings.defaults());
  }

  /** The Event recorder and metrics of the operator started last. */
  volatile KubeEventRecorder events;
  volatile RestartMetrics metrics;
  private volatile SimpleMeterRegistry registry;
  private volatile java.util.concurrent.atomic.AtomicLong policiesJudged;
  /** The User-Agent of the operator's client: its requests can be told apart at the server. */
  static final String OPERATOR_AGENT = "respawn-operator-under-test";
  /** Told everything the operator's sink is told, after it (tests count what was told). */
  volatile DecisionSink observer = DecisionSink.NONE;

  /** An operator as the jar runs it (Events included; no rate limit on new Events, for the tests' sake). */
  RespawnOperator newOperator() {
    KubernetesClient operatorClient = api.newOperatorClient(b -> b.withUserAgent(OPERATOR_AGENT));
    KubeEventRecorder events = new KubeEventRecorder(operatorClient, "respawn-test", settings.clock(),
        new KubeEventRecorder.Settings(Duration.ofMinutes(10), 4096, 1000, Duration.ZERO));
    java.util.concurrent.atomic.AtomicLong policiesJudged = new java.util.concurrent.atomic.AtomicLong();
    this.policiesJudged = policiesJudged;
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    RestartMetrics metrics = new RestartMetrics(registry);
    this.registry = registry;
    ReportingSink reporting = new ReportingSink(events, metrics);
    this.events = events;
    this.metrics = metrics;
    DecisionSink sink = new DecisionSink() {
      @Override
      public void decided(AgentInstance instance, dev.respawn.policy.Decision decision, Pod pod) {
        reporting.decided(instance, decision, pod);
        observer.decided(instance, decision, pod);
      }

      @Override
      public void policyRefused(AgentInstance instance, Refusal reason, String message, java.time.Instant at) {
        reporting.policyRefused(instance, reason, message, at);
        observer.policyRefused(instance, reason, message, at);
      }

      @Override
      public void refusalInDecision(AgentInstance instance, Refusal reason, java.time.Instant at) {
        reporting.refusalInDecision(instance, reason, at);
      }

      @Override
      public void policyRejected(dev.respawn.api.v1alpha1.AgentRestartPolicy policy, Refusal reason, String message, java.time.Instant at) {
        reporting.policyRejected(policy, reason, message, at);
      }

      @Override
      public void decisionTook(Duration duration) {
        reporting.decisionTook(duration);
      }

      @Override
      public void forget(AgentInstance instance) {
        reporting.forget(instance);
      }

      @Override
      public void forget(dev.respawn.api.v1alpha1.AgentRestartPolicy policy) {
        reporting.forget(policy);
      }

      @Override
      public void dependencies(dev.respawn.api.v1alpha1.AgentRestartPolicy policy,
          List<dev.respawn.policy.DependencyCircuit> circuits,
          Map<String, List<dev.respawn.policy.DependencyCircuit.Transition>> transitions) {
        reporting.dependencies(policy, circuits, transitions);
        policiesJudged.incrementAndGet();
      }

      @Override
      public void flushPending() {
        reporting.flushPending();
        observer.flushPending();
      }

      @Override
      public void close() {
        reporting.close();
      }
    };
    return new RespawnOperator(operatorClient, settings, sink, Optional.empty());
  }

  /**
   * How many reconciles of the operator started last reached a decision (its respawn.decision.duration timer): a
   * test of what an operator does not write first shows that it did look.
   */
  long decisions() {
    return registry.get("respawn.decision.duration").timer().count();
  }

  /** Waits until the operator started last has reached at least {@code count} decisions. */
  void awaitDecisions(long count) {
    await("decisions of the operator started last").atMost(AT_MOST).pollInterval(POLL)
        .until(this::decisions, n -> n >= count);
  }

  /**
   * Waits until the operator started last has judged policies at least {@code count} times (each reconcile of a
   * policy ends by telling its circuits, also when it has none).
   */
  void awaitPoliciesJudged(long count) {
    await("policy reconciles of the operator started last").atMost(AT_MOST).pollInterval(POLL)
        .until(() -> policiesJudged.get(), n -> n >= count);
  }

  /** The operator's writes (POST, PUT, PATCH, DELETE) since the request log was last cleared. */
  List<RequestLog.Request> operatorWrites() {
    return api.requests().writes().stream().filter(r -> OPERATOR_AGENT.equals(r.userAgent())).toList();
  }

  /** Stops the operator abruptly and starts a fresh one against the same API server. */
  void restartOperator() {
    stopOperator();
    startOperator();
  }

  /** Stops the operator; the world goes on without it until {@link #startOperator()}. */
  void stopOperator() {
    operator.close();
  }

  /** Starts a fresh operator (after {@link #stopOperator()}). */
  void startOperator() {
    operator = newOperator().start();
  }

  AgentRestartPolicy policy(String name, String yamlSpec) {
    AgentRestartPolicy p = new AgentRestartPolicy();
    p.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(NS).build());
    p.setSpec(yamlSpec == null ? new AgentRestartPolicySpec()
        : Serialization.unmarshal(yamlSpec, AgentRestartPolicySpec.class));
    return client.resource(p).create();
  }

  AgentInstance instance(String name, String policy) {
    return instance(name, policy, spec -> {});
  }

  /** An instance with one container "agent"; {@code customize} may change the spec before it is created. */
  AgentInstance instance(String name, String policy, Consumer<AgentInstanceSpec> customize) {
    AgentInstance i = new AgentInstance();
    i.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(NS).build());
    AgentInstanceSpec spec = new AgentInstanceSpec();
    spec.policyRef = policy == null ? null : new PolicyReference(policy);
    spec.task = "TASK-31-1";
    spec.template = new PodTemplateSpecBuilder().withNewSpec().addNewContainer().withName("agent")
        .withImage("registry.example/agents/coder:1.4").endContainer().endSpec().build();
    customize.accept(spec);
    i.setSpec(spec);
    return client.resource(i).create();
  }

  AgentInstance get(String name) {
    return client.resources(AgentInstance.class).inNamespace(NS).withName(name).get();
  }

  AgentRestartPolicy getPolicy(String name) {
    return client.resources(AgentRestartPolicy.class).inNamespace(NS).withName(name).get();
  }

  /** The instance's pods the API server holds now. */
  List<Pod> pods(String instance) {
    return client.pods().inNamespace(NS).withLabel(AgentInstance.INSTANCE_LABEL, instance).list().getItems();
  }

  Pod pod(String name) {
    return client.pods().inNamespace(NS).withName(name).get();
  }

  Lease lease(String name) {
    return client.leases().inNamespace(NS).withName(name).get();
  }

  /** Names of every pod of the instance that ever existed, in order (the test's own pod watch). */
  List<String> podsEverCreated(String instance) {
    return history.created(instance);
  }

  AgentInstance awaitInstance(String name, Predicate<AgentInstance> condition) {
    try {
      return await().atMost(AT_MOST).pollInterval(POLL).until(() -> get(name),
          i -> i != null && i.getStatus() != null && condition.test(i));
    } catch (ConditionTimeoutException e) {
      throw new AssertionError(e.getMessage() + "\n" + describe(name), e);
    }
  }

  /** The instance's status and pods as YAML, for a failure message. */
  String describe(String name) {
    AgentInstance i = get(name);
    StringBuilder sb = new StringBuilder("status of ").append(name).append(":\n")
        .append(i == null ? "(no instance)" : Serialization.asYaml(i.getStatus()));
    sb.append("pods ever created: ").append(podsEverCreated(name)).append('\n');
    for (Pod p : pods(name)) {
      sb.append("pod ").append(p.getMetadata().getName()).append(":\n").append(Serialization.asYaml(p.getStatus()));
    }
    return sb.toString();
  }

  AgentRestartPolicy awaitPolicy(String name, Predicate<AgentRestartPolicy> condition) {
    return await().atMost(AT_MOST).pollInterval(POLL).until(() -> getPolicy(name),
        p -> p != null && p.getStatus() != null && condition.test(p));
  }

  /** Waits until {@code condition} has held for the whole of {@code period} (bounded). */
  /**
   * Policy "hb" (heartbeat timeout 1 s, quick backoff) and an instance of it whose run renews every 100 ms, once
   * its first run is Running and Healthy; the instance as created.
   */
  AgentInstance healthyHeartbeatingRun(String name) {
    policy("hb", """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
        heartbeat: {timeout: 1s}
        """);
    kubelet.script(name, dev.respawn.sandbox.Run.runForever().heartbeat(Duration.ofMillis(100)));
    AgentInstance created = instance(name, "hb");
    awaitInstance(name, i -> at(i, 1, Phase.Running) && hasCondition(i, "Ready", "True", "Healthy"));
    return created;
  }

  /** The condition holds at every poll from now for the whole period (one that finds it false fails at once). */
  <T> T holdsFor(Duration period, Supplier<T> value, Predicate<T> condition) {
    java.util.concurrent.atomic.AtomicReference<T> broke = new java.util.concurrent.atomic.AtomicReference<>();
    try {
      return await().failFast("the condition did not hold from the start of the period", () -> {
        T seen = value.get();
        if (condition.test(seen)) {
          return false;
        }
        broke.set(seen);
        return true;
      }).during(period).atMost(period.plus(AT_MOST)).pollInterval(Duration.ofMillis(50)).until(value::get, condition);
    } catch (org.awaitility.core.TerminalFailureException e) {
      T seen = broke.get();
      throw new AssertionError("the condition did not hold from the start of the period; it broke on:\n"
          + (seen instanceof io.fabric8.kubernetes.api.model.HasMetadata o
              ? io.fabric8.kubernetes.client.utils.Serialization.asYaml(o) : String.valueOf(seen)), e);
    }
  }

  void annotate(String name, String key, String value) {
    edit(name, i -> {
      Map<String, String> annotations = i.getMetadata().getAnnotations() == null ? new HashMap<>()
          : new HashMap<>(i.getMetadata().getAnnotations());
      annotations.put(key, value);
      i.getMetadata().setAnnotations(annotations);
      return i;
    });
  }

  /** Edits as a user would: read, change, write; a conflict with the operator's status write is retried. */
  AgentInstance edit(String name, UnaryOperator<AgentInstance> change) {
    return await().atMost(AT_MOST).pollInterval(POLL).ignoreExceptionsMatching(e -> e instanceof
        io.fabric8.kubernetes.client.KubernetesClientException k && k.getCode() == 409)
        .until(() -> client.resources(AgentInstance.class).inNamespace(NS).withName(name).edit(change),
            java.util.Objects::nonNull);
  }

  AgentRestartPolicy editPolicy(String name, UnaryOperator<AgentRestartPolicy> change) {
    return client.resources(AgentRestartPolicy.class).inNamespace(NS).withName(name).edit(change);
  }

  /** Waits until an Event regarding this object satisfies the requirement (Events have a thread of their own). */
  void awaitEvent(String regardingName, Consumer<Event> requirement) {
    await().atMost(AT_MOST).untilAsserted(() -> assertThat(events(regardingName)).anySatisfy(requirement));
  }

  /** The events.k8s.io/v1 Events regarding this object. */
  List<Event> events(String regardingName) {
    return client.events().v1().events().inNamespace(NS).list().getItems().stream()
        .filter(e -> e.getRegarding() != null && regardingName.equals(e.getRegarding().getName())).toList();
  }

  static StatusCondition condition(AgentInstance i, String type) {
    return Conditions.find(i.getStatus().conditions, type);
  }

  static StatusCondition condition(AgentRestartPolicy p, String type) {
    return Conditions.find(p.getStatus().conditions, type);
  }

  /** True when the instance is on this run in this phase. */
  static boolean at(AgentInstance i, int run, Phase phase) {
    return i.getStatus().run != null && i.getStatus().run == run && i.getStatus().phase == phase;
  }

  /** True when the instance's condition has this status and reason. */
  static boolean hasCondition(AgentInstance i, String type, String status, String reason) {
    StatusCondition c = condition(i, type);
    return c != null && status.equals(c.status) && reason.equals(c.reason);
  }

  /** Stops everything; fails when an instance ever had two live pods or the kubelet hit errors. */
  @Override
  public void close() {
    try {
      assertThat(history.violations()).as("moments an instance had two live pods").isEmpty();
      assertThat(kubelet.errors()).as("simulated kubelet errors").isEmpty();
    } finally {
      operator.close();
      history.close();
      kubelet.close();
      api.close();
    }
  }
}

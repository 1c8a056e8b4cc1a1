package dev.respawn.bench;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentInstanceSpec;
import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.api.v1alpha1.PolicyReference;
import dev.respawn.controller.OperatorSettings;
import dev.respawn.controller.RespawnOperator;
import dev.respawn.observability.KubeEventRecorder;
import dev.respawn.observability.ReportingSink;
import dev.respawn.observability.RestartMetrics;
import dev.respawn.testsupport.MockApi;
import dev.respawn.sandbox.PodStatuses;
import dev.respawn.sandbox.Run;
import dev.respawn.sandbox.SimulatedKubelet;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Consumer;
import java.util.stream.IntStream;

/**
 * The world of the latency measurements, on one mock API server: the Respawn operator (a client of its
 * own, User-Agent {@value #OPERATOR}, the production sink, watching namespace {@value #AGENTS}) with its
 * instances, a simulated kubelet per namespace that starts every new pod, and in namespace {@value #BARE}
 * the bare loop with as many pods as the fleet has instances, so both see the same store.
 *
 * <p>Groups of instances: {@code f-*} (Immediate restarts, reaction latency and mass failure), {@code p-*}
 * (a Linear backoff with jitter, punctuality) and {@code e-*} (Immediate, a short resetAfter: a whole failure
 * sequence is short, for counting writes).
 */
final class AgentFleet implements AutoCloseable {
  static final String AGENTS = "agents";
  static final String BARE = "bare";
  static final String OPERATOR = "respawn-operator";
  static final String HARNESS = "bench-harness";
  static final String KUBELET = "simulated-kubelet";
  static final String BARE_LOOP = "bare-loop";
  static final String IMMEDIATE = "immediate";
  static final String BACKOFF = "linear-jitter";
  static final String ECONOMY = "immediate-short-reset";
  static final Duration SETTLE = Duration.ofSeconds(60);

  final MockApi api;
  final KubernetesClient harness;
  final Observer observer;
  final CountingSink sink;
  final KubernetesClient operatorClient;
  final List<String> immediate;
  final List<String> punctual;
  final List<String> economy;
  final List<String> bare;
  private final SimulatedKubelet kubelet;
  private final SimulatedKubelet bareKubelet;
  private final BareLoop bareLoop;
  private final RespawnOperator operator;

  private AgentFleet(Plan plan) {
    api = MockApi.start();
    harness = api.newClient(b -> b.withUserAgent(HARNESS));
    observer = new Observer(api.newClient(b -> b.withUserAgent("observer")), AGENTS).start();
    kubelet = new SimulatedKubelet(api.newClient(b -> b.withUserAgent(KUBELET)), AGENTS).start();
    bareKubelet = new SimulatedKubelet(api.newClient(b -> b.withUserAgent(KUBELET)), BARE).start();
    bareLoop = new BareLoop(api.newClient(b -> b.withUserAgent(BARE_LOOP)), BARE).start();
    policy(IMMEDIATE, "backoff: {type: Immediate}\nmaxRetries: 1000\ncircuitBreaker: {failureThreshold: 100}\n"
        + "heartbeat: {timeout: 30m}\n");
    policy(BACKOFF, "backoff: {type: Linear, initialDelay: 1s, maxDelay: 10s, jitter: 0.5}\nmaxRetries: 1000\n"
        + "resetAfter: 1s\ncircuitBreaker: {failureThreshold: 100}\n");
    // heartbeats as users run them (api.md §5: renewals every 10 s, timeout 60 s): a heartbeat changes which
    // writes a restart takes
    policy(ECONOMY, "backoff: {type: Immediate}\nmaxRetries: 1000\nresetAfter: " + ApiEconomy.ECONOMY_RESET + "\n"
        + "circuitBreaker: {failureThreshold: 100}\nheartbeat: {timeout: 60s}\n");
    operatorClient = api.newClient(b -> b.withUserAgent(OPERATOR));
    sink = productionSink(operatorClient);
    operator = new RespawnOperator(operatorClient, OperatorSettings.defaults().withNamespaces(Set.of(AGENTS)), sink,
        Optional.empty()).start();
    immediate = names("f-", plan.fleet());
    punctual = names("p-", plan.punctual());
    economy = names("e-", plan.economy());
    bare = names("b-", plan.fleet());
  }

  /** Starts the world and waits until every instance and every bare pod runs. */
  static AgentFleet start(Plan plan) {
    AgentFleet f = new AgentFleet(plan);
    try {
      long t0 = System.nanoTime();
      inParallel(f.immediate, name -> f.instance(name, IMMEDIATE));
      inParallel(f.punctual, name -> f.instance(name, BACKOFF));
      inParallel(f.economy, name -> {
        // each run's agent renews its Lease as it starts and every 10 s, as the agent helper does
        f.kubelet.script(name, java.util.stream.Stream.generate(
            () -> Run.runForever().heartbeat(BeatingKubelet.RENEW_EVERY)).limit(ECONOMY_RUNS).toArray(Run[]::new));
        f.instance(name, ECONOMY);
      });
      inParallel(f.bare, name -> f.harness.pods().inNamespace(BARE).resource(BareLoop.pod(BARE, name, 1)).create());
      List<String> all = new ArrayList<>(f.immediate);
      all.addAll(f.punctual);
      all.addAll(f.economy);
      Observer.require("every instance running", Duration.ofMinutes(5),
          () -> all.stream().allMatch(n -> f.settled(n, Observer.podName(n, 1))));
      Observer.require("every bare pod running", Duration.ofMinutes(2),
          () -> f.bare.stream().allMatch(n -> f.bareSettled(n, Observer.podName(n, 1))));
      System.out.printf("  fleet of %d instances (+%d, +%d) and %d bare pods running after %s%n", f.immediate.size(),
          f.punctual.size(), f.economy.size(), f.bare.size(), Results.seconds(System.nanoTime() - t0));
      return f;
    } catch (RuntimeException e) {
      f.close();
      throw e;
    }
  }

  /** The production sink (Events with the default rate limits, metrics), counting reconciles. */
  static CountingSink productionSink(KubernetesClient client) {
    KubeEventRecorder events = new KubeEventRecorder(client, "respawn-bench", java.time.InstantSource.system());
    return new CountingSink(new ReportingSink(events, new RestartMetrics(new SimpleMeterRegistry())));
  }

  private void policy(String name, String yaml) {
    AgentRestartPolicy p = new AgentRestartPolicy();
    p.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(AGENTS).build());
    p.setSpec(Serialization.unmarshal(yaml, AgentRestartPolicySpec.class));
    harness.resource(p).create();
  }

  private void instance(String name, String policy) {
    harness.resource(instance(AGENTS, name, policy)).create();
  }

  /** An instance with one container "agent", like the examples. */
  static AgentInstance instance(String namespace, String name, String policy) {
    AgentInstance i = new AgentInstance();
    i.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(namespace).build());
    AgentInstanceSpec spec = new AgentInstanceSpec();
    spec.policyRef = policy == null ? null : new PolicyReference(policy);
    spec.task = "TASK-31-1";
    spec.template = new PodTemplateSpecBuilder().withNewSpec().addNewContainer().withName("agent")
        .withImage("registry.example/agents/coder:1.4").endContainer().endSpec().build();
    i.setSpec(spec);
    return i;
  }

  static List<String> names(String prefix, int count) {
    return IntStream.range(0, count).mapToObj(i -> prefix + i).toList();
  }

  /** Runs the action for every name on 4 threads (the mock serialises requests; more do not help). */
  static void inParallel(List<String> names, Consumer<String> action) {
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (String n : names) {
        futures.add(pool.submit(() -> action.accept(n)));
      }
      for (Future<?> f : futures) {
        f.get();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    } catch (java.util.concurrent.ExecutionException e) {
      throw new IllegalStateException(e.getCause());
    } finally {
      pool.shutdownNow();
    }
  }

  /** The running pod of an instance (namespace {@value #AGENTS} or {@value #BARE}), as the observer sees it. */
  Pod livePod(String namespace, String instance) {
    List<Pod> pods = observer.podsOf(namespace, instance);
    Pod last = pods.isEmpty() ? null : pods.get(pods.size() - 1);
    if (last == null || !Observer.running(last)) {
      throw new IllegalStateException("no running pod of " + namespace + "/" + instance + ": " + pods.stream()
          .map(p -> p.getMetadata().getName() + "=" + p.getStatus().getPhase()).toList());
    }
    return last;
  }

  /** Runs scripted for each economy instance: its first and every restart of the economy's measurement. */
  static final int ECONOMY_RUNS = 8;

  /** Ends an economy instance's pod as its kubelet would: the container exits 1, its heartbeats stop. */
  void failScripted(Pod live) {
    kubelet.terminate(live.getMetadata().getName(), 1, "Error", "bench: agent crashed");
  }

  /**
   * Ends the pod as a kubelet would (its container exits 1, phase Failed), in one status write of the
   * harness's client; returns {@link System#nanoTime()} just before the write was sent.
   */
  long fail(Pod live) {
    Pod p = Serialization.clone(live);
    PodStatuses.terminated(p, null, 1, "Error", "bench: agent crashed", Instant.now());
    long t0 = System.nanoTime();
    harness.pods().inNamespace(p.getMetadata().getNamespace()).resource(p).updateStatus();
    return t0;
  }

  /** The instance runs {@code pod}, its only pod, and its status says so. */
  boolean settled(String instance, String pod) {
    return onlyRunning(observer.podsOf(AGENTS, instance), pod)
        && showsRunning(observer.instance(instance).orElse(null), pod);
  }

  /** {@code pod} is the only pod listed, and it runs. */
  private static boolean onlyRunning(List<Pod> pods, String pod) {
    return pods.size() == 1 && pods.get(0).getMetadata().getName().equals(pod) && Observer.running(pods.get(0));
  }

  /** The instance's status shows it Running on {@code pod}. */
  private static boolean showsRunning(AgentInstance i, String pod) {
    return i != null && i.getStatus() != null && i.getStatus().phase == Phase.Running
        && pod.equals(i.getStatus().currentPod);
  }

  /** As {@link #settled}, and the failure sequence ended (attempt 0). */
  boolean recovered(String instance, String pod) {
    return settled(instance, pod) && observer.instance(instance).map(AgentInstance::getStatus)
        .filter(s -> s.attempt == null || s.attempt == 0).isPresent();
  }

  /**
   * Settles the harness's informers saw but the server does not show, or the reverse: how often a settle had to
   * ask the server. fabric8's informers end each watch after 5 to 10 minutes and resume it at their last
   * resourceVersion; a real API server replays what happened in between, the mock starts afresh, so an event
   * written in that gap never reaches the informer (its cache keeps a deleted pod, or an old phase, for good).
   */
  final java.util.concurrent.atomic.AtomicInteger settledOnlyOnServer = new java.util.concurrent.atomic.AtomicInteger();

  /** As {@link #settled} or {@link #bareSettled}, asked of the server (one list, one get), not of the caches. */
  boolean settledOnServer(String namespace, String instance, String pod) {
    if (!onlyRunning(harness.pods().inNamespace(namespace).withLabel(AgentInstance.INSTANCE_LABEL, instance).list()
        .getItems(), pod)) {
      return false;
    }
    return namespace.equals(BARE)
        || showsRunning(harness.resources(AgentInstance.class).inNamespace(AGENTS).withName(instance).get(), pod);
  }

  /** What the harness and the server show of an instance (of either namespace), for a failure message. */
  String describe(String namespace, String instance) {
    return observer.describe(namespace, instance) + (namespace.equals(BARE) ? "; bare loop's failed replacements: "
        + bareLoop.errors() : "");
  }

  /** The bare-loop "instance" runs {@code pod}, its only pod. */
  boolean bareSettled(String instance, String pod) {
    return onlyRunning(observer.podsOf(BARE, instance), pod);
  }

  /**
   * Deletes the Events of the instances' namespace. The mock keeps Events for ever (a real API server
   * drops them after an hour), and the store's size sets the mock's cost per request: between
   * measurements this keeps the store the same size, so they stay comparable.
   */
  void forgetEvents() {
    MassFailure.awaitQuiet(this, Duration.ofMillis(500), Duration.ofMinutes(1));
    harness.events().v1().events().inNamespace(AGENTS).delete();
    harness.v1().events().inNamespace(AGENTS).delete();
  }

  /** What the server stores now (finished pods included), for the notes: figures compare at equal store sizes. */
  String storeDescription() {
    int instances = harness.resources(AgentInstance.class).inAnyNamespace().list().getItems().size();
    int agentPods = harness.pods().inNamespace(AGENTS).list().getItems().size();
    int barePods = harness.pods().inNamespace(BARE).list().getItems().size();
    int leases = harness.leases().inAnyNamespace().list().getItems().size();
    int events = harness.events().v1().events().inAnyNamespace().list().getItems().size()
        + harness.v1().events().inAnyNamespace().list().getItems().size();
    return String.format(java.util.Locale.ROOT, "the server stored %,d objects: %,d AgentInstances, %,d + %,d pods "
        + "(Respawn's + the bare loop's), %,d Leases, %,d Events", instances + agentPods + barePods + leases + events,
        instances, agentPods, barePods, leases, events);
  }

  RespawnOperator operator() {
    return operator;
  }

  long operatorWrites() {
    return api.requests().writeCount(OPERATOR);
  }

  @Override
  public void close() {
    for (AutoCloseable c : new AutoCloseable[] {operator, bareLoop, kubelet, bareKubelet, observer, api}) {
      try {
        if (c != null) {
          c.close();
        }
      } catch (Exception e) {
        System.out.println("  (closing " + c.getClass().getSimpleName() + ": " + e + ")");
      }
    }
  }
}

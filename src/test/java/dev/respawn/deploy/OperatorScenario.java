package dev.respawn.deploy;

import static org.awaitility.Awaitility.await;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentInstanceSpec;
import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.api.v1alpha1.PolicyReference;
import dev.respawn.controller.LeaderElection;
import dev.respawn.controller.OperatorSettings;
import dev.respawn.controller.RespawnOperator;
import dev.respawn.controller.TolerantResources;
import dev.respawn.deploy.DeployManifests.Access;
import dev.respawn.deploy.DeployManifests.Grant;
import dev.respawn.observability.KubeEventRecorder;
import dev.respawn.observability.ReportingSink;
import dev.respawn.observability.RestartMetrics;
import dev.respawn.testsupport.MockApi;
import dev.respawn.sandbox.Run;
import dev.respawn.sandbox.SimulatedKubelet;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.api.model.authorization.v1.ResourceRuleBuilder;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectRulesReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectRulesReviewStatusBuilder;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.Interceptor;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.net.URI;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;

/**
 * A representative run of the operator as deployed (every namespace watched, leader-elected, Events and
 * metrics on) against the mock API server, with a simulated kubelet. Every HTTP request of the operator's
 * own client is recorded on the client side (an interceptor), so the test's and the kubelet's requests
 * (other clients) never mix in.
 *
 * <p>What it exercises: a policy and its status; a pod create the server fails (a failed reconcile,
 * retried); a status write that meets a conflict (the instance is read); an instance that fails once, is restarted after a backoff
 * and recovers (pods created, the finished pod deleted, the heartbeat Lease created, status patched,
 * Events); its pod deleted by someone else (the operator reads the pod directly before declaring it gone); an
 * agent that stops renewing (its Lease read before the run is ended for a stale heartbeat);
 * an instance whose policy does not exist, refused again after a spec change with the same Event (its series is
 * patched); a namespace where events.k8s.io/v1 answers 404 (the core/v1 fallback, created then patched);
 * JOSDK's leader election (its SelfSubjectRulesReview, answered from the RBAC of deploy/, then the
 * leader Lease created and renewed).
 */
final class OperatorScenario implements AutoCloseable {
  static final String NS = MockApi.NAMESPACE;
  /** A namespace whose events.k8s.io/v1 endpoint answers 404, as on clusters that do not serve it. */
  static final String LEGACY_NS = "legacy";
  static final Duration TIMEOUT = Duration.ofSeconds(30);

  /** One request of the operator's client. */
  record Call(String method, URI uri) {
    Access access() {
      return Access.of(method, uri);
    }

    @Override
    public String toString() {
      return method + " " + uri.getRawPath() + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery());
    }
  }

  final MockApi api = MockApi.start();
  final List<Call> calls = new CopyOnWriteArrayList<>();
  final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  final List<SelfSubjectRulesReview> reviews = new CopyOnWriteArrayList<>();
  private final List<Grant> grants;
  private KubernetesClient operatorClient;
  private SimulatedKubelet kubelet;
  private RespawnOperator operator;

  /** @param grants what the operator's ServiceAccount may do (the SelfSubjectRulesReview answer) */
  OperatorScenario(List<Grant> grants) {
    this.grants = grants;
  }

  /** Runs the whole scenario; afterwards {@link #calls} holds every request the operator made. */
  OperatorScenario run() {
    api.server().expect().post().withPath("/apis/authorization.k8s.io/v1/selfsubjectrulesreviews")
        .andReply(201, request -> review(request.getUtf8Body())).always();
    api.server().expect().post().withPath("/apis/events.k8s.io/v1/namespaces/" + LEGACY_NS + "/events")
        .andReturn(404, new StatusBuilder().withStatus("Failure").withCode(404).withReason("NotFound")
            .withMessage("the server could not find the requested resource").build()).always();
    // the first pod create fails with a server error: a failed reconcile, retried by JOSDK
    api.server().expect().post().withPath("/api/v1/namespaces/" + NS + "/pods")
        .andReturn(500, new StatusBuilder().withStatus("Failure").withCode(500).withReason("InternalError")
            .withMessage("etcdserver: request timed out").build()).once();
    KubernetesClient client = api.client();
    kubelet = new SimulatedKubelet(api.newClient(), NS).start();
    operatorClient = api.server().createClient(b -> b
        .withConfig(new ConfigBuilder(client.getConfiguration()).withRequestRetryBackoffLimit(0).build())
        .withKubernetesSerialization(TolerantResources.forOperator())
        .withHttpClientBuilderConsumer(h -> h.addOrReplaceInterceptor("respawn-rbac-recorder", new Interceptor() {
          @Override
          public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
            calls.add(new Call(request.method(), request.uri()));
          }
        })));
    // as deployed: series updates at once (the code path, not the interval, is what needs permissions)
    KubeEventRecorder events = new KubeEventRecorder(operatorClient, "respawn-operator-0", InstantSource.system(),
        new KubeEventRecorder.Settings(Duration.ofMinutes(10), 4096, 1000, Duration.ZERO));
    operator = new RespawnOperator(operatorClient, OperatorSettings.defaults(),
        new ReportingSink(events, new RestartMetrics(registry)),
        Optional.of(new LeaderElection(RespawnOperator.LEADER_LEASE, DeployManifests.OPERATOR_NAMESPACE,
            "respawn-operator-0", Duration.ofSeconds(3), Duration.ofSeconds(2), Duration.ofMillis(200), false)),
        Optional.of(registry)).start();

    // the first status write of coder meets a conflict (someone changed it since it was read): the operator reads
    // the instance to tell whether its own write had landed
    api.server().expect().patch().withPath("/apis/respawn.dev/v1alpha1/namespaces/" + NS + "/agentinstances/coder/status")
        .andReturn(409, new StatusBuilder().withStatus("Failure").withCode(409).withReason("Conflict")
            .withMessage("the object has been modified; please apply your changes to the latest version and try again")
            .build()).once();
    // a failure, a restart after a backoff, a recovery; the finished pod is cleaned up
    policy(NS, "fast", """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
        resetAfter: 300ms
        """);
    kubelet.script("coder", Run.exit(1, "Error", "network_timeout: upstream"), Run.runForever());
    instance(NS, "coder", "fast");
    awaitInstance("coder", i -> Integer.valueOf(2).equals(i.getStatus().run) && i.getStatus().phase == Phase.Running
        && Integer.valueOf(0).equals(i.getStatus().attempt));
    await().atMost(TIMEOUT).until(() -> client.pods().inNamespace(NS).withName("coder-1").get() == null);
    awaitCall(c -> c.method().equals("GET") && c.uri().getPath().endsWith("/namespaces/" + NS + "/agentinstances/coder"));

    // someone else deletes the running pod: the operator looks it up directly, then restarts
    kubelet.deleteBySomeoneElse("coder-2");
    awaitInstance("coder", i -> Integer.valueOf(3).equals(i.getStatus().run) && i.getStatus().phase == Phase.Running);

    // the agent's Lease says Stalled: the run ends, and the next run's pod must not inherit that verdict, so the
    // operator removes it from the Lease (a JSON Patch, no read)
    policy(NS, "beating", """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
        heartbeat: {timeout: 20s}
        """);
    kubelet.script("stuck", Run.runForever(), Run.runForever());
    instance(NS, "stuck", "beating");
    awaitInstance("stuck", i -> Integer.valueOf(1).equals(i.getStatus().run));
    kubelet.renew("stuck", "stuck-1", "Healthy");
    awaitInstance("stuck", i -> i.getStatus().phase == Phase.Running);
    kubelet.renew("stuck", "stuck-1", "Stalled");
    awaitCall(c -> c.method().equals("PATCH") && c.uri().getPath().endsWith("/namespaces/" + NS + "/leases/stuck"));
    await().atMost(TIMEOUT).until(() -> !api.client().leases().inNamespace(NS).withName("stuck").get().getMetadata()
        .getAnnotations().containsKey("respawn.dev/health"));

    // the agent stops renewing: before the run is ended for a stale heartbeat, the Lease is read from the server
    policy(NS, "brief", """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
        heartbeat: {timeout: 1s, startupGrace: 1s}
        """);
    kubelet.script("quiet", Run.runForever(), Run.runForever());
    instance(NS, "quiet", "brief");
    awaitInstance("quiet", i -> Integer.valueOf(1).equals(i.getStatus().run));
    kubelet.renew("quiet", "quiet-1", "Healthy");
    awaitCall(c -> c.method().equals("GET") && c.uri().getPath().endsWith("/namespaces/" + NS + "/leases/quiet"));

    // a mutating webhook replaced the labels of a pod (its create answers without them): the operator labels its
    // own new pod again (a merge patch), or no watch would show it
    api.faults(new dev.respawn.testsupport.ApiFaults() {
      @Override
      public io.fabric8.mockwebserver.http.MockResponse after(io.fabric8.mockwebserver.http.RecordedRequest r,
          io.fabric8.mockwebserver.http.MockResponse handled) {
        if (!"POST".equals(r.getMethod()) || !r.getPath().endsWith("/namespaces/" + NS + "/pods")) {
          return handled;
        }
        io.fabric8.kubernetes.api.model.Pod pod = Serialization.unmarshal(new String(handled.getBody().getBytes(),
            java.nio.charset.StandardCharsets.UTF_8), io.fabric8.kubernetes.api.model.Pod.class);
        if (!"relabelled-1".equals(pod.getMetadata().getName())) {
          return handled;
        }
        pod.getMetadata().setLabels(Map.of("sidecar.example/injected", "true"));
        return handled.setBody(Serialization.asJson(pod));
      }
    });
    policy(NS, "plain", "backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}\n");
    kubelet.script("relabelled", Run.runForever());
    instance(NS, "relabelled", "plain");
    awaitCall(c -> c.method().equals("PATCH") && c.uri().getPath().endsWith("/namespaces/" + NS + "/pods/relabelled-1"));
    api.faults(dev.respawn.testsupport.ApiFaults.NONE);

    // the same Event twice: its series is patched
    instance(NS, "ghost", "missing");
    awaitInstance("ghost", i -> i.getStatus().conditions != null && !i.getStatus().conditions.isEmpty());
    awaitCall(c -> c.method().equals("POST") && c.uri().getPath().endsWith("/namespaces/" + NS + "/events"));
    newTask(NS, "ghost"); // a new generation: status records the refusal again, and it is told again
    awaitCall(c -> c.method().equals("PATCH") && c.uri().getPath().contains("/apis/events.k8s.io/"));

    // a cluster without events.k8s.io/v1: core/v1 Events, created, then their series patched
    instance(LEGACY_NS, "old", "missing");
    awaitInstance(LEGACY_NS, "old", i -> i.getStatus().conditions != null && !i.getStatus().conditions.isEmpty());
    awaitCall(c -> c.method().equals("POST") && c.uri().getPath().equals("/api/v1/namespaces/" + LEGACY_NS
        + "/events"));
    newTask(LEGACY_NS, "old");
    awaitCall(c -> c.method().equals("PATCH") && c.uri().getPath().startsWith("/api/v1/namespaces/" + LEGACY_NS
        + "/events/"));

    // the leader Lease was created and has been renewed
    awaitCall(c -> c.method().equals("PATCH") && c.uri().getPath().endsWith("/leases/"
        + RespawnOperator.LEADER_LEASE));
    return this;
  }

  private SelfSubjectRulesReview review(String body) {
    SelfSubjectRulesReview asked = Serialization.unmarshal(body, SelfSubjectRulesReview.class);
    String ns = asked.getSpec() == null ? null : asked.getSpec().getNamespace();
    List<io.fabric8.kubernetes.api.model.authorization.v1.ResourceRule> rules = new ArrayList<>();
    for (Grant g : grants) {
      if (g.nonResourceURLs().isEmpty() && g.namespace().map(n -> n.equals(ns)).orElse(true)) {
        rules.add(new ResourceRuleBuilder().withApiGroups(List.copyOf(g.apiGroups()))
            .withResources(List.copyOf(g.resources())).withVerbs(List.copyOf(g.verbs()))
            .withResourceNames(List.copyOf(g.resourceNames())).build());
      }
    }
    asked.setStatus(new SubjectRulesReviewStatusBuilder().withIncomplete(false).withResourceRules(rules).build());
    reviews.add(asked);
    return asked;
  }

  void awaitCall(Predicate<Call> which) {
    await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(20)).until(() -> calls.stream().anyMatch(which));
  }

  void awaitInstance(String name, Predicate<AgentInstance> condition) {
    awaitInstance(NS, name, condition);
  }

  void awaitInstance(String ns, String name, Predicate<AgentInstance> condition) {
    await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(20))
        .until(() -> api.client().resources(AgentInstance.class).inNamespace(ns).withName(name).get(),
            i -> i != null && i.getStatus() != null && condition.test(i));
  }

  private void policy(String ns, String name, String yamlSpec) {
    AgentRestartPolicy p = new AgentRestartPolicy();
    p.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(ns).build());
    p.setSpec(Serialization.unmarshal(yamlSpec, AgentRestartPolicySpec.class));
    api.client().resource(p).create();
  }

  private void instance(String ns, String name, String policy) {
    AgentInstance i = new AgentInstance();
    i.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(ns).build());
    AgentInstanceSpec spec = new AgentInstanceSpec();
    spec.policyRef = new PolicyReference(policy);
    spec.template = new PodTemplateSpecBuilder().withNewSpec().addNewContainer().withName("agent")
        .withImage("registry.example/agents/coder:1.4").endContainer().endSpec().build();
    i.setSpec(spec);
    api.client().resource(i).create();
  }

  /** A JSON merge patch: no resourceVersion, so the operator's concurrent status writes cannot conflict. */
  private void newTask(String ns, String name) {
    api.client().resources(AgentInstance.class).inNamespace(ns).withName(name).patch(
        io.fabric8.kubernetes.client.dsl.base.PatchContext.of(io.fabric8.kubernetes.client.dsl.base.PatchType.JSON_MERGE),
        Serialization.asJson(Map.of("spec", Map.of("task", "TASK-2"))));
  }

  /** Distinct requests, for messages. */
  Map<String, Long> summary() {
    return calls.stream().collect(java.util.stream.Collectors.groupingBy(c -> c.access().toString(),
        java.util.TreeMap::new, java.util.stream.Collectors.counting()));
  }

  @Override
  public void close() {
    if (operator != null) {
      operator.close();
    }
    if (kubelet != null) {
      kubelet.close();
    }
    if (operatorClient != null) {
      operatorClient.close();
    }
    api.close();
  }
}

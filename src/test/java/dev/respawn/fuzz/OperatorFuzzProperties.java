package dev.respawn.fuzz;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.api.v1alpha1.StatusCondition;
import dev.respawn.controller.OperatorSettings;
import dev.respawn.controller.RespawnOperator;
import dev.respawn.fuzz.SpecGenerator.Generated;
import dev.respawn.observability.KubeEventRecorder;
import dev.respawn.observability.ReportingSink;
import dev.respawn.observability.RestartMetrics;
import dev.respawn.policy.Bounds;
import dev.respawn.testsupport.MockApi;
import dev.respawn.sandbox.SimulatedKubelet;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import net.jqwik.api.statistics.Statistics;
import org.awaitility.Awaitility;

/**
 * Fuzzing the running operator: one long-lived mock API server, simulated kubelet and operator; each try
 * creates an AgentRestartPolicy from a generated spec (valid or not, sometimes with values of the wrong
 * JSON type, as an API server without the CRD schema would store them), an instance using it (sometimes
 * itself malformed, with odd restart-request annotations: huge, blank, non-ASCII), and asks a healthy
 * control instance for a restart.
 *
 * <p>Each try must end with: an invalid policy Accepted=False reason InvalidSpec naming a refused field,
 * a PolicyInvalid Event, its instance Ready=False reason PolicyInvalid and no pod; a malformed instance
 * Ready=False reason InvalidSpec and no pod; a valid policy Accepted=True and its instance running; request
 * ids in status cut to 256 bytes; and the control instance's restart acted on (the operator never crashed
 * and never stopped serving the others).
 */
class OperatorFuzzProperties {
  static final String NS = MockApi.NAMESPACE;
  static final Duration AT_MOST = Duration.ofSeconds(20);
  static MockApi api;
  static KubernetesClient client;
  static SimulatedKubelet kubelet;
  static RespawnOperator operator;
  static final AtomicInteger TRY = new AtomicInteger();

  @BeforeContainer
  static void start() {
    api = MockApi.start();
    client = api.client();
    kubelet = new SimulatedKubelet(api.newClient(), NS).start();
    KubernetesClient operatorClient = api.newOperatorClient(b -> b);
    KubeEventRecorder events = new KubeEventRecorder(operatorClient, "respawn-fuzz", Clock.systemUTC(),
        new KubeEventRecorder.Settings(Duration.ofMinutes(10), 4096, 1000, Duration.ZERO));
    operator = new RespawnOperator(operatorClient, OperatorSettings.defaults(),
        new ReportingSink(events, new RestartMetrics(new SimpleMeterRegistry())), Optional.empty()).start();
    AgentRestartPolicy control = new AgentRestartPolicy();
    control.setMetadata(new ObjectMetaBuilder().withName("control").withNamespace(NS).build());
    control.setSpec(Serialization.unmarshal("backoff: {type: Immediate}", AgentRestartPolicySpec.class));
    client.resource(control).create();
    client.resource(instance("control", "control")).create();
    awaitInstance("control", i -> i.getStatus().run != null && i.getStatus().run >= 1);
  }

  @AfterContainer
  static void stop() {
    if (operator != null) {
      operator.close();
    }
    if (kubelet != null) {
      kubelet.close();
    }
    if (api != null) {
      api.close();
    }
  }

  @Property(tries = 40, seed = "20261122", shrinking = ShrinkingMode.OFF)
  void invalidSpecsAreExplainedAndNothingElseStops(@ForAll long seed, @ForAll("requestIds") String requestId) {
    int n = TRY.incrementAndGet();
    Random r = new Random(seed);
    int kind = r.nextInt(3);
    Generated g = SpecGenerator.generate(seed, kind == 2, kind == 0 ? 0 : kind == 1 ? 0.3 : 0.05);
    boolean malformedInstance = r.nextInt(8) == 0;
    Statistics.label("policy").collect(g.valid() ? "valid" : g.wrongTypes() ? "wrong JSON types" : "invalid");
    Statistics.label("instance").collect(malformedInstance ? "malformed" : "well-formed");
    String policy = "p-" + n;
    String name = "i-" + n;
    String context = "try " + n + " (seed " + seed + "): policy " + json(g.spec());

    createPolicy(policy, g.spec());
    Map<String, Object> instance = Serialization.jsonMapper().convertValue(instance(name, policy), Map.class);
    String wrongInstanceField = null;
    String spoiledAfterwards = null;
    if (malformedInstance) {
      wrongInstanceField = malform(instance, r);
    }
    if (!requestId.isEmpty() || r.nextBoolean()) {
      Map<String, Object> metadata = (Map<String, Object>) instance.get("metadata");
      metadata.put("annotations", Map.of(AgentInstance.RESTART_ANNOTATION, requestId));
    }
    client.genericKubernetesResources("respawn.dev/v1alpha1", "AgentInstance").inNamespace(NS)
        .resource(Serialization.jsonMapper().convertValue(instance, GenericKubernetesResource.class)).create();

    // the policy's verdict
    AgentRestartPolicy p = Awaitility.await(context).atMost(AT_MOST).pollInterval(Duration.ofMillis(30))
        .until(() -> getPolicy(policy), x -> x != null && x.getStatus() != null && accepted(x) != null);
    StatusCondition accepted = accepted(p);
    if (g.valid()) {
      assertThat(accepted.status).as(context + "\n" + accepted.message).isEqualTo("True");
    } else {
      assertThat(accepted.status).as(context).isEqualTo("False");
      assertThat(accepted.reason).as(context).isEqualTo("InvalidSpec");
      assertThat(bytes(accepted.message)).as(context).isLessThanOrEqualTo(Bounds.MESSAGE_BYTES);
      if (bytes(accepted.message) < Bounds.MESSAGE_BYTES - 64) {
        assertThat(accepted.message).as(context + ": the message names every refused field")
            .contains(g.invalid());
      } else {
        assertThat(g.invalid()).as(context + ": the message names a refused field: " + accepted.message)
            .anyMatch(accepted.message::contains);
      }
      awaitEvent(policy, "PolicyInvalid", context);
    }

    // the instance's
    if (wrongInstanceField != null) {
      String field = wrongInstanceField;
      AgentInstance i = awaitInstance(name, x -> hasReady(x, "InvalidSpec"));
      assertThat(ready(i).message).as(context).contains(field);
      awaitEvent(name, "PolicyInvalid", context);
    } else if (!g.valid()) {
      AgentInstance i = awaitInstance(name, x -> hasReady(x, "PolicyInvalid"));
      assertThat(ready(i).message).as(context).contains(policy);
    } else {
      AgentInstance i = awaitInstance(name, x -> x.getStatus().run != null && x.getStatus().run >= 1);
      var st = i.getStatus();
      if (st.handledRequests != null) {
        assertThat(bytes(st.handledRequests.get("restart"))).as("handled request id").isLessThanOrEqualTo(256);
      }
      if (st.lastRestart != null) {
        assertThat(bytes(st.lastRestart.requestId)).as("lastRestart.requestId").isLessThanOrEqualTo(256);
      }
      if (r.nextBoolean()) {
        spoiledAfterwards = spoilRunningPolicy(policy, name, seed, r, context);
      }
    }

    // the control instance is still served: its restart request is acted on
    String id = "try-" + n;
    int before = getInstance("control").getStatus().run;
    annotate("control", id);
    awaitInstance("control", x -> x.getStatus().handledRequests != null
        && id.equals(x.getStatus().handledRequests.get("restart")) && x.getStatus().run > before);
    assertThat(operator.isReady()).as("operator ready").isTrue();
    if (wrongInstanceField != null || !g.valid()) {
      assertThat(client.pods().inNamespace(NS).withLabel(AgentInstance.INSTANCE_LABEL, name).list().getItems())
          .as(context + ": pods of a refused instance").isEmpty();
    }
    if (spoiledAfterwards != null) {
      assertThat(client.pods().inNamespace(NS).withLabel(AgentInstance.INSTANCE_LABEL, name).list().getItems())
          .as(context + ": pods after the policy became invalid").extracting(x -> x.getMetadata().getName())
          .containsExactly(spoiledAfterwards);
      assertThat(getInstance(name).getStatus().run).as("run after the policy became invalid").isEqualTo(
          Integer.parseInt(spoiledAfterwards.substring(spoiledAfterwards.lastIndexOf('-') + 1)));
    }
  }

  /**
   * The running instance's policy becomes invalid, then its pod fails: nothing may restart it. Returns the
   * name of the pod that failed.
   */
  @SuppressWarnings("unchecked")
  static String spoilRunningPolicy(String policy, String name, long seed, Random r, String context) {
    Generated bad;
    long s = seed;
    do {
      bad = SpecGenerator.generate(++s, r.nextBoolean(), 0.3);
    } while (bad.valid());
    Map<String, Object> spec = bad.spec();
    client.genericKubernetesResources("respawn.dev/v1alpha1", "AgentRestartPolicy").inNamespace(NS).withName(policy)
        .edit(p -> {
          p.getAdditionalProperties().put("spec", spec);
          return p;
        });
    Awaitility.await(context + ": policy refused after the edit").atMost(AT_MOST).pollInterval(Duration.ofMillis(30))
        .until(() -> getPolicy(policy), p -> p.getStatus() != null && accepted(p) != null
            && "False".equals(accepted(p).status) && p.getMetadata().getGeneration().equals(
            p.getStatus().observedGeneration));
    String pod = awaitInstance(name, x -> x.getStatus().currentPod != null).getStatus().currentPod;
    kubelet.terminate(pod, 1, "Error", "network_timeout: while the policy was invalid");
    awaitInstance(name, x -> hasReady(x, "PolicyInvalid"));
    Statistics.label("policy made invalid while running").collect(true);
    return pod;
  }

  @Provide
  Arbitrary<String> requestIds() {
    return Arbitraries.oneOf(Arbitraries.of("", " ", "\t\n", "r1", "résumé-✓", "日本語のリクエスト", "a b c"),
        Arbitraries.strings().ofMinLength(1).ofMaxLength(30), Arbitraries.just("x".repeat(10 * 1024)),
        Arbitraries.just("é".repeat(300)));
  }

  /** Breaks the instance spec with a value of the wrong JSON type; returns the field. */
  @SuppressWarnings("unchecked")
  static String malform(Map<String, Object> instance, Random r) {
    Map<String, Object> spec = (Map<String, Object>) instance.get("spec");
    return switch (r.nextInt(5)) {
      case 0 -> put(spec, "suspend", "maybe");
      case 1 -> put(spec, "template", 5);
      case 2 -> put(spec, "task", Map.of("a", 1));
      case 3 -> put(spec, "policyRef", List.of("standard"));
      default -> put(spec, "heartbeat", List.of("coder"));
    };
  }

  private static String put(Map<String, Object> spec, String key, Object value) {
    spec.put(key, value);
    return "spec." + key;
  }

  static AgentInstance instance(String name, String policy) {
    AgentInstance i = new AgentInstance();
    i.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(NS).build());
    var spec = new dev.respawn.api.v1alpha1.AgentInstanceSpec();
    spec.policyRef = new dev.respawn.api.v1alpha1.PolicyReference(policy);
    spec.template = new PodTemplateSpecBuilder().withNewSpec().addNewContainer().withName("agent")
        .withImage("registry.example/agents/fuzz:1").endContainer().endSpec().build();
    i.setSpec(spec);
    return i;
  }

  static void createPolicy(String name, Map<String, Object> spec) {
    Map<String, Object> p = new LinkedHashMap<>();
    p.put("apiVersion", "respawn.dev/v1alpha1");
    p.put("kind", "AgentRestartPolicy");
    p.put("metadata", Map.of("name", name, "namespace", NS));
    p.put("spec", spec);
    client.genericKubernetesResources("respawn.dev/v1alpha1", "AgentRestartPolicy").inNamespace(NS)
        .resource(Serialization.jsonMapper().convertValue(p, GenericKubernetesResource.class)).create();
  }

  /** Reads through a fresh typed view of the generic object (whatever the spec holds, only status is read). */
  static AgentRestartPolicy getPolicy(String name) {
    GenericKubernetesResource r = client.genericKubernetesResources("respawn.dev/v1alpha1", "AgentRestartPolicy")
        .inNamespace(NS).withName(name).get();
    if (r == null) {
      return null;
    }
    AgentRestartPolicy p = new AgentRestartPolicy();
    p.setMetadata(r.getMetadata());
    Object status = r.getAdditionalProperties().get("status");
    p.setStatus(status == null ? null : Serialization.jsonMapper().convertValue(status,
        dev.respawn.api.v1alpha1.AgentRestartPolicyStatus.class));
    return p;
  }

  static AgentInstance getInstance(String name) {
    GenericKubernetesResource r = client.genericKubernetesResources("respawn.dev/v1alpha1", "AgentInstance")
        .inNamespace(NS).withName(name).get();
    if (r == null) {
      return null;
    }
    AgentInstance i = new AgentInstance();
    i.setMetadata(r.getMetadata());
    Object status = r.getAdditionalProperties().get("status");
    i.setStatus(status == null ? null : Serialization.jsonMapper().convertValue(status,
        dev.respawn.api.v1alpha1.AgentInstanceStatus.class));
    return i;
  }

  static AgentInstance awaitInstance(String name, Predicate<AgentInstance> condition) {
    try {
      return Awaitility.await(name).atMost(AT_MOST).pollInterval(Duration.ofMillis(30))
          .until(() -> getInstance(name), i -> i != null && i.getStatus() != null && condition.test(i));
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      AgentInstance i = getInstance(name);
      throw new AssertionError(name + " did not get there; status:\n" + (i == null ? "none"
          : Serialization.asYaml(i.getStatus()).replaceAll("x{40,}", "x...")) + "pods: " + client.pods().inNamespace(NS)
          .withLabel(AgentInstance.INSTANCE_LABEL, name).list().getItems().stream()
          .map(p -> p.getMetadata().getName() + "=" + (p.getStatus() == null ? null : p.getStatus().getPhase()))
          .toList(), e);
    }
  }

  static void awaitEvent(String regarding, String reason, String context) {
    Awaitility.await(context + ": a " + reason + " Event about " + regarding).atMost(AT_MOST)
        .pollInterval(Duration.ofMillis(50)).until(() -> client.events().v1().events().inNamespace(NS).list()
            .getItems().stream().anyMatch(e -> e.getRegarding() != null
                && regarding.equals(e.getRegarding().getName()) && reason.equals(e.getReason())));
  }

  static void annotate(String name, String id) {
    client.genericKubernetesResources("respawn.dev/v1alpha1", "AgentInstance").inNamespace(NS).withName(name)
        .edit(r -> {
          Map<String, String> a = r.getMetadata().getAnnotations() == null ? new HashMap<>()
              : new HashMap<>(r.getMetadata().getAnnotations());
          a.put(AgentInstance.RESTART_ANNOTATION, id);
          r.getMetadata().setAnnotations(a);
          return r;
        });
  }

  static StatusCondition accepted(AgentRestartPolicy p) {
    return p.getStatus().conditions == null ? null : p.getStatus().conditions.stream()
        .filter(c -> "Accepted".equals(c.type)).findFirst().orElse(null);
  }

  static StatusCondition ready(AgentInstance i) {
    return i.getStatus().conditions == null ? null : i.getStatus().conditions.stream()
        .filter(c -> "Ready".equals(c.type)).findFirst().orElse(null);
  }

  static boolean hasReady(AgentInstance i, String reason) {
    StatusCondition c = ready(i);
    return c != null && "False".equals(c.status) && reason.equals(c.reason);
  }

  static int bytes(String s) {
    return s == null ? 0 : s.getBytes(StandardCharsets.UTF_8).length;
  }

  private static String json(Object o) {
    String s = Serialization.asJson(o);
    return s.length() > 1500 ? s.substring(0, 1500) + "..." : s;
  }
}

package dev.respawn.acceptance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.mockwebserver.http.Buffer;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The pod the operator POSTs is not the pod that is stored. A hook in front of
 * the mock API server's CRUD store rewrites every pod create of the operator the way an Istio/Linkerd injector, a
 * LimitRange, Kyverno/Gatekeeper/PSS mutations, an image-digest policy and the API server's own defaulting would, so
 * the operator only ever sees (in the 201 answer, in watches and lists) the mutated pod, as on a real cluster.
 */
class MutatingAdmissionIT extends OperatorScenario {
  static final String POLICY = "backoff: {type: Linear, initialDelay: 1s, maxDelay: 5s}\nmaxRetries: 3\n"
      + "resume: {mode: 'Off'}";
  private static final Pattern POD_CREATE = Pattern.compile("^/api/v1/namespaces/([^/]+)/pods/?(\\?.*)?$");

  /** The admission chain per namespace (a test's namespace); none: the pod is stored as sent. */
  final Map<String, Consumer<ObjectNode>> admission = new ConcurrentHashMap<>();
  /** The pod bodies the operator sent, before admission, per namespace. */
  final Map<String, List<JsonNode>> sent = new ConcurrentHashMap<>();
  /** Every pod write (not a create) the operator sent. */
  final List<String> podWrites = new CopyOnWriteArrayList<>();

  @BeforeAll
  void installAdmissionChain() {
    cluster.admission(this::admit);
  }

  RecordedRequest admit(RecordedRequest request) {
    String agent = request.getHeader("User-Agent");
    boolean byOperator = agent != null && !MockCluster.TEST_AGENT.equals(agent);
    if (!byOperator || !request.getPath().contains("/pods")) {
      return request;
    }
    Matcher m = POD_CREATE.matcher(request.getPath());
    if (!"POST".equals(request.getMethod()) || !m.matches()) {
      if (!"GET".equals(request.getMethod())) {
        podWrites.add(request.getMethod() + " " + request.getPath());
      }
      return request;
    }
    Consumer<ObjectNode> chain = admission.get(m.group(1));
    if (chain == null) {
      return request;
    }
    try {
      byte[] raw = request.getBody().getBytes();
      ObjectNode pod = (ObjectNode) MockCluster.JSON.readTree(raw);
      sent.computeIfAbsent(m.group(1), k -> new CopyOnWriteArrayList<>()).add(pod.deepCopy());
      chain.accept(pod);
      byte[] mutated = MockCluster.JSON.writeValueAsBytes(pod);
      return new RecordedRequest(request.getHttpVersion(), request.method(), request.getPath(), request.getHeaders(),
          new Buffer(mutated));
    } catch (Exception e) {
      throw new IllegalStateException("admission hook failed", e);
    }
  }

  // ------------------------------------------------------------------ mutations

  /** What the API server, a LimitRange, a PSS/Kyverno "restricted" mutation and an image-digest policy add. */
  static void defaulting(ObjectNode pod) {
    ObjectNode spec = (ObjectNode) pod.get("spec");
    for (String list : List.of("initContainers", "containers")) {
      for (JsonNode c : spec.withArray(list)) {
        ObjectNode o = (ObjectNode) c;
        o.put("terminationMessagePath", "/dev/termination-log");
        o.put("terminationMessagePolicy", "File");
        o.put("imagePullPolicy", "IfNotPresent");
        String image = o.path("image").asText();
        if (!image.contains("@")) {
          o.put("image", image.replaceAll(":[^:/]+$", "") + "@sha256:" + sha256(image));
        }
        if (!o.has("resources") || o.get("resources").isEmpty()) {
          ObjectNode r = o.putObject("resources");
          r.putObject("limits").put("cpu", "500m").put("memory", "512Mi");
          r.putObject("requests").put("cpu", "100m").put("memory", "128Mi");
        }
        ObjectNode sc = o.putObject("securityContext");
        sc.put("allowPrivilegeEscalation", false).put("runAsNonRoot", true);
        sc.putObject("capabilities").putArray("drop").add("ALL");
        sc.putObject("seccompProfile").put("type", "RuntimeDefault");
        o.withArray("volumeMounts").addObject().put("name", "kube-api-access-x7k2p")
            .put("mountPath", "/var/run/secrets/kubernetes.io/serviceaccount").put("readOnly", true);
        o.withArray("env").addObject().put("name", "HTTP_PROXY").put("value", "http://proxy.corp:3128");
      }
    }
    if (spec.withArray("initContainers").isEmpty()) {
      spec.remove("initContainers");
    }
    spec.put("dnsPolicy", "ClusterFirst");
    spec.put("schedulerName", "default-scheduler");
    if (!spec.has("serviceAccountName")) {
      spec.put("serviceAccountName", "default");
    }
    spec.put("serviceAccount", spec.get("serviceAccountName").asText());
    spec.putObject("securityContext").put("runAsNonRoot", true).put("fsGroup", 65532);
    spec.put("terminationGracePeriodSeconds", 30);
    spec.put("enableServiceLinks", true);
    spec.put("priority", 0);
    spec.put("preemptionPolicy", "PreemptLowerPriority");
    ArrayNode tolerations = spec.withArray("tolerations");
    for (String key : List.of("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")) {
      tolerations.addObject().put("key", key).put("operator", "Exists").put("effect", "NoExecute")
          .put("tolerationSeconds", 300);
    }
    ObjectNode vol = spec.withArray("volumes").addObject();
    vol.put("name", "kube-api-access-x7k2p");
    vol.putObject("projected").put("defaultMode", 420).putArray("sources").addObject()
        .putObject("serviceAccountToken").put("expirationSeconds", 3607).put("path", "token");
    ObjectNode meta = (ObjectNode) pod.get("metadata");
    meta.with("labels").put("policy.kyverno.io/compliant", "true");
    meta.with("annotations").put("kyverno.io/last-applied-patches", "add-defaults.restricted.kyverno.io: added /spec");
  }

  static String sha256(String s) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  static ObjectNode proxy(ObjectNode pod) {
    ObjectNode c = MockCluster.JSON.createObjectNode();
    c.put("name", "istio-proxy").put("image", "docker.io/istio/proxyv2:1.24.0");
    c.putArray("args").add("proxy").add("sidecar");
    c.withArray("ports").addObject().put("name", "http-envoy-prom").put("containerPort", 15090);
    c.putObject("readinessProbe").putObject("httpGet").put("path", "/healthz/ready").put("port", 15021);
    return c;
  }

  static ObjectNode istioInit() {
    ObjectNode c = MockCluster.JSON.createObjectNode();
    c.put("name", "istio-init").put("image", "docker.io/istio/proxyv2:1.24.0");
    c.putArray("args").add("istio-iptables").add("-p").add("15001");
    return c;
  }

  static void istioMetadata(ObjectNode pod) {
    ObjectNode meta = (ObjectNode) pod.get("metadata");
    String instance = meta.path("labels").path("respawn.dev/instance").asText("x");
    meta.with("labels").put("security.istio.io/tlsMode", "istio")
        .put("service.istio.io/canonical-name", instance).put("service.istio.io/canonical-revision", "latest");
    meta.with("annotations").put("sidecar.istio.io/status",
        "{\"initContainers\":[\"istio-init\"],\"containers\":[\"istio-proxy\"],\"volumes\":[\"istio-envoy\"]}")
        .put("kubectl.kubernetes.io/default-container", "agent")
        .put("kubectl.kubernetes.io/default-logs-container", "agent")
        .put("prometheus.io/scrape", "true");
    ((ObjectNode) pod.get("spec")).withArray("volumes").addObject().put("name", "istio-envoy")
        .putObject("emptyDir").put("medium", "Memory");
  }

  /** Istio's classic injection; with holdApplicationUntilProxyStarts the proxy is put first. */
  static Consumer<ObjectNode> istioSidecar(boolean proxyFirst) {
    return pod -> {
      istioMetadata(pod);
      ObjectNode spec = (ObjectNode) pod.get("spec");
      ArrayNode inits = spec.withArray("initContainers");
      inits.insert(0, istioInit());
      ArrayNode containers = spec.withArray("containers");
      if (proxyFirst) {
        containers.insert(0, proxy(pod));
      } else {
        containers.add(proxy(pod));
      }
      defaulting(pod);
    };
  }

  /** Istio 1.29+ native sidecar: an init container with restartPolicy Always. */
  static void istioNative(ObjectNode pod) {
    istioMetadata(pod);
    ArrayNode inits = ((ObjectNode) pod.get("spec")).withArray("initContainers");
    inits.insert(0, istioInit());
    ObjectNode p = proxy(pod);
    p.put("restartPolicy", "Always");
    inits.insert(1, p);
    defaulting(pod);
  }

  static void metadataOnly(ObjectNode pod) {
    ObjectNode meta = (ObjectNode) pod.get("metadata");
    meta.with("labels").put("team", "platform").put("cost-center", "ai-42");
    meta.with("annotations").put("gatekeeper.sh/mutation-id", "1234").put("cluster-autoscaler.kubernetes.io/safe-to-evict",
        "false");
  }

  /** A buggy webhook: a JSON patch {op: replace, path: /metadata/labels} with its own labels. */
  static void replaceLabels(ObjectNode pod) {
    ObjectNode meta = (ObjectNode) pod.get("metadata");
    meta.putObject("labels").put("app.kubernetes.io/managed-by", "platform-policy");
  }

  /** A webhook that overwrites the instance label's value (e.g. a naming-convention policy). */
  static void rewriteInstanceLabel(ObjectNode pod) {
    ObjectNode labels = ((ObjectNode) pod.get("metadata")).with("labels");
    labels.put("respawn.dev/instance", "team-a." + labels.path("respawn.dev/instance").asText());
  }

  /** A buggy webhook: {op: replace, path: /metadata/annotations} with its own annotations (respawn.dev/* lost). */
  static void replaceAnnotations(ObjectNode pod) {
    ((ObjectNode) pod.get("metadata")).putObject("annotations").put("kyverno.io/mutated", "true");
  }

  // ------------------------------------------------------------------ the kubelet for pods with sidecars

  /** Writes the pod's status: each named container in the given state, every other one running. */
  void status(String pod, String phase, Map<String, Map<String, Object>> states) {
    Pod p = pod(pod);
    List<Map<String, Object>> inits = new ArrayList<>();
    for (Container c : p.getSpec().getInitContainers()) {
      boolean sidecar = "Always".equals(c.getRestartPolicy());
      Map<String, Object> st = states.getOrDefault(c.getName(),
          sidecar ? Kubelet.runningState() : Kubelet.terminatedState(0, "Completed", null));
      inits.add(Kubelet.container(c.getName(), st, st.containsKey("running")));
    }
    List<Map<String, Object>> containers = new ArrayList<>();
    for (Container c : p.getSpec().getContainers()) {
      Map<String, Object> st = states.getOrDefault(c.getName(), Kubelet.runningState());
      containers.add(Kubelet.container(c.getName(), st, st.containsKey("running")));
    }
    boolean allReady = containers.stream().allMatch(c -> Boolean.TRUE.equals(c.get("ready")));
    Map<String, Object> s = Kubelet.podStatus(phase, containers, allReady && "Running".equals(phase));
    if (!inits.isEmpty()) {
      s.put("initContainerStatuses", inits);
    }
    kubelet.setStatus(ns, pod, s);
  }

  void runningWithSidecars(String instance, String pod) {
    awaitPod(pod);
    status(pod, "Running", Map.of());
    awaitStatus(instance, s -> "Running".equals(s.path("phase").asText()) && pod.equals(s.path("currentPod").asText()));
  }

  List<ApiRequest> writesInThisNamespaceSince(Instant since) {
    return cluster.operatorWritesSince(since).stream().filter(r -> r.path().contains("/namespaces/" + ns + "/"))
        .toList();
  }

  void restsWithoutWrites(String instance, String pod, Duration window) {
    Instant atRest = Instant.now();
    try {
      holdsFor(window, () -> writesInThisNamespaceSince(atRest).isEmpty());
    } catch (RuntimeException e) {
      throw new AssertionError("writes at rest: " + writesInThisNamespaceSince(atRest) + "\n" + describe(instance), e);
    }
    assertThat(status(instance).path("currentPod").asText()).isEqualTo(pod);
    assertThat(phase(instance)).isEqualTo("Running");
  }

  Map<String, Map<String, Object>> states(Object... nameThenState) {
    Map<String, Map<String, Object>> m = new LinkedHashMap<>();
    for (int i = 0; i < nameThenState.length; i += 2) {
      @SuppressWarnings("unchecked")
      Map<String, Object> st = (Map<String, Object>) nameThenState[i + 1];
      m.put((String) nameThenState[i], st);
    }
    return m;
  }

  // ------------------------------------------------------------------ tests

  /** Control: the same at-rest check with no admission at all. */
  @Test
  void controlAnUnmutatedPodRestsWithoutWrites() {
    policy("p", POLICY);
    instance("a", "p");
    runningWithSidecars("a", "a-1");
    restsWithoutWrites("a", "a-1", Duration.ofSeconds(8));
  }

  /** Defaulting + Istio classic sidecar (appended): no restart loop, no writes at rest, one pod. */
  @Test
  void aDefaultedAndInjectedPodRunsAtRestWithoutWritesOrASecondPod() {
    admission.put(ns, istioSidecar(false));
    policy("p", POLICY);
    instance("a", "p");
    Pod stored = awaitPod("a-1");
    assertThat(stored.getSpec().getContainers()).extracting(Container::getName).containsExactly("agent",
        "istio-proxy");
    assertThat(stored.getSpec().getContainers().get(0).getImage()).contains("@sha256:");
    runningWithSidecars("a", "a-1");
    restsWithoutWrites("a", "a-1", Duration.ofSeconds(10));
    assertThat(cluster.podCreatesIn(ns)).isEqualTo(1);
    assertThat(podWrites).as("pod updates/patches/deletes by the operator").noneMatch(w -> w.contains("/" + ns + "/"));
  }

  /** §12: a restarted operator writes nothing for a mutated running pod (native sidecar, defaults). */
  @Test
  void aRestartedOperatorWritesNothingForAMutatedRunningPod() throws Exception {
    admission.put(ns, MutatingAdmissionIT::istioNative);
    policy("p", POLICY);
    instance("a", "p");
    runningWithSidecars("a", "a-1");
    restsWithoutWrites("a", "a-1", Duration.ofSeconds(3));
    operator.kill();
    Instant restarted = Instant.now();
    operator.start();
    await().atMost(PATIENCE).until(() -> cluster.operatorRequestedSince(restarted));
    holdsFor(Duration.ofSeconds(10), () -> writesInThisNamespaceSince(restarted).isEmpty());
    assertThat(cluster.podCreatesIn(ns)).isEqualTo(1);
    assertThat(phase("a")).isEqualTo("Running");
  }

  /** Proxy injected first, no spec.agentContainer: the template's first container decides, not the pod's. */
  @Test
  void aProxyInjectedFirstIsNotTakenForTheAgentOnFailure() {
    admission.put(ns, istioSidecar(true));
    policy("p", POLICY);
    instance("a", "p");
    Pod stored = awaitPod("a-1");
    assertThat(stored.getSpec().getContainers().get(0).getName()).isEqualTo("istio-proxy");
    runningWithSidecars("a", "a-1");
    status("a-1", "Running", states("agent", Kubelet.terminatedState(3, "Error", "tool broke")));
    JsonNode s = awaitFailureOf("a", "a-1");
    assertThat(s.path("lastFailure").path("exitCode").asInt()).as("%s", s).isEqualTo(3);
    assertThat(s.path("lastFailure").path("class").asText()).isEqualTo("ToolFailure");
    awaitPod("a-2");
  }

  @Test
  void aProxyInjectedFirstIsNotTakenForTheAgentOnCleanExit() {
    admission.put(ns, istioSidecar(true));
    policy("p", POLICY);
    instance("a", "p");
    runningWithSidecars("a", "a-1");
    status("a-1", "Running", states("agent", Kubelet.terminatedState(0, "Completed", null)));
    JsonNode s = awaitPhase("a", "Succeeded");
    assertThat(s.path("terminalReason").asText()).isEqualTo("CleanExit");
    holdsFor(Duration.ofSeconds(3), () -> pod("a-2") == null);
  }

  /** The classic sidecar dies (restartPolicy Never: it stays dead) while the agent runs: the agent's exit decides. */
  @Test
  void aCrashedClassicSidecarDoesNotEndTheRunTheAgentsExitDecides() {
    admission.put(ns, istioSidecar(false));
    policy("p", POLICY);
    instance("a", "p");
    runningWithSidecars("a", "a-1");
    status("a-1", "Running", states("istio-proxy", Kubelet.terminatedState(137, "OOMKilled", null)));
    holdsFor(Duration.ofSeconds(5), () -> "Running".equals(phase("a")) && status("a").path("lastFailure")
        .path("pod").asText("").isEmpty() && pod("a-2") == null);
    status("a-1", "Running", states("istio-proxy", Kubelet.terminatedState(137, "OOMKilled", null), "agent",
        Kubelet.terminatedState(1, "Error", "network_timeout: upstream connect error")));
    JsonNode s = awaitFailureOf("a", "a-1");
    assertThat(s.path("lastFailure").path("exitCode").asInt()).as("%s", s).isEqualTo(1);
    assertThat(s.path("lastFailure").path("failureReason").asText()).isEqualTo("DependencyFailure");
  }

  /** A native sidecar restarting (CrashLoop) does not end the run; the agent's clean exit while it runs does. */
  @Test
  void aNativeSidecarRestartingDoesNotEndTheRunAndTheAgentsExitDoes() {
    admission.put(ns, MutatingAdmissionIT::istioNative);
    policy("p", POLICY);
    instance("a", "p");
    Pod stored = awaitPod("a-1");
    assertThat(stored.getSpec().getContainers()).extracting(Container::getName).containsExactly("agent");
    runningWithSidecars("a", "a-1");
    status("a-1", "Running", states("istio-proxy", Kubelet.terminatedState(137, "Error", null)));
    holdsFor(Duration.ofSeconds(4), () -> "Running".equals(phase("a")) && pod("a-2") == null);
    status("a-1", "Running", states("istio-proxy", Kubelet.waitingState("CrashLoopBackOff", "back-off 10s")));
    holdsFor(Duration.ofSeconds(4), () -> "Running".equals(phase("a")) && pod("a-2") == null);
    status("a-1", "Running", states("agent", Kubelet.terminatedState(0, "Completed", null)));
    assertThat(awaitPhase("a", "Succeeded").path("terminalReason").asText()).isEqualTo("CleanExit");
  }

  /** README §Reference: a failed init container ends the run with its exit; the injected istio-init too. */
  @Test
  void aFailedInjectedInitContainerEndsTheRunWithItsExit() {
    admission.put(ns, istioSidecar(false));
    policy("p", POLICY);
    instance("a", "p");
    awaitPod("a-1");
    status("a-1", "Failed", states("istio-init", Kubelet.terminatedState(1, "Error", "iptables-restore: line 3 failed"),
        "agent", Kubelet.waitingState("PodInitializing", ""), "istio-proxy",
        Kubelet.waitingState("PodInitializing", "")));
    JsonNode s = awaitFailureOf("a", "a-1");
    assertThat(s.path("lastFailure").path("exitCode").asInt()).as("%s", s).isEqualTo(1);
    assertThat(s.path("lastFailure").path("class").asText()).isEqualTo("ToolFailure");
    awaitPod("a-2");
  }

  /**
   * A user's template edit is still seen through the mutation (observedGeneration, the next run's pod uses it),
   * and the mutation itself never rolls the run.
   */
  @Test
  void aTemplateEditIsStillAppliedToTheNextRunOfAMutatedPod() {
    admission.put(ns, istioSidecar(false));
    policy("p", POLICY);
    instance("a", "p");
    runningWithSidecars("a", "a-1");
    restsWithoutWrites("a", "a-1", Duration.ofSeconds(3));
    cluster.editInstanceSpec(ns, "a", spec -> {
      @SuppressWarnings("unchecked")
      Map<String, Object> template = (Map<String, Object>) spec.get("template");
      @SuppressWarnings("unchecked")
      Map<String, Object> podSpec = (Map<String, Object>) template.get("spec");
      @SuppressWarnings("unchecked")
      List<Map<String, Object>> cs = (List<Map<String, Object>>) podSpec.get("containers");
      cs.get(0).put("image", "example/agent:2");
    });
    awaitStatus("a", s -> s.path("observedGeneration").asInt() == 2);
    holdsFor(Duration.ofSeconds(4), () -> pod("a-2") == null && "Running".equals(phase("a")));
    status("a-1", "Running", states("agent", Kubelet.terminatedState(1, "Error", "boom")));
    awaitPod("a-2");
    JsonNode second = sent.get(ns).get(sent.get(ns).size() - 1);
    assertThat(second.path("spec").path("containers").get(0).path("image").asText()).isEqualTo("example/agent:2");
    assertThat(second.path("spec").path("containers")).as("no injected container sent back").hasSize(1);
    assertThat(pod("a-2").getSpec().getContainers().get(0).getImage())
        .isEqualTo("example/agent@sha256:" + sha256("example/agent:2"));
  }

  @Test
  void aMetadataOnlyMutationChangesNothing() {
    admission.put(ns, MutatingAdmissionIT::metadataOnly);
    policy("p", POLICY);
    instance("a", "p");
    runningWithSidecars("a", "a-1");
    restsWithoutWrites("a", "a-1", Duration.ofSeconds(6));
    kubelet.terminated(ns, "a-1", 1, "Error", "boom");
    awaitFailureOf("a", "a-1");
    assertThat(awaitPod("a-2").getMetadata().getLabels()).containsEntry("team", "platform")
        .containsEntry("respawn.dev/run", "2");
  }

  /**
   * A webhook replaces the whole label map (respawn.dev/instance and respawn.dev/run lost). The pod is still the
   * instance's (controller ownerReference, name): the operator should manage it, or say why it does not; it must
   * never start a second live pod nor loop on creates.
   */
  @Test
  void aWebhookDroppingTheRespawnLabelsLeavesTheRunManaged() {
    admission.put(ns, MutatingAdmissionIT::replaceLabels);
    policy("p", POLICY);
    instance("a", "p");
    awaitPod("a-1");
    // stored without them, labelled again by the operator at once (its own pod, by UID)
    await().atMost(PATIENCE).untilAsserted(() -> assertThat(pod("a-1").getMetadata().getLabels())
        .containsEntry("respawn.dev/instance", "a").containsEntry("respawn.dev/run", "1"));
    assertThat(cluster.requests.stream().filter(r -> r.byOperator() && "PATCH".equals(r.verb())
        && r.path().endsWith("/pods/a-1"))).as("one patch puts the labels back").hasSize(1);
    status("a-1", "Running", Map.of());
    try {
      awaitStatus("a", s -> "Running".equals(s.path("phase").asText()) && "a-1".equals(s.path("currentPod").asText()),
          Duration.ofSeconds(20));
    } finally {
      assertThat(cluster.podCreatesIn(ns)).as("pod creates; " + describe("a")).isEqualTo(1);
    }
    kubelet.terminated(ns, "a-1", 1, "Error", "boom");
    awaitFailureOf("a", "a-1");
    awaitPod("a-2");
  }

  /** A webhook rewrites the instance label's value: the same expectations. */
  @Test
  void aWebhookRewritingTheInstanceLabelLeavesTheRunManaged() {
    admission.put(ns, MutatingAdmissionIT::rewriteInstanceLabel);
    policy("p", POLICY);
    instance("a", "p");
    Pod stored = awaitPod("a-1");
    assertThat(stored.getMetadata().getLabels()).containsEntry("respawn.dev/instance", "team-a.a");
    status("a-1", "Running", Map.of());
    try {
      awaitStatus("a", s -> "Running".equals(s.path("phase").asText()) && "a-1".equals(s.path("currentPod").asText()),
          Duration.ofSeconds(20));
    } finally {
      assertThat(cluster.podCreatesIn(ns)).as("pod creates; " + describe("a")).isEqualTo(1);
    }
    kubelet.terminated(ns, "a-1", 1, "Error", "boom");
    awaitFailureOf("a", "a-1");
  }

  /**
   * A webhook replaces the annotation map (the operator's respawn.dev/agent-container record lost) and the proxy is
   * first: the template's first container must still decide.
   */
  @Test
  void aWebhookDroppingTheRespawnAnnotationsWithTheProxyFirst() {
    admission.put(ns, pod -> {
      istioSidecar(true).accept(pod);
      replaceAnnotations(pod);
    });
    policy("p", POLICY);
    instance("a", "p");
    runningWithSidecars("a", "a-1");
    restsWithoutWrites("a", "a-1", Duration.ofSeconds(4));
    status("a-1", "Running", states("agent", Kubelet.terminatedState(3, "Error", "tool broke")));
    JsonNode s = awaitFailureOf("a", "a-1");
    assertThat(s.path("lastFailure").path("exitCode").asInt()).as("%s", s).isEqualTo(3);
  }

  /** The same with an explicit spec.agentContainer naming a container that is not first in the stored pod. */
  @Test
  void anExplicitAgentContainerBehindAnInjectedProxyDecides() {
    admission.put(ns, istioSidecar(true));
    policy("p", POLICY);
    instanceWithPodSpec("a", "p", "agentContainer: worker",
        "containers:\n- {name: helper, image: example/helper:1}\n- {name: worker, image: example/agent:1}");
    runningWithSidecars("a", "a-1");
    restsWithoutWrites("a", "a-1", Duration.ofSeconds(4));
    status("a-1", "Running", states("helper", Kubelet.terminatedState(0, "Completed", null)));
    holdsFor(Duration.ofSeconds(3), () -> "Running".equals(phase("a")));
    status("a-1", "Running", states("helper", Kubelet.terminatedState(0, "Completed", null), "worker",
        Kubelet.terminatedState(2, "Error", "boom")));
    JsonNode s = awaitFailureOf("a", "a-1");
    assertThat(s.path("lastFailure").path("exitCode").asInt()).as("%s", s).isEqualTo(2);
  }

  /** Control for the annotation case: annotations replaced, but the agent stays first. */
  @Test
  void aWebhookDroppingTheRespawnAnnotationsWithTheAgentFirst() {
    admission.put(ns, pod -> {
      istioSidecar(false).accept(pod);
      replaceAnnotations(pod);
    });
    policy("p", POLICY);
    instance("a", "p");
    runningWithSidecars("a", "a-1");
    status("a-1", "Running", states("agent", Kubelet.terminatedState(3, "Error", "tool broke")));
    JsonNode s = awaitFailureOf("a", "a-1");
    assertThat(s.path("lastFailure").path("exitCode").asInt()).as("%s", s).isEqualTo(3);
  }

  /** Annotations replaced, explicit spec.agentContainer behind a helper container (no injection at all). */
  @Test
  void aWebhookDroppingTheRespawnAnnotationsWithAnExplicitAgentContainer() {
    admission.put(ns, MutatingAdmissionIT::replaceAnnotations);
    policy("p", POLICY);
    instanceWithPodSpec("a", "p", "agentContainer: worker",
        "containers:\n- {name: helper, image: example/helper:1}\n- {name: worker, image: example/agent:1}");
    runningWithSidecars("a", "a-1");
    status("a-1", "Running", states("worker", Kubelet.terminatedState(2, "Error", "boom")));
    JsonNode s = awaitStatus("a", x -> "a-1".equals(x.path("lastFailure").path("pod").asText()),
        Duration.ofSeconds(15));
    assertThat(s.path("lastFailure").path("exitCode").asInt()).as("%s", s).isEqualTo(2);
  }

  /**
   * Labels dropped by a webhook, with heartbeats: the agent runs and renews its Lease as its pod. The operator
   * must not end (delete) a healthy run it cannot see, nor start a second pod.
   */
  @Test
  void aWebhookDroppingTheRespawnLabelsWithAHealthyHeartbeat() {
    admission.put(ns, MutatingAdmissionIT::replaceLabels);
    policy("p", "heartbeat: {timeout: 3s, startupGrace: 4s}\n" + POLICY);
    instance("a", "p");
    awaitPod("a-1");
    await().atMost(PATIENCE).until(() -> agent.get(ns, "a") != null);
    var beating = agent.keepRenewing(ns, "a", "a-1", 500);
    try {
      status("a-1", "Running", Map.of());
      holdsFor(Duration.ofSeconds(12), () -> pod("a-1") != null && pod("a-1").getMetadata()
          .getDeletionTimestamp() == null && pod("a-2") == null);
    } catch (RuntimeException e) {
      throw new AssertionError("a healthy, heartbeating run was ended; pod a-1 = "
          + (pod("a-1") == null ? "deleted" : "kept") + ", a-2 = " + (pod("a-2") == null ? "none" : "created")
          + ", creates " + cluster.podCreatesIn(ns) + "\n" + describe("a"), e);
    } finally {
      beating.cancel(false);
    }
  }

  /** A webhook overwriting respawn.dev/run. */
  @Test
  void aWebhookRewritingTheRunLabelLeavesTheRunManaged() {
    admission.put(ns, pod -> ((ObjectNode) pod.get("metadata")).with("labels").put("respawn.dev/run", "7"));
    policy("p", POLICY);
    instance("a", "p");
    runningWithSidecars("a", "a-1");
    restsWithoutWrites("a", "a-1", Duration.ofSeconds(4));
    kubelet.terminated(ns, "a-1", 1, "Error", "boom");
    awaitFailureOf("a", "a-1");
    try {
      await().atMost(Duration.ofSeconds(20)).until(() -> pod("a-2") != null);
    } catch (RuntimeException e) {
      throw new AssertionError("no pod a-2; pods: " + cluster.client.pods().inNamespace(ns).list().getItems().stream()
          .map(x -> x.getMetadata().getName() + (x.getMetadata().getDeletionTimestamp() == null ? "" : "(deleting)"))
          .toList() + "; operator pod requests: " + cluster.requests.stream().filter(r -> r.byOperator()
          && r.path().startsWith("/api/v1/namespaces/" + ns + "/pods")).toList() + "\n" + describe("a"), e);
    }
    runningWithSidecars("a", "a-2");
    assertThat(status("a").path("run").asInt()).isEqualTo(2);
    assertThat(cluster.podCreatesIn(ns)).isEqualTo(2);
  }

  /**
   * No webhook: a user (or a labelling tool) overwrites respawn.dev/run on the live pod, as `kubectl label pod a-1
   * respawn.dev/run=7 --overwrite` would. The run number is the operator's own record (status.run, the pod's name):
   * the next pod must still be a-2 and status.restarts must count restarts, not labels.
   */
  @Test
  void aRelabelledRunLabelOnALivePodDoesNotRenumberTheRuns() {
    policy("p", POLICY);
    instance("a", "p");
    runningWithSidecars("a", "a-1");
    kubelet.edit(ns, "a-1", p -> p.getMetadata().getLabels().put("respawn.dev/run", "7"));
    kubelet.terminated(ns, "a-1", 1, "Error", "boom");
    JsonNode s = awaitFailureOf("a", "a-1");
    assertThat(s.path("run").asInt()).as("%s", s).isEqualTo(1);
    assertThat(s.path("restarts").asInt()).as("%s", s).isLessThanOrEqualTo(1);
    await().atMost(Duration.ofSeconds(20)).until(() -> cluster.podCreatesIn(ns) >= 2);
    assertThat(pod("a-2")).as("pods: %s", cluster.client.pods().inNamespace(ns).list().getItems().stream()
        .map(x -> x.getMetadata().getName()).toList()).isNotNull();
  }

  static void finalizer(ObjectNode pod) {
    ((ObjectNode) pod.get("metadata")).withArray("finalizers").add("backup.example.com/protect");
  }

  /**
   * A webhook adds a finalizer (backup/audit tools do). The agent exits while the classic sidecar keeps the pod
   * Running: the operator deletes the pod; once the kubelet reports every container terminated the pod is no longer
   * live, and the next run must start although the finalizer keeps the object.
   */
  @Test
  void aWebhookAddedFinalizerDoesNotBlockTheNextRun() {
    admission.put(ns, pod -> {
      istioSidecar(false).accept(pod);
      finalizer(pod);
    });
    policy("p", POLICY);
    instance("a", "p");
    runningWithSidecars("a", "a-1");
    status("a-1", "Running", states("agent", Kubelet.terminatedState(1, "Error", "boom")));
    awaitFailureOf("a", "a-1");
    await().atMost(PATIENCE).until(() -> pod("a-1").getMetadata().getDeletionTimestamp() != null);
    status("a-1", "Failed", states("agent", Kubelet.terminatedState(1, "Error", "boom"), "istio-proxy",
        Kubelet.terminatedState(0, "Completed", null)));
    try {
      await().atMost(Duration.ofSeconds(20)).until(() -> pod("a-2") != null);
    } catch (RuntimeException e) {
      throw new AssertionError("no a-2 while a finished a-1 is held by a finalizer; " + describe("a"), e);
    }
    runningWithSidecars("a", "a-2");
    kubelet.terminated(ns, "a-2", 1, "Error", "boom");
    awaitFailureOf("a", "a-2");
    await().atMost(Duration.ofSeconds(20)).until(() -> pod("a-3") != null || pod("a-2").getMetadata()
        .getDeletionTimestamp() != null);
  }
}

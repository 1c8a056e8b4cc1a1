package dev.respawn.acceptance;

import static dev.respawn.acceptance.PodMutations.*;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.mockwebserver.http.Buffer;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;

/**
 * Mutating admission on the mock API server: a chain per test namespace rewrites every pod create of the operator
 * the way an injector, a LimitRange, a policy engine, an image-digest policy and the API server's defaulting would,
 * before the store sees it, so the operator only ever sees the mutated pod (the create's answer, watches, lists),
 * as on a real cluster. The mutations are {@link PodMutations}; the kubelet writes sidecar-aware pod status.
 */
abstract class AdmissionScenario extends OperatorScenario {
  static final String POLICY = "backoff: {type: Linear, initialDelay: 1s, maxDelay: 5s}\nmaxRetries: 3\n"
      + "resume: {mode: 'Off'}";
  static final Pattern POD_CREATE = Pattern.compile("^/api/v1/namespaces/([^/]+)/pods/?(\\?.*)?$");

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
}

package dev.respawn.acceptance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * The matrix lens: drives an instance into each phase an AgentInstance can be in, so a test can apply one input
 * there. A sampler watches every pod of the test's namespace for the whole test: never two live pods of one instance.
 */
abstract class PhaseMatrixScenario extends OperatorScenario {
  static final String RESTART = "respawn.dev/restart";
  static final String RESUME = "respawn.dev/resume";
  static final String BOOM = "boom";
  static final String DEP_MESSAGE = "HTTP 503 from model API";

  /** A long linear backoff: a Backoff wait that a hold of a few seconds cannot outlive. */
  static final String BASE = "backoff: {type: Linear, initialDelay: 30s, maxDelay: 60s}\nmaxRetries: 3\n"
      + "resetAfter: 60s\nresume: {mode: 'Off'}\n";

  static String policyFor(String phase) {
    return switch (phase) {
      case "Escalated" -> BASE.replace("maxRetries: 3", "maxRetries: 0");
      case "EscalatedLatched" -> BASE.replace("maxRetries: 3", "maxRetries: 5")
          + "circuitBreaker: {failureThreshold: 1, window: 10m, openDuration: 60s, latch: true}\n";
      case "CircuitOpenOwn" -> BASE.replace("maxRetries: 3", "maxRetries: 5")
          + "circuitBreaker: {failureThreshold: 1, window: 10m, openDuration: 60s}\n";
      case "CircuitOpenDep" -> BASE + """
          dependencies:
          - name: model-api
            match: {messageContains: ["model API"]}
            failureThreshold: 1
            window: 1m
            openDuration: 60s
            probes: 1
            releaseRate: 5
          """;
      default -> BASE;
    };
  }

  private ScheduledExecutorService sampler;
  final Map<String, Integer> maxLive = new ConcurrentHashMap<>();
  final Set<String> liveViolations = ConcurrentHashMap.newKeySet();

  @BeforeEach
  void startSampler() {
    maxLive.clear();
    liveViolations.clear();
    String myNs = ns;
    sampler = Executors.newSingleThreadScheduledExecutor();
    sampler.scheduleWithFixedDelay(() -> {
      try {
        Map<String, Long> live = cluster.client.pods().inNamespace(myNs).list().getItems().stream()
            .filter(PhaseMatrixScenario::isLive)
            .collect(Collectors.groupingBy(p -> String.valueOf(p.getMetadata().getLabels() == null ? null
                : p.getMetadata().getLabels().get("respawn.dev/instance")), Collectors.counting()));
        live.forEach((inst, n) -> {
          maxLive.merge(inst, n.intValue(), Math::max);
          if (n > 1) {
            liveViolations.add(inst + " had " + n + " live pods: " + cluster.client.pods().inNamespace(myNs)
                .list().getItems().stream().filter(PhaseMatrixScenario::isLive).map(p -> p.getMetadata().getName())
                .toList());
          }
        });
      } catch (RuntimeException e) {
        // best effort
      }
    }, 0, 100, TimeUnit.MILLISECONDS);
  }

  @AfterEach
  void stopSamplerAndCheckSingleton() {
    sampler.shutdownNow();
    assertThat(liveViolations).as("never two live pods of one instance (api.md §2)").isEmpty();
  }

  static boolean isLive(Pod p) {
    if (p.getMetadata().getDeletionTimestamp() != null) {
      return false;
    }
    String phase = p.getStatus() == null ? null : p.getStatus().getPhase();
    return !"Succeeded".equals(phase) && !"Failed".equals(phase);
  }

  // ------------------------------------------------------------------ inputs

  void suspend(String instance, boolean suspend) {
    cluster.editInstanceSpec(ns, instance, spec -> spec.put("suspend", suspend));
  }

  /** One update of the whole instance (spec and annotations together). */
  @SuppressWarnings("unchecked")
  void editInstance(String instance, Consumer<Map<String, Object>> specChange, Map<String, String> annotations) {
    for (int i = 0; ; i++) {
      GenericKubernetesResource r = cluster.instance(ns, instance);
      specChange.accept((Map<String, Object>) r.getAdditionalProperties().get("spec"));
      if (r.getMetadata().getAnnotations() == null) {
        r.getMetadata().setAnnotations(new HashMap<>());
      }
      r.getMetadata().getAnnotations().putAll(annotations);
      try {
        cluster.client.genericKubernetesResources(MockCluster.INSTANCES).inNamespace(ns).resource(r).update();
        return;
      } catch (KubernetesClientException e) {
        if (e.getCode() != 409 || i > 20) {
          throw e;
        }
      }
    }
  }

  @SuppressWarnings("unchecked")
  void setImage(String instance, String image) {
    cluster.editInstanceSpec(ns, instance, spec -> {
      Map<String, Object> t = (Map<String, Object>) spec.get("template");
      Map<String, Object> ps = (Map<String, Object>) t.get("spec");
      java.util.List<Map<String, Object>> cs = (java.util.List<Map<String, Object>>) ps.get("containers");
      cs.get(0).put("image", image);
    });
  }

  void deletePolicy(String name) {
    cluster.client.genericKubernetesResources(MockCluster.POLICIES).inNamespace(ns).withName(name).delete();
    await().atMost(PATIENCE).until(() -> cluster.client.genericKubernetesResources(MockCluster.POLICIES)
        .inNamespace(ns).withName(name).get() == null);
  }

  // ------------------------------------------------------------------ observing

  Set<String> warningKeys(String instance) {
    return events(instance).stream().filter(e -> "Warning".equals(e.getType()))
        .map(e -> e.getMetadata().getUid() + "/" + (e.getSeries() == null ? 1 : e.getSeries().getCount()))
        .collect(Collectors.toSet());
  }

  String warnings(String instance) {
    return events(instance).stream().filter(e -> "Warning".equals(e.getType()))
        .map(e -> e.getReason() + ": " + e.getNote()).collect(Collectors.joining(" | "));
  }

  boolean goneOrDeleting(String pod) {
    Pod p = pod(pod);
    return p == null || p.getMetadata().getDeletionTimestamp() != null;
  }

  static String text(JsonNode n) {
    return n.isMissingNode() || n.isNull() ? "" : n.asText();
  }

  static String pod(String instance, int run) {
    return instance + "-" + run;
  }

  // ------------------------------------------------------------------ driving into a phase

  /**
   * Creates policy p (when the phase needs one) and instance {@code i} and drives it into the phase; returns the
   * number of the last run made (0 before any).
   */
  int drive(String phase, String i) {
    if (!"Pending".equals(phase)) {
      policy("p", policyFor(phase));
    }
    instance(i, "p");
    switch (phase) {
      case "Pending" -> {
        awaitStatus(i, s -> readyReason(s).endsWith("/PolicyNotFound"));
        return 0;
      }
      case "Starting" -> {
        awaitPod(pod(i, 1));
        awaitPhase(i, "Starting");
        return 1;
      }
      default -> startRun(i, pod(i, 1));
    }
    switch (phase) {
      case "Running" -> {
        return 1;
      }
      case "Backoff", "Escalated", "EscalatedLatched" -> kubelet.terminated(ns, pod(i, 1), 1, "Error", BOOM);
      case "Failed" -> kubelet.terminated(ns, pod(i, 1), 1, "Error", "invalid_configuration: bad key");
      case "Succeeded" -> kubelet.terminated(ns, pod(i, 1), 0, "Completed", null);
      case "CircuitOpenOwn" -> kubelet.terminated(ns, pod(i, 1), 1, "Error", BOOM);
      case "CircuitOpenDep" -> kubelet.terminated(ns, pod(i, 1), 1, "Error", DEP_MESSAGE);
      case "Suspended" -> suspend(i, true);
      default -> throw new IllegalArgumentException(phase);
    }
    switch (phase) {
      case "CircuitOpenOwn" -> awaitStatus(i, s -> "CircuitOpen".equals(text(s.path("phase")))
          && "Open".equals(text(s.path("circuitBreaker").path("state"))));
      case "CircuitOpenDep" -> {
        awaitStatus(i, s -> "CircuitOpen".equals(text(s.path("phase")))
            && "model-api".equals(text(s.path("waitingFor"))));
        await().atMost(PATIENCE).until(() -> "Open".equals(
            text(cluster.policyStatus(ns, "p").path("dependencies").path(0).path("state"))));
      }
      case "EscalatedLatched" -> awaitStatus(i, s -> "Escalated".equals(text(s.path("phase")))
          && "CircuitBreakerOpen".equals(text(s.path("terminalReason"))));
      case "Suspended" -> {
        awaitPhase(i, "Suspended");
        await().atMost(PATIENCE).until(() -> goneOrDeleting(pod(i, 1)));
      }
      default -> awaitPhase(i, phase);
    }
    return 1;
  }
}

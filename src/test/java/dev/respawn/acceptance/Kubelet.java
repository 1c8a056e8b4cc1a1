package dev.respawn.acceptance;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The test plays the kubelet: it writes pod status the way a node would (phase, container states, conditions).
 * Container states are plain maps, built with {@link #runningState()}, {@link #waitingState}, {@link #terminatedState}.
 */
final class Kubelet {
  private final MockCluster cluster;

  Kubelet(MockCluster cluster) {
    this.cluster = cluster;
  }

  static String now() {
    return Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
  }

  /** Every container of the pod running and ready. */
  void running(String ns, String pod) {
    List<Map<String, Object>> containers = new ArrayList<>();
    for (String c : containerNames(ns, pod)) {
      containers.add(container(c, runningState(), true));
    }
    setStatus(ns, pod, podStatus("Running", containers, true));
  }

  /** Every container of the pod terminated with this exit; pod phase Succeeded (exit 0) or Failed. */
  void terminated(String ns, String pod, int exitCode, String reason, String message) {
    List<Map<String, Object>> containers = new ArrayList<>();
    for (String c : containerNames(ns, pod)) {
      containers.add(container(c, terminatedState(exitCode, reason, message), false));
    }
    setStatus(ns, pod, podStatus(exitCode == 0 ? "Succeeded" : "Failed", containers, false));
  }

  /** Every container waiting with this reason (ErrImagePull, CreateContainerConfigError, ...); phase Pending. */
  void waiting(String ns, String pod, String reason, String message) {
    List<Map<String, Object>> containers = new ArrayList<>();
    for (String c : containerNames(ns, pod)) {
      containers.add(container(c, waitingState(reason, message), false));
    }
    setStatus(ns, pod, podStatus("Pending", containers, false));
  }

  List<String> containerNames(String ns, String pod) {
    return cluster.pod(ns, pod).getSpec().getContainers().stream().map(c -> c.getName()).toList();
  }

  // ------------------------------------------------------------------ building blocks

  static Map<String, Object> runningState() {
    return Map.of("running", Map.of("startedAt", now()));
  }

  static Map<String, Object> waitingState(String reason, String message) {
    return Map.of("waiting", Map.of("reason", reason, "message", message));
  }

  static Map<String, Object> terminatedState(int exitCode, String reason, String message) {
    Map<String, Object> t = new HashMap<>();
    t.put("exitCode", exitCode);
    if (reason != null) {
      t.put("reason", reason);
    }
    if (message != null) {
      t.put("message", message);
    }
    t.put("startedAt", now());
    t.put("finishedAt", now());
    t.put("containerID", "containerd://0123abcd");
    return Map.of("terminated", t);
  }

  static Map<String, Object> container(String name, Map<String, Object> state, boolean ready) {
    Map<String, Object> m = new HashMap<>();
    m.put("name", name);
    m.put("image", "example/agent:1");
    m.put("imageID", "");
    m.put("ready", ready);
    m.put("restartCount", 0);
    m.put("started", state.containsKey("running"));
    m.put("state", state);
    return m;
  }

  static Map<String, Object> podStatus(String phase, List<Map<String, Object>> containers, boolean ready) {
    Map<String, Object> s = new HashMap<>();
    s.put("phase", phase);
    s.put("hostIP", "10.0.0.1");
    s.put("podIP", "10.1.0.5");
    s.put("startTime", now());
    s.put("containerStatuses", containers);
    s.put("conditions", List.of(condition("PodScheduled", "True"), condition("Initialized", "True"),
        condition("Ready", ready ? "True" : "False"), condition("ContainersReady", ready ? "True" : "False")));
    return s;
  }

  static Map<String, Object> condition(String type, String status) {
    return Map.of("type", type, "status", status, "lastTransitionTime", now());
  }

  /** Writes the pod's status (read-modify-write, retried on conflict). */
  void setStatus(String ns, String pod, Map<String, Object> status) {
    edit(ns, pod, p -> p.setStatus(MockCluster.JSON.convertValue(status, PodStatus.class)));
  }

  void edit(String ns, String pod, Consumer<Pod> change) {
    for (int i = 0; ; i++) {
      Pod p = cluster.pod(ns, pod);
      if (p == null) {
        throw new IllegalStateException("no pod " + ns + "/" + pod);
      }
      change.accept(p);
      try {
        cluster.client.pods().inNamespace(ns).resource(p).update();
        return;
      } catch (KubernetesClientException e) {
        if (e.getCode() != 409 || i > 20) {
          throw e;
        }
      }
    }
  }
}

package dev.respawn.acceptance;

import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.events.v1.Event;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * A test class of the acceptance suite: one mock cluster and one operator process for the class, a namespace of
 * its own for each test (the operator watches all namespaces), the test playing kubelet, agent and user.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(180)
abstract class OperatorScenario {
  static final Duration PATIENCE = Duration.ofSeconds(45);

  MockCluster cluster;
  OperatorProcess operator;
  Kubelet kubelet;
  AgentLease agent;
  PluginCli plugin;
  /** This test's namespace (named after the test, numbered: a parameterized test has one per invocation). */
  String ns;
  private int testsRun;

  @BeforeAll
  void startClusterAndOperator() throws Exception {
    cluster = new MockCluster();
    kubelet = new Kubelet(cluster);
    agent = new AgentLease(cluster);
    plugin = new PluginCli(cluster);
    operator = new OperatorProcess(cluster, getClass().getSimpleName(), operatorArgs()).start();
  }

  /** Extra flags for the operator command. */
  String[] operatorArgs() {
    return new String[0];
  }

  @BeforeEach
  void namespaceForThisTest(TestInfo info) {
    String m = info.getTestMethod().map(x -> x.getName()).orElse("t");
    String name = m.replaceAll("([a-z])([A-Z])", "$1-$2").toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9-]", "");
    String numbered = "t" + testsRun++ + "-" + name;
    ns = numbered.substring(0, Math.min(numbered.length(), 55)).replaceAll("-+$", "");
  }

  @AfterAll
  void stopEverything() throws Exception {
    if (agent != null) {
      agent.close();
    }
    if (operator != null) {
      operator.close();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  // ------------------------------------------------------------------ manifests

  void policy(String name, String spec) {
    cluster.apply(ns, "apiVersion: respawn.dev/v1alpha1\nkind: AgentRestartPolicy\nmetadata: {name: " + name
        + "}\nspec:\n" + indent(spec));
  }

  /** An instance with one container named agent. */
  void instance(String name, String policy) {
    instance(name, policy, "");
  }

  void instance(String name, String policy, String extraSpec) {
    instanceWithPodSpec(name, policy, extraSpec, "containers:\n- {name: agent, image: example/agent:1}");
  }

  void instanceWithPodSpec(String name, String policy, String extraSpec, String podSpec) {
    cluster.apply(ns, "apiVersion: respawn.dev/v1alpha1\nkind: AgentInstance\nmetadata: {name: " + name
        + "}\nspec:\n" + (policy == null ? "" : "  policyRef: {name: " + policy + "}\n") + indent(extraSpec)
        + "  template:\n    spec:\n" + indent(indent(indent(podSpec))));
  }

  static String indent(String s) {
    if (s.isBlank()) {
      return "";
    }
    return s.stripTrailing().lines().map(l -> "  " + l).collect(Collectors.joining("\n")) + "\n";
  }

  // ------------------------------------------------------------------ observing

  JsonNode status(String instance) {
    return cluster.status(ns, instance);
  }

  String phase(String instance) {
    return status(instance).path("phase").asText("");
  }

  static JsonNode condition(JsonNode status, String type) {
    for (JsonNode c : status.path("conditions")) {
      if (type.equals(c.path("type").asText())) {
        return c;
      }
    }
    return MockCluster.JSON.createObjectNode();
  }

  Pod pod(String name) {
    return cluster.pod(ns, name);
  }

  List<Event> events(String instance) {
    return cluster.events(ns, "AgentInstance", instance);
  }

  String describe(String instance) {
    StringBuilder b = new StringBuilder("status of ").append(ns).append('/').append(instance).append(": ")
        .append(status(instance)).append("\npods:");
    for (Pod p : cluster.podsOf(ns, instance)) {
      b.append(' ').append(p.getMetadata().getName()).append('=')
          .append(p.getStatus() == null ? null : p.getStatus().getPhase());
    }
    b.append("\nevents:");
    for (Event e : events(instance)) {
      b.append("\n  ").append(e.getType()).append(' ').append(e.getReason()).append(": ").append(e.getNote());
    }
    return b.append("\noperator log tail:\n").append(operator.tail()).toString();
  }

  JsonNode awaitStatus(String instance, Predicate<JsonNode> condition) {
    return awaitStatus(instance, condition, PATIENCE);
  }

  JsonNode awaitStatus(String instance, Predicate<JsonNode> condition, Duration atMost) {
    try {
      await().atMost(atMost).pollInterval(Duration.ofMillis(200)).until(() -> condition.test(status(instance)));
    } catch (RuntimeException | AssertionError e) {
      throw new AssertionError("condition never held; " + describe(instance), e);
    }
    return status(instance);
  }

  JsonNode awaitPhase(String instance, String phase) {
    return awaitStatus(instance, s -> phase.equals(s.path("phase").asText()));
  }

  /** The failure of this pod has been decided. */
  JsonNode awaitFailureOf(String instance, String pod) {
    return awaitStatus(instance, s -> pod.equals(s.path("lastFailure").path("pod").asText()));
  }

  Pod awaitPod(String name) {
    await().atMost(PATIENCE).pollInterval(Duration.ofMillis(200)).until(() -> pod(name) != null);
    return pod(name);
  }

  /** The pod appears, the kubelet starts it, the instance is Running with it. */
  void startRun(String instance, String pod) {
    awaitPod(pod);
    kubelet.running(ns, pod);
    awaitStatus(instance, s -> "Running".equals(s.path("phase").asText())
        && pod.equals(s.path("currentPod").asText()));
  }

  /** The Lease exists and the agent has renewed it once as this pod. */
  void heartbeat(String lease, String pod) {
    await().atMost(PATIENCE).until(() -> agent.get(ns, lease) != null);
    agent.renew(ns, lease, pod);
  }

  /** Holds for the whole window (a fixed observation period for "nothing happens"). */
  static void holdsFor(Duration window, Callable<Boolean> condition) {
    // from now: one poll that finds it false fails at once (during() alone lets it turn true late, then hold)
    await().failFast("the condition did not hold from the start of the window", () -> !condition.call())
        .during(window).atMost(window.plusSeconds(10)).pollInterval(Duration.ofMillis(250)).until(condition);
  }

  static String readyReason(JsonNode status) {
    JsonNode c = condition(status, "Ready");
    return c.path("status").asText() + "/" + c.path("reason").asText();
  }
}

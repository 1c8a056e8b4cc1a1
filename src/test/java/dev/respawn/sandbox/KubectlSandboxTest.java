package dev.respawn.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.OperatorRequest;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The real kubectl (on the PATH; .ci/run installs it when missing) against the sandbox, with the
 * kubeconfig the sandbox writes: every command of the README's sandbox section.
 */
class KubectlSandboxTest {
  static final Duration AT_MOST = Duration.ofSeconds(60);
  static Sandbox sandbox;
  static Path kubeconfig;
  static Path cache;
  static KubernetesClient client;

  /** What one kubectl command printed, and how it ended. */
  record Ran(int code, String out) {}

  @BeforeAll
  static void start() throws IOException {
    Path dir = Files.createTempDirectory("kubectl-sandbox");
    cache = dir.resolve("cache");
    sandbox = new Sandbox(new PrintWriter(new StringWriter(), true), 0, new TimeScale(10));
    kubeconfig = sandbox.api().writeKubeconfig(dir.resolve("sandbox.kubeconfig"));
    client = sandbox.api().client();
    sandbox.start(Optional.of(Path.of("examples")));
    // the story's end: every agent in the state the README's transcript shows
    await().atMost(Duration.ofSeconds(120)).until(sandbox::storyComplete);
  }

  @AfterAll
  static void stop() {
    if (sandbox != null) {
      sandbox.close();
    }
  }

  static List<String> command(String... args) {
    List<String> c = new ArrayList<>(List.of("kubectl", "--kubeconfig", kubeconfig.toString(), "--cache-dir",
        cache.toString()));
    c.addAll(List.of(args));
    return c;
  }

  static Ran kubectl(String... args) {
    try {
      Process p = new ProcessBuilder(command(args)).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("kubectl %s ended", String.join(" ", args)).isTrue();
      return new Ran(p.exitValue(), out);
    } catch (IOException e) {
      throw new UncheckedIOException("kubectl must be on the PATH for this test (.ci/run installs it)", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  static Ran ok(String... args) {
    Ran r = kubectl(args);
    assertThat(r.code()).as("kubectl %s:%n%s", String.join(" ", args), r.out()).isZero();
    return r;
  }

  static String squeeze(String s) {
    return s.replaceAll("[ \\t]+", " ");
  }

  /**
   * A fabric8 client outside the sandbox (as the kubectl-respawn plugin's restart --wait is) watches through it:
   * its WebSocket handshake is answered at once, and it watches over HTTP. Streamed to, the handshake waited
   * for good and the watch never saw an event.
   */
  @Test
  void aFabric8ClientWatchesThroughTheSandbox() throws Exception {
    io.fabric8.kubernetes.client.Config config = io.fabric8.kubernetes.client.Config.fromKubeconfig(
        Files.readString(kubeconfig));
    try (KubernetesClient outside = new io.fabric8.kubernetes.client.KubernetesClientBuilder().withConfig(config)
        .build()) {
      List<String> seen = new CopyOnWriteArrayList<>();
      var coder = outside.resources(AgentInstance.class).inNamespace("agents").withName("coder");
      try (io.fabric8.kubernetes.client.Watch watch = coder.watch(new io.fabric8.kubernetes.client.Watcher<>() {
        @Override
        public void eventReceived(Action action, AgentInstance resource) {
          seen.add(action + " " + resource.getMetadata().getAnnotations().get("respawn.dev/watch-test"));
        }

        @Override
        public void onClose(io.fabric8.kubernetes.client.WatcherException cause) {}
      })) {
        coder.edit(i -> {
          i.getMetadata().getAnnotations().put("respawn.dev/watch-test", "seen");
          return i;
        });
        await().atMost(Duration.ofSeconds(10)).until(() -> seen.contains("MODIFIED seen"));
      }
    }
  }

  @Test
  void getAgentInstancesShowsTheCrdsPrinterColumns() {
    String out = squeeze(ok("get", "agentinstances", "-n", "agents").out());
    assertThat(out).startsWith("NAME PHASE RESTARTS ATTEMPT CIRCUIT HEARTBEAT NEXT-RESTART AGE");
    assertThat(out).containsPattern("(?m)^coder [A-Za-z]+ \\d+ \\d+ (Closed|Open|HalfOpen) ")
        .containsPattern("(?m)^researcher [A-Za-z]+ \\d+ \\d+ (Closed|Open|HalfOpen) (Healthy|Stale) ")
        .containsPattern("(?m)^reviewer Failed 0 0 Closed ").contains("tdd", "worker", "fleet-3");
    assertThat(squeeze(ok("get", "agentinstances", "-n", "agents", "-o", "wide").out()))
        .startsWith("NAME PHASE RESTARTS ATTEMPT CIRCUIT HEARTBEAT NEXT-RESTART AGE");
    assertThat(ok("get", "agi", "coder", "-n", "agents", "-o", "yaml").out())
        .contains("kind: AgentInstance", "name: coder", "status:").containsPattern("phase: [A-Za-z]+");
  }

  @Test
  void shortNamesAndSeveralKindsAtOnce() {
    assertThat(squeeze(ok("get", "arp", "-n", "agents").out()))
        .startsWith("NAME TYPE MAX-RETRIES INITIAL MAX-DELAY THRESHOLD ACCEPTED AGE")
        .containsPattern("(?m)^coding-agent Exponential 3 200ms 12s True \\S+$"); // ACCEPTED: a JSONPath filter
    String both = squeeze(ok("get", "pods,leases", "-n", "agents").out());
    assertThat(both).contains("NAME READY STATUS RESTARTS AGE").containsPattern("pod/reviewer-1 0/1 Error 0 ")
        .contains("NAME HOLDER AGE").containsPattern("lease.coordination.k8s.io/researcher-heartbeat researcher-\\d+ ");
  }

  @Test
  void describeShowsConditionsAndEvents() {
    String out = ok("describe", "agentinstance", "coder", "-n", "agents").out();
    assertThat(out).contains("Name:", "coder", "Conditions:", "Ready", "Events:");
    assertThat(squeeze(out)).contains("Warning RestartFailed").contains("Normal RestartStarted")
        .contains("respawn.dev/operator");
  }

  @Test
  void waitForReady() {
    assertThat(ok("wait", "--for=condition=Ready", "agentinstance/coder", "-n", "agents", "--timeout=60s").out())
        .contains("agentinstance.respawn.dev/coder condition met");
  }

  @Test
  void annotateARestartRequestAndTheOperatorActsOnIt() {
    assertThat(ok("annotate", "agentinstance", "tdd", "-n", "agents", "respawn.dev/restart=kubectl-1").out())
        .contains("agentinstance.respawn.dev/tdd annotated");
    await().atMost(AT_MOST).until(() -> {
      AgentInstance i = client.resources(AgentInstance.class).inNamespace("agents").withName("tdd").get();
      Map<String, String> handled = i.getStatus().handledRequests;
      return handled != null && "kubectl-1".equals(handled.get(OperatorRequest.RESTART.statusKey()))
          && "Manual".equals(i.getStatus().lastRestart.kind);
    });
    // a key removed with "key-" is gone (a JSON merge patch with null, applied as RFC 7386 says)
    ok("annotate", "agentinstance", "tdd", "-n", "agents", "team=agents");
    ok("annotate", "agentinstance", "tdd", "-n", "agents", "team-");
    assertThat(client.resources(AgentInstance.class).inNamespace("agents").withName("tdd").get().getMetadata()
        .getAnnotations()).doesNotContainKey("team").containsKey("respawn.dev/restart");
  }

  @Test
  void applyConfiguresTheExamplesAndCreatesNewObjects() throws IOException {
    assertThat(ok("apply", "-f", "examples/02-permanent-failures.yaml").out())
        .containsPattern("agentrestartpolicy.respawn.dev/fail-fast-on-config (configured|unchanged)")
        .containsPattern("agentinstance.respawn.dev/reviewer (configured|unchanged)");
    Path extra = Files.createTempFile("extra-agent", ".yaml");
    Files.writeString(extra, """
        apiVersion: respawn.dev/v1alpha1
        kind: AgentInstance
        metadata: {name: applied, namespace: agents}
        spec:
          policyRef: {name: coding-agent}
          template:
            spec:
              containers: [{name: agent, image: registry.example/agents/coder:1.4}]
        """);
    assertThat(ok("apply", "-f", extra.toString()).out()).contains("agentinstance.respawn.dev/applied created");
    await().atMost(AT_MOST).until(() -> {
      AgentInstance i = client.resources(AgentInstance.class).inNamespace("agents").withName("applied").get();
      return i.getStatus() != null && i.getStatus().run != null && i.getStatus().run >= 1;
    });
  }

  @Test
  void explainReadsTheCrdSchema() {
    String out = ok("explain", "agentinstance.spec.template").out();
    assertThat(out).contains("KIND:       AgentInstance", "VERSION:    v1alpha1", "FIELD: template <Object>",
        "FIELDS:", "spec\t<Object>");
  }

  @Test
  void getWatchStreamsChangesAsTheyHappen() throws Exception {
    Process watch = new ProcessBuilder(command("get", "agentinstances", "-n", "agents", "-w"))
        .redirectErrorStream(true).start();
    List<String> lines = new CopyOnWriteArrayList<>();
    Thread reader = new Thread(() -> {
      try (BufferedReader in = new BufferedReader(new InputStreamReader(watch.getInputStream(),
          StandardCharsets.UTF_8))) {
        for (String line = in.readLine(); line != null; line = in.readLine()) {
          lines.add(line);
        }
      } catch (IOException e) {
        lines.add("read failed: " + e);
      }
    });
    reader.start();
    try {
      await().atMost(AT_MOST).until(() -> lines.stream().anyMatch(l -> l.startsWith("worker ")));
      int before = (int) lines.stream().filter(l -> l.startsWith("worker ")).count();
      ok("annotate", "agentinstance", "worker", "-n", "agents", "respawn.dev/restart=watched-1");
      // the annotation, the restart and the new run arrive as rows of their own
      await().atMost(AT_MOST).until(() -> lines.stream().filter(l -> l.startsWith("worker ")).count() >= before + 2);
      assertThat(watch.isAlive()).as("kubectl get -w keeps watching: %s", lines).isTrue();
    } finally {
      watch.destroy();
      watch.waitFor(10, TimeUnit.SECONDS);
      reader.join(10_000);
    }
  }
}

package dev.respawn.sandbox;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import dev.respawn.controller.DecisionSink;
import dev.respawn.controller.OperatorSettings;
import dev.respawn.controller.RespawnOperator;
import dev.respawn.observability.KubeEventRecorder;
import dev.respawn.observability.ReportingSink;
import dev.respawn.observability.RestartMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The no-cluster sandbox: a local API server with the CRDs, the operator, a simulated kubelet and
 * the examples, with the lifecycle narrated as it happens.
 */
public final class Sandbox implements AutoCloseable {
  public static final String NAMESPACE = "agents";
  static final String LAST_APPLIED = dev.respawn.controller.TrimmedStore.LAST_APPLIED;
  static final List<String> EXAMPLES = List.of("00-namespace.yaml", "01-coding-agent-exponential.yaml",
      "02-permanent-failures.yaml", "03-heartbeat-resume.yaml", "04-restart-request-exit-42.yaml",
      "05-latched-circuit.yaml", "06-shared-model-api.yaml");

  private final PrintWriter out;
  private final TimeScale scale;
  private final SandboxApiServer api;
  private final SimulatedKubelet kubelet;
  private final RespawnOperator operator;
  private final Narrator narrator;
  private final SandboxStory story = new SandboxStory();
  private SharedIndexInformer<AgentInstance> watch;
  private final AtomicBoolean stalled = new AtomicBoolean();
  private final AtomicBoolean resumed = new AtomicBoolean();
  private String lastTable = "";

  /** A sandbox whose operator reports as in production: Events (kubectl describe shows them), audit, metrics. */
  public Sandbox(PrintWriter out, int port, TimeScale scale) {
    this.out = out;
    this.scale = scale;
    this.api = new SandboxApiServer(port);
    this.kubelet = new SimulatedKubelet(api.newClient(), NAMESPACE);
    KubernetesClient operatorClient = api.newClient();
    DecisionSink sink = new ReportingSink(new KubeEventRecorder(operatorClient, "respawn-sandbox",
        InstantSource.system()), new RestartMetrics(new SimpleMeterRegistry()));
    this.operator = new RespawnOperator(operatorClient, OperatorSettings.defaults(), sink, Optional.empty());
    this.narrator = new Narrator(out, InstantSource.system());
  }

  public SandboxApiServer api() {
    return api;
  }

  /** Starts the operator and the kubelet, applies the examples, and narrates from then on. */
  public void start(Optional<Path> examples) throws IOException {
    operator.start();
    story.scripts().forEach(kubelet::script);
    kubelet.start();
    KubernetesClient client = api.client();
    watch = client.resources(AgentInstance.class).inNamespace(NAMESPACE).inform(new ResourceEventHandler<>() {
      @Override
      public void onAdd(AgentInstance i) {
        narrator.changed(null, i);
      }

      @Override
      public void onUpdate(AgentInstance old, AgentInstance now) {
        narrator.changed(old, now);
        direct(now);
      }

      @Override
      public void onDelete(AgentInstance i, boolean unknown) {}
    });
    for (String file : EXAMPLES) {
      for (HasMetadata o : load(client.getKubernetesSerialization(), examples, file)) {
        if (o instanceof AgentRestartPolicy p) {
          scale.compress(p.getSpec());
        }
        // as `kubectl apply` would have left it, so that a later `kubectl apply -f examples/...` merges cleanly
        o.getMetadata().setAnnotations(new java.util.HashMap<>(o.getMetadata().getAnnotations() == null ? Map.of()
            : o.getMetadata().getAnnotations()));
        o.getMetadata().getAnnotations().put(LAST_APPLIED, client.getKubernetesSerialization().asJson(o));
        client.resource(o).create();
      }
      out.println("applied examples/" + file);
    }
  }

  /** The parts a person plays in the story: the researcher's agent hangs, an operator resumes the worker. */
  private void direct(AgentInstance i) {
    if (story.stallsHeartbeat(i) && stalled.compareAndSet(false, true)) {
      kubelet.stopHeartbeats();
      out.println("           researcher  (the agent hangs: its heartbeat stops)");
    }
    if (story.needsResume(i) && resumed.compareAndSet(false, true)) {
      out.println("           worker      (an operator looks, then: kubectl respawn resume worker --force)");
      api.client().resources(AgentInstance.class).inNamespace(NAMESPACE).withName("worker").edit(w -> {
        w.getMetadata().setAnnotations(new java.util.HashMap<>(w.getMetadata().getAnnotations() == null
            ? Map.of() : w.getMetadata().getAnnotations()));
        w.getMetadata().getAnnotations().put(AgentInstance.RESUME_ANNOTATION, SandboxStory.RESUME_ID);
        return w;
      });
    }
  }

  public List<AgentInstance> instances() {
    return api.client().resources(AgentInstance.class).inNamespace(NAMESPACE).list().getItems();
  }

  /**
   * True when every example agent reached the end of its story as the narrator has told it, so
   * that no line of the story is still on its way when the sandbox says it is over.
   */
  public boolean storyComplete() {
    List<AgentInstance> all = narrator.told();
    return all.size() == story.scripts().size() && all.stream().allMatch(story::finished);
  }

  /** Names of the agents whose story is not over yet. */
  public List<String> unfinished() {
    List<String> names = new ArrayList<>();
    for (AgentInstance i : instances()) {
      if (!story.finished(i)) {
        names.add(i.getMetadata().getName() + " (" + (i.getStatus() == null ? "no status" : i.getStatus().phase)
            + ")");
      }
    }
    return names;
  }

  public void printTable() {
    narrator.table(instances());
  }

  /** Prints the table when something changed since it was last printed. */
  private void printTableIfChanged() {
    List<AgentInstance> now = instances();
    String key = now.stream().map(i -> i.getMetadata().getName() + (i.getStatus() == null ? "" : i.getStatus().phase
        + "/" + i.getStatus().run + "/" + i.getStatus().attempt)).sorted().toList().toString();
    if (!key.equals(lastTable)) {
      lastTable = key;
      narrator.table(now);
    }
  }

  /** Waits for the story to complete, printing the table every {@code every}; true when it did. */
  public boolean await(Duration timeout, Duration every) throws InterruptedException {
    Instant deadline = Instant.now().plus(timeout);
    Instant nextTable = Instant.now().plus(every);
    while (Instant.now().isBefore(deadline)) {
      if (storyComplete()) {
        return true;
      }
      if (Instant.now().isAfter(nextTable)) {
        printTableIfChanged();
        nextTable = Instant.now().plus(every);
      }
      synchronized (this) {
        wait(100);
      }
    }
    return storyComplete();
  }

  private static List<HasMetadata> load(KubernetesSerialization serialization, Optional<Path> dir, String file)
      throws IOException {
    serialization.registerKubernetesResource(AgentRestartPolicy.class);
    serialization.registerKubernetesResource(AgentInstance.class);
    try (InputStream in = dir.isPresent() && Files.isRegularFile(dir.get().resolve(file))
        ? Files.newInputStream(dir.get().resolve(file)) : Sandbox.class.getResourceAsStream("/examples/" + file)) {
      if (in == null) {
        throw new IOException("example " + file + " not found (neither in the examples directory nor in the jar)");
      }
      Object parsed = serialization.unmarshal(in);
      List<HasMetadata> objects = new ArrayList<>();
      if (parsed instanceof List<?> l) {
        l.forEach(o -> objects.add((HasMetadata) o));
      } else {
        objects.add((HasMetadata) parsed);
      }
      return objects;
    }
  }

  @Override
  public void close() {
    if (watch != null) {
      watch.close();
    }
    operator.close();
    kubelet.close();
    api.close();
  }
}

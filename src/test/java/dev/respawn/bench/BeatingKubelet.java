package dev.respawn.bench;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.heartbeat.HeartbeatLeases;
import dev.respawn.sandbox.PodStatuses;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The kubelet and the agents of a benchmark world that behaves like production: every new pod of an
 * instance runs at once and its agent renews its heartbeat Lease every {@link #RENEW_EVERY} (one JSON
 * merge patch of holderIdentity, renewTime and the Healthy verdict, as an agent does); while the upstream
 * they share is down ({@link #outageBegins}), every running agent fails (exit 1, "HTTP 503" in its
 * termination message) and an agent started meanwhile fails {@link #FAIL_AFTER} later, unless the
 * upstream came back first. It remembers when each pod appeared, to count restarts per period.
 */
final class BeatingKubelet implements AutoCloseable {
  static final Duration RENEW_EVERY = Duration.ofSeconds(10);
  static final Duration FAIL_AFTER = Duration.ofSeconds(2);
  static final String OUTAGE_MESSAGE = "upstream model API answered HTTP 503";

  private final KubernetesClient client;
  private final String namespace;
  private final SharedIndexInformer<Pod> pods;
  private final ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(4);
  private final Map<String, Future<?>> renewals = new ConcurrentHashMap<>();
  private final Map<String, Boolean> started = new ConcurrentHashMap<>();
  private final List<Long> appeared = new CopyOnWriteArrayList<>();
  private final AtomicLong renewed = new AtomicLong();
  private final AtomicLong errors = new AtomicLong();
  private volatile boolean upstreamDown;

  BeatingKubelet(KubernetesClient client, String namespace) {
    this.client = client;
    this.namespace = namespace;
    executor.setRemoveOnCancelPolicy(true);
    pods = client.pods().inNamespace(namespace).withLabel(AgentInstance.INSTANCE_LABEL).inform(
        new ResourceEventHandler<>() {
          @Override
          public void onAdd(Pod pod) {
            seen(pod);
          }

          @Override
          public void onUpdate(Pod old, Pod pod) {
            seen(pod);
          }

          @Override
          public void onDelete(Pod pod, boolean unknown) {
            stopRenewing(pod.getMetadata().getUid());
          }
        });
  }

  private void seen(Pod pod) {
    boolean fresh = pod.getStatus() == null || pod.getStatus().getPhase() == null
        || "Pending".equals(pod.getStatus().getPhase());
    if (fresh && started.putIfAbsent(pod.getMetadata().getUid(), Boolean.TRUE) == null) {
      appeared.add(System.nanoTime());
      executor.execute(() -> start(pod));
    }
  }

  private void start(Pod pod) {
    try {
      Pod running = PodStatuses.running(Serialization.clone(pod), Instant.now());
      client.pods().inNamespace(namespace).resource(running).updateStatus();
    } catch (KubernetesClientException e) {
      errors.incrementAndGet();
      return;
    }
    String uid = pod.getMetadata().getUid();
    // agents do not start in lock-step: the first renewal at once, the next ones spread over the period (by the
    // pod's name, so that a run can be repeated)
    long phase = Math.floorMod(pod.getMetadata().getName().hashCode(), RENEW_EVERY.toMillis());
    renew(pod);
    renewals.put(uid, executor.scheduleAtFixedRate(() -> renew(pod), phase, RENEW_EVERY.toMillis(),
        TimeUnit.MILLISECONDS));
    if (upstreamDown) {
      executor.schedule(() -> failIfDown(pod.getMetadata().getName()), FAIL_AFTER.toMillis(), TimeUnit.MILLISECONDS);
    }
  }

  private void renew(Pod pod) {
    String holder = pod.getMetadata().getName();
    String patch = "{\"metadata\":{\"annotations\":{\"" + HeartbeatLeases.HEALTH + "\":\"Healthy\"}},"
        + "\"spec\":{\"holderIdentity\":\"" + holder + "\",\"renewTime\":\""
        + HeartbeatThroughput.microTime(Instant.now()) + "\"}}";
    try {
      client.leases().inNamespace(namespace).withName(leaseName(pod)).patch(PatchContext.of(PatchType.JSON_MERGE),
          patch);
      renewed.incrementAndGet();
    } catch (KubernetesClientException e) {
      errors.incrementAndGet(); // a Lease not created yet: the next renewal will do
    }
  }

  private void failIfDown(String podName) {
    if (!upstreamDown) {
      return;
    }
    Pod pod = pods.getIndexer().getByKey(namespace + "/" + podName);
    if (pod == null || !Observer.running(pod)) {
      return;
    }
    stopRenewing(pod.getMetadata().getUid());
    Pod failed = PodStatuses.terminated(Serialization.clone(pod), null, 1, "Error", OUTAGE_MESSAGE, Instant.now());
    try {
      client.pods().inNamespace(namespace).resource(failed).updateStatus();
    } catch (KubernetesClientException e) {
      errors.incrementAndGet();
    }
  }

  /** The upstream goes down: every running agent fails now (8 writers), the ones started meanwhile soon. */
  void outageBegins() {
    upstreamDown = true;
    List<String> live = pods.getIndexer().list().stream().filter(Observer::running)
        .map(p -> p.getMetadata().getName()).toList();
    AgentFleet.inParallel(live, this::failIfDown);
  }

  void outageEnds() {
    upstreamDown = false;
  }

  /** Pods that appeared in [from, to) (System.nanoTime()). */
  long appearedBetween(long from, long to) {
    return appeared.stream().filter(t -> t >= from && t < to).count();
  }

  /** The most pods that appeared within one second, from {@code from} on. */
  long peakPerSecond(long from) {
    return Samples.peakInAnySecond(appeared.stream().filter(t -> t >= from).toList());
  }

  /** Pods that appeared in each second from {@code from} on, up to the last one (for the log). */
  List<Long> perSecond(long from) {
    List<Long> times = appeared.stream().filter(t -> t >= from).sorted().toList();
    if (times.isEmpty()) {
      return List.of();
    }
    int seconds = (int) ((times.get(times.size() - 1) - from) / 1_000_000_000L) + 1;
    long[] counts = new long[seconds];
    times.forEach(t -> counts[(int) ((t - from) / 1_000_000_000L)]++);
    return java.util.Arrays.stream(counts).boxed().toList();
  }

  long renewals() {
    return renewed.get();
  }

  long errors() {
    return errors.get();
  }

  private void stopRenewing(String uid) {
    Future<?> f = renewals.remove(uid);
    if (f != null) {
      f.cancel(false);
    }
  }

  private static String leaseName(Pod pod) {
    return pod.getSpec().getContainers().stream().flatMap(c -> c.getEnv() == null ? java.util.stream.Stream.empty()
        : c.getEnv().stream()).filter(e -> "RESPAWN_LEASE_NAME".equals(e.getName())).map(EnvVar::getValue)
        .findFirst().orElse(pod.getMetadata().getLabels().get(AgentInstance.INSTANCE_LABEL));
  }

  @Override
  public void close() {
    pods.stop();
    executor.shutdownNow();
  }
}

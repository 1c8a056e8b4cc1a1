package dev.respawn.sandbox;

import dev.respawn.api.v1alpha1.AgentInstance;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;

/**
 * Plays the kubelet for the pods of AgentInstances (label {@code respawn.dev/instance}) in one
 * namespace, through the Kubernetes API only. Pod status is written through the status subresource
 * (the mock has none for pods and takes it as a plain write; a real API server needs it).
 *
 * <p>Manual: {@link #startRunning}, {@link #terminate}, {@link #evict}, {@link #stuckPending},
 * {@link #deleteBySomeoneElse}, {@link #renew}, {@link #renewEvery}. Automatic, after {@link #start()}:
 * an informer hands every new pod of an instance the next {@link Run} of that instance's
 * {@link #script script} (in the order the pods appear); pods beyond the script run forever.
 * Failures in automatic mode (other than a pod that vanished meanwhile) are kept in {@link #errors()}.
 */
public final class SimulatedKubelet implements AutoCloseable {
  static final Duration MIN_PERIOD = Duration.ofMillis(10);
  static final Duration MAX_PERIOD = Duration.ofHours(1);

  private final KubernetesClient client;
  private final String namespace;
  private final InstantSource clock;
  private final LeaseRenewer leases;
  private final ScheduledThreadPoolExecutor executor;
  private final Map<String, Deque<Run>> scripts = new ConcurrentHashMap<>();
  private final Set<String> seenPods = ConcurrentHashMap.newKeySet();
  private final Map<String, PodTasks> podTasks = new ConcurrentHashMap<>();
  private final List<Heartbeat> heartbeats = new CopyOnWriteArrayList<>();
  private final List<String> played = new CopyOnWriteArrayList<>();
  private final List<Throwable> errors = new CopyOnWriteArrayList<>();
  private volatile SharedIndexInformer<Pod> informer;

  /** The pending work of one pod (its scripted ending, its heartbeat), by pod uid. */
  private record PodTasks(String uid, List<Future<?>> futures, List<Heartbeat> heartbeats) {}

  public SimulatedKubelet(KubernetesClient client, String namespace) {
    this(client, namespace, InstantSource.system());
  }

  public SimulatedKubelet(KubernetesClient client, String namespace, InstantSource clock) {
    this.client = Objects.requireNonNull(client);
    this.namespace = Objects.requireNonNull(namespace);
    this.clock = Objects.requireNonNull(clock);
    this.leases = new LeaseRenewer(client, namespace, clock);
    AtomicInteger threads = new AtomicInteger();
    this.executor = new ScheduledThreadPoolExecutor(2, r -> {
      Thread t = new Thread(r, "simulated-kubelet-" + threads.incrementAndGet());
      t.setDaemon(true);
      return t;
    });
    executor.setRemoveOnCancelPolicy(true);
  }

  /** Automatic mode: watches the namespace's instance pods and plays their scripts. Idempotent. */
  public synchronized SimulatedKubelet start() {
    if (informer == null) {
      informer = client.pods().inNamespace(namespace).withLabel(AgentInstance.INSTANCE_LABEL).inform(new ResourceEventHandler<>() {
        @Override
        public void onAdd(Pod pod) {
          onPodSeen(pod);
        }

        @Override
        public void onUpdate(Pod old, Pod pod) {
          onPodSeen(pod);
        }

        @Override
        public void onDelete(Pod pod, boolean finalStateUnknown) {
          cancelTasks(pod.getMetadata().getName(), pod.getMetadata().getUid());
        }
      });
    }
    return this;
  }

  /** The runs of the instance's next pods, in order (replaces what is left of an earlier script). */
  public SimulatedKubelet script(String instance, Run... runs) {
    scripts.put(instance, new ArrayDeque<>(Arrays.asList(runs)));
    return this;
  }

  /** "pod: run" for every pod automatic mode has taken on, in order. */
  public List<String> played() {
    return List.copyOf(played);
  }

  /** Unexpected failures of automatic mode and periodic renewals. */
  public List<Throwable> errors() {
    return List.copyOf(errors);
  }

  public Pod startRunning(String podName) {
    return writeStatus(podName, pod -> PodStatuses.running(pod, clock.instant()));
  }

  /** Every container terminates with this exit code, reason (Error, OOMKilled, ...) and termination message. */
  public Pod terminate(String podName, int exitCode, String reason, String message) {
    return terminateContainer(podName, null, exitCode, reason, message);
  }

  /** One container (null: all) terminates; the pod ends when all its containers have. */
  public Pod terminateContainer(String podName, String container, int exitCode, String reason, String message) {
    cancelTasks(podName, null);
    return writeStatus(podName,
        pod -> PodStatuses.terminated(pod, container, exitCode, reason, message, clock.instant()));
  }

  /** Kubelet eviction: phase Failed, reason Evicted, a DisruptionTarget condition. */
  public Pod evict(String podName) {
    cancelTasks(podName, null);
    return writeStatus(podName, pod -> PodStatuses.evicted(pod, Run.evicted().message(), clock.instant()));
  }

  /** Pending with this waiting reason (ErrImagePull, ImagePullBackOff, CreateContainerConfigError, Unschedulable). */
  public Pod stuckPending(String podName, String waitingReason, String message) {
    return writeStatus(podName, pod -> PodStatuses.pending(pod, waitingReason, message, clock.instant()));
  }

  /** Deletes the pod as a user or another controller would; true when it existed. */
  public boolean deleteBySomeoneElse(String podName) {
    cancelTasks(podName, null);
    return !client.pods().inNamespace(namespace).withName(podName).delete().isEmpty();
  }

  /**
   * Renews (or creates) the Lease as the agent in {@code podName} would: holderIdentity = podName,
   * renewTime = now, respawn.dev/health = verdict (unless null), plus the annotations (key, value pairs;
   * a null value removes the key; others are kept).
   */
  public Lease renew(String leaseName, String podName, String verdict, String... annotations) {
    return leases.renew(leaseName, podName, verdict, annotations);
  }

  /** Renews (or creates) now and every {@code period} (10 ms .. 1 h) until the Heartbeat or kubelet stops. */
  public Heartbeat renewEvery(Duration period, String leaseName, String podName, String verdict,
      String... annotations) {
    return renewEvery(period, leaseName, podName, verdict, true, annotations);
  }

  /** As above; without {@code create} a missing Lease is not made (a scripted run, as the agent Role allows). */
  private Heartbeat renewEvery(Duration period, String leaseName, String podName, String verdict, boolean create,
      String... annotations) {
    checkPeriod(period);
    AtomicInteger renewals = new AtomicInteger();
    Future<?> future = executor.scheduleAtFixedRate(() -> {
      try {
        renewals.addAndGet(leases.renew(leaseName, podName, verdict, create, annotations) != null ? 1 : 0);
      } catch (RuntimeException e) {
        errors.add(e);
      }
    }, 0, period.toNanos(), TimeUnit.NANOSECONDS);
    Heartbeat heartbeat = new Heartbeat(future, renewals);
    heartbeats.add(heartbeat);
    return heartbeat;
  }

  /** Periodic renewals running now (scripted runs' included). */
  public long activeHeartbeats() {
    return heartbeats.stream().filter(h -> !h.isStopped()).count();
  }

  /** Stops every periodic renewal. */
  public void stopHeartbeats() {
    heartbeats.forEach(Heartbeat::stop);
    heartbeats.clear();
  }

  @Override
  public void close() {
    SharedIndexInformer<Pod> current = informer;
    if (current != null) {
      current.stop();
    }
    stopHeartbeats();
    executor.shutdownNow();
  }

  static Duration checkPeriod(Duration period) {
    if (period.compareTo(MIN_PERIOD) < 0 || period.compareTo(MAX_PERIOD) > 0) {
      throw new IllegalArgumentException("heartbeat period " + period + " is outside " + MIN_PERIOD + ".." + MAX_PERIOD);
    }
    return period;
  }

  private Pod writeStatus(String podName, UnaryOperator<Pod> change) {
    return client.pods().inNamespace(namespace).withName(podName).editStatus(change);
  }

  private void onPodSeen(Pod pod) {
    String uid = pod.getMetadata().getUid();
    if (!PodStatuses.unstarted(pod) || !seenPods.add(uid)) {
      return;
    }
    String name = pod.getMetadata().getName();
    String instance = pod.getMetadata().getLabels().get(AgentInstance.INSTANCE_LABEL);
    Deque<Run> script = scripts.get(instance);
    Run run = script == null ? null : script.poll();
    Run chosen = run == null ? Run.runForever() : run;
    played.add(name + ": " + chosen);
    if (chosen.ending() == Run.Ending.STUCK_PENDING) {
      later(pod, Duration.ZERO, () -> stuckPending(name, chosen.reason(), chosen.message()));
      return;
    }
    if (chosen.startDelay().isZero()) {
      later(pod, Duration.ZERO, () -> play(pod, chosen));
    } else {
      // one step after the other: on two threads, the Pending write could land after the Running one
      later(pod, Duration.ZERO, () -> {
        stuckPending(name, "ContainerCreating", "");
        later(pod, chosen.startDelay(), () -> play(pod, chosen));
      });
    }
  }

  private void play(Pod pod, Run run) {
    String name = pod.getMetadata().getName();
    startRunning(name);
    if (run.heartbeatPeriod() != null) {
      String[] annotations = run.heartbeatAnnotations().toArray(String[]::new);
      Heartbeat heartbeat = renewEvery(run.heartbeatPeriod(), leaseName(pod), name, "Healthy", false, annotations);
      tasksOf(pod).heartbeats().add(heartbeat);
    }
    switch (run.ending()) {
      case EXIT -> later(pod, run.runTime(), () -> terminate(name, run.exitCode(), run.reason(), run.message()));
      case EVICTED -> later(pod, run.runTime(), () -> evict(name));
      case DELETED -> later(pod, run.runTime(), () -> deleteBySomeoneElse(name));
      default -> { }
    }
  }

  /** Runs a step of a pod's script later; a pod that vanished meanwhile is not an error. */
  private void later(Pod pod, Duration delay, Runnable step) {
    Future<?> future = executor.schedule(() -> {
      try {
        step.run();
      } catch (KubernetesClientException e) {
        if (e.getCode() != 404) {
          errors.add(e);
        }
      } catch (RuntimeException e) {
        errors.add(e);
      }
    }, delay.toNanos(), TimeUnit.NANOSECONDS);
    tasksOf(pod).futures().add(future);
  }

  private PodTasks tasksOf(Pod pod) {
    return podTasks.computeIfAbsent(pod.getMetadata().getName(), n -> new PodTasks(pod.getMetadata().getUid(),
        new CopyOnWriteArrayList<>(), new CopyOnWriteArrayList<>()));
  }

  /** Cancels the pending steps and heartbeats of a pod (of this uid, or whatever uid when null). */
  private void cancelTasks(String podName, String uid) {
    PodTasks tasks = podTasks.get(podName);
    if (tasks == null || (uid != null && !uid.equals(tasks.uid()))) {
      return;
    }
    podTasks.remove(podName, tasks);
    tasks.heartbeats().forEach(Heartbeat::stop);
    heartbeats.removeAll(tasks.heartbeats());
    tasks.futures().forEach(f -> f.cancel(false));
  }

  private static String leaseName(Pod pod) {
    for (Container c : pod.getSpec().getContainers()) {
      for (EnvVar env : c.getEnv() == null ? List.<EnvVar>of() : c.getEnv()) {
        if ("RESPAWN_LEASE_NAME".equals(env.getName()) && env.getValue() != null) {
          return env.getValue();
        }
      }
    }
    return pod.getMetadata().getLabels().get(AgentInstance.INSTANCE_LABEL);
  }
}

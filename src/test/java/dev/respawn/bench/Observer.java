package dev.respawn.bench;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.Phase;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;

/**
 * The harness's own eyes on the API server (a client of its own): every instance pod of every namespace
 * and the AgentInstances of one namespace, through informers. It notes when each pod was first seen
 * (monotonic and wall-clock time, on the informer's thread) and every {@code nextRestartAt} an instance
 * announced, so latencies are measured the same way for Respawn and for the bare loop.
 */
final class Observer implements AutoCloseable {
  private static final String BY_INSTANCE = "instance";

  /** When a pod was first seen: {@link System#nanoTime()} and the wall clock. */
  record Seen(long nanos, Instant at) {}

  private final String instanceNamespace;
  private final KubernetesClient client;
  private final SharedIndexInformer<Pod> pods;
  private final SharedIndexInformer<AgentInstance> instances;
  private final Map<String, CompletableFuture<Seen>> firstSeen = new ConcurrentHashMap<>();
  private final Map<String, Instant> announced = new ConcurrentHashMap<>();

  Observer(KubernetesClient client, String instanceNamespace) {
    this.instanceNamespace = instanceNamespace;
    this.client = client;
    pods = client.pods().inAnyNamespace().withLabel(AgentInstance.INSTANCE_LABEL).runnableInformer(0);
    pods.addIndexers(Map.of(BY_INSTANCE, p -> List.of(instanceKey(p.getMetadata().getNamespace(),
        p.getMetadata().getLabels().get(AgentInstance.INSTANCE_LABEL)))));
    pods.addEventHandler(new ResourceEventHandler<>() {
      @Override
      public void onAdd(Pod pod) {
        seen(pod);
      }

      @Override
      public void onUpdate(Pod old, Pod pod) {
        seen(pod);
      }

      @Override
      public void onDelete(Pod pod, boolean unknown) {}
    });
    instances = client.resources(AgentInstance.class).inNamespace(instanceNamespace).runnableInformer(0);
    instances.addEventHandler(new ResourceEventHandler<>() {
      @Override
      public void onAdd(AgentInstance i) {
        announce(i);
      }

      @Override
      public void onUpdate(AgentInstance old, AgentInstance i) {
        announce(i);
      }

      @Override
      public void onDelete(AgentInstance i, boolean unknown) {}
    });
  }

  Observer start() {
    pods.start().toCompletableFuture().join();
    instances.start().toCompletableFuture().join();
    return this;
  }

  private void seen(Pod pod) {
    long now = System.nanoTime();
    Instant at = Instant.now();
    future(pod.getMetadata().getNamespace(), pod.getMetadata().getName()).complete(new Seen(now, at));
  }

  private void announce(AgentInstance i) {
    var s = i.getStatus();
    if (s != null && s.phase == Phase.Backoff && s.nextRestartAt != null && s.run != null) {
      announced.putIfAbsent(i.getMetadata().getName() + "#" + s.run, Instant.parse(s.nextRestartAt));
    }
  }

  private CompletableFuture<Seen> future(String namespace, String name) {
    return firstSeen.computeIfAbsent(namespace + "/" + name, k -> new CompletableFuture<>());
  }

  /** Waits until the pod was seen; when it was. */
  Seen awaitPod(String namespace, String name, Duration timeout) {
    try {
      return future(namespace, name).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      throw new IllegalStateException("pod " + namespace + "/" + name + " did not appear within " + timeout);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    } catch (ExecutionException e) {
      throw new IllegalStateException(e.getCause());
    }
  }

  /** When the pod was first seen, if it was. */
  Optional<Seen> seenAt(String namespace, String name) {
    CompletableFuture<Seen> f = firstSeen.get(namespace + "/" + name);
    return f == null || !f.isDone() ? Optional.empty() : Optional.of(f.join());
  }

  /** The nextRestartAt the instance announced while in Backoff after run {@code run}. */
  Optional<Instant> announcedRestart(String instance, int run) {
    return Optional.ofNullable(announced.get(instance + "#" + run));
  }

  Optional<Pod> pod(String namespace, String name) {
    return Optional.ofNullable(pods.getIndexer().getByKey(namespace + "/" + name));
  }

  /** The instance's pods the informer holds now, oldest run first. */
  List<Pod> podsOf(String namespace, String instance) {
    return pods.getIndexer().byIndex(BY_INSTANCE, instanceKey(namespace, instance)).stream()
        .sorted(Comparator.comparingInt(Observer::run)).toList();
  }

  Optional<AgentInstance> instance(String name) {
    return Optional.ofNullable(instances.getIndexer().getByKey(instanceNamespace + "/" + name));
  }

  static int run(Pod p) {
    String run = p.getMetadata().getLabels().get(AgentInstance.RUN_LABEL);
    return run == null ? 0 : Integer.parseInt(run);
  }

  static boolean running(Pod p) {
    return p.getStatus() != null && "Running".equals(p.getStatus().getPhase())
        && p.getMetadata().getDeletionTimestamp() == null;
  }

  static String podName(String instance, int run) {
    return instance + "-" + run;
  }

  private static String instanceKey(String namespace, String instance) {
    return namespace + "/" + instance;
  }

  /** Polls (every millisecond) until the condition holds; false when the time ran out. */
  static boolean await(Duration timeout, BooleanSupplier condition) {
    return await(timeout, Duration.ofMillis(1), condition);
  }

  /** Polls (every {@code poll}) until the condition holds; false when the time ran out. */
  static boolean await(Duration timeout, Duration poll, BooleanSupplier condition) {
    try {
      Awaitility.await().atMost(timeout).pollDelay(Duration.ZERO).pollInterval(poll)
          .until(condition::getAsBoolean);
      return true;
    } catch (ConditionTimeoutException e) {
      return false;
    }
  }

  /** Waits until the count has not moved for {@code quiet} (polled every {@code poll}, at most {@code atMost}). */
  static void awaitQuiet(LongSupplier count, Duration quiet, Duration poll, Duration atMost) {
    long[] last = {count.getAsLong(), System.nanoTime()};
    await(atMost, poll, () -> {
      long now = count.getAsLong();
      if (now != last[0]) {
        last[0] = now;
        last[1] = System.nanoTime();
        return false;
      }
      return System.nanoTime() - last[1] >= quiet.toNanos();
    });
  }

  static void require(String what, Duration timeout, BooleanSupplier condition) {
    require(what, timeout, condition, () -> "");
  }

  /** As {@link #require(String, Duration, BooleanSupplier)}; the message ends with what {@code seen} describes. */
  static void require(String what, Duration timeout, BooleanSupplier condition,
      java.util.function.Supplier<String> seen) {
    if (!await(timeout, condition)) {
      String more = seen.get();
      throw new IllegalStateException("timed out after " + timeout + " waiting for " + what
          + (more.isEmpty() ? "" : "; seen: " + more));
    }
  }

  /**
   * The instance's pods and status as this observer sees them, and its pods as the server has them now
   * (a fresh list: a cache that missed an event shows the difference), for a failure message.
   */
  String describe(String namespace, String instance) {
    StringBuilder b = new StringBuilder("observer's pods ");
    pods(b, podsOf(namespace, instance));
    b.append(" server's pods ");
    try {
      pods(b, client.pods().inNamespace(namespace).withLabel(AgentInstance.INSTANCE_LABEL, instance).list().getItems());
    } catch (RuntimeException e) {
      b.append("(list failed: ").append(e.getMessage()).append(")");
    }
    if (namespace.equals(instanceNamespace)) {
      b.append(" observer's status ").append(instance(instance).map(i -> i.getStatus() == null ? "none"
          : io.fabric8.kubernetes.client.utils.Serialization.asJson(i.getStatus())).orElse("(no instance)"));
    }
    return b.toString();
  }
  private static void pods(StringBuilder b, List<Pod> list) {
    b.append("[");
    for (Pod p : list) {
      b.append(p.getMetadata().getName()).append(" uid=").append(p.getMetadata().getUid())
          .append(" rv=").append(p.getMetadata().getResourceVersion())
          .append(" phase=").append(p.getStatus() == null ? null : p.getStatus().getPhase())
          .append(p.getMetadata().getDeletionTimestamp() == null ? "" : " deleting").append("; ");
    }
    b.append("]");
  }


  /**
   * Lets a measured period pass on the wall clock: the window a measurement counts over, or the pace of a
   * load. Never a way to wait for something to happen (that is {@link #await}).
   */
  static void window(Duration period) {
    try {
      Thread.sleep(Math.max(0, period.toMillis()));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void close() {
    pods.stop();
    instances.stop();
  }
}

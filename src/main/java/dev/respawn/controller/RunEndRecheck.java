package dev.respawn.controller;

import dev.respawn.heartbeat.HeartbeatLeases;
import dev.respawn.heartbeat.RenewalClock;
import dev.respawn.policy.Decision;
import dev.respawn.policy.PodDeletion;
import dev.respawn.policy.Sighting;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.net.HttpURLConnection;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A live run is ended on the API server's word, not on the watches' copies alone. Pods and heartbeat Leases are
 * judged on the informers' copies, and a watch that lags or hangs (a slow API server, a proxy that drops an idle
 * connection without a reset) keeps showing what was: no renewal while the agent goes on renewing, a pod still
 * Pending that has long been running. Judged on those copies alone, every healthy agent of the fleet would be ended
 * a heartbeat timeout (or a startup grace) later. So before a decision that ends the live current run (deletes its
 * pod) is carried out, the run's pod and its Lease are read once each from the API server; when either is not the
 * copy the decision was made on, the instance is decided again on the server's copies (a renewal the watch has not
 * delivered counts as seen then). That is two GETs per run ended (one more for each other pod a decision made
 * again on them would end), none at rest and none for a run that ends by itself.
 */
final class RunEndRecheck {
  private static final Logger LOG = LoggerFactory.getLogger(RunEndRecheck.class);
  private static volatile boolean forbiddenLogged;

  private RunEndRecheck() {}

  /** What a decision was made on, and the decision. */
  record Judged(Sighting seen, Decision decision) {}

  /**
   * {@code onCache} when it ends no live run, or when the API server's copies of the pod it ends and of the Lease are
   * the ones it was made on; else the decision made again ({@code decide}) on what {@code sight} makes of the
   * server's copies.
   *
   * @param cached the pods the decision was made on; {@code lease}: the current run's Lease it was made on
   * @param deletedByUs whether this operator deleted the pod of a UID (its delete not told by the watch yet)
   * @param readPod reads a pod from the API server (null when gone); {@code readLease} the current run's Lease
   */
  static Judged confirm(Judged onCache, List<Pod> cached, Lease lease, Predicate<String> deletedByUs,
      Function<String, Pod> readPod, Supplier<Lease> readLease, BiFunction<List<Pod>, Lease, Sighting> sight,
      Function<Sighting, Decision> decide) {
    Judged judged = onCache;
    List<Pod> pods = cached;
    Lease heartbeat = lease;
    boolean leaseRead = false;
    Set<String> read = new HashSet<>();
    while (true) {
      // the pods it ends (the current run's, or the next run's whose start status does not show yet) not read yet:
      // a decision made again on what was read may end another one the watch showed as stale (each is read once).
      // Not one this operator deleted already (the watch has not told it yet): its run was ended on a read before
      List<String> ending = judged.decision().deletions().stream().filter(x -> x.why() == PodDeletion.Why.END_RUN)
          .filter(x -> !deletedByUs.test(x.uid())).map(PodDeletion::name).filter(read::add).toList();
      if (ending.isEmpty()) {
        return judged;
      }
      boolean changed = false;
      for (String name : ending) {
        Pod judgedPod = pods.stream().filter(p -> name.equals(p.getMetadata().getName())).findFirst().orElse(null);
        Optional<Pod> server = serverCopy(judgedPod, () -> readPod.apply(name));
        if (server.isEmpty() && judgedPod != null || server.isPresent() && !sameVersion(server.get(), judgedPod)) {
          // gone at the server (someone deleted it): decided again without it, as a pod that vanished
          pods = Stream.concat(pods.stream().filter(p -> !name.equals(p.getMetadata().getName())), server.stream())
              .toList();
          changed = true;
        }
      }
      if (!leaseRead) {
        leaseRead = true;
        Optional<Lease> renewed = differs(heartbeat, readLease);
        if (renewed.isPresent()) {
          heartbeat = renewed.get();
          changed = true;
        }
      }
      if (!changed) {
        return judged;
      }
      Sighting seen = sight.apply(pods, heartbeat);
      judged = new Judged(seen, decide.apply(seen));
    }
  }

  /**
   * The Lease read ({@code read}), having told {@code renewals} that it changed hands since the copy judged, as the
   * Lease watch would have ({@link RenewalClock#handedOver}): the run that held it keeps the renewal it left.
   */
  static Lease handOver(Lease judged, Lease read, RenewalClock renewals) {
    if (judged != null && read != null && !Objects.equals(HeartbeatLeases.holder(judged), HeartbeatLeases.holder(read))
        && HeartbeatLeases.holder(judged) != null) {
      renewals.handedOver(judged);
    }
    return read;
  }

  /**
   * The object as the API server has it, when it is not the copy {@code judged} (another resourceVersion, or one
   * the cache did not have). Empty when it is the same, when it is gone, or when it may not be read.
   */
  static <T extends HasMetadata> Optional<T> differs(T judged, Supplier<T> live) {
    return serverCopy(judged, live).filter(read -> !sameVersion(read, judged));
  }

  /**
   * The API server's copy: empty when it is gone; {@code judged} itself when this operator may not read it (a
   * ClusterRole of a release before 2026-11-28 grants no {@code get} on Leases: the cache's copy decides, and it is
   * logged once). Other errors of the read are thrown: the reconcile is retried, and nothing is ended meanwhile.
   */
  static <T extends HasMetadata> Optional<T> serverCopy(T judged, Supplier<T> live) {
    try {
      return Optional.ofNullable(live.get());
    } catch (KubernetesClientException e) {
      if (e.getCode() != HttpURLConnection.HTTP_FORBIDDEN) {
        throw e;
      }
      if (!forbiddenLogged) {
        forbiddenLogged = true;
        LOG.warn("cannot read what a run is ended on from the API server ({}): the watch's copy alone decides; "
            + "grant get on pods and coordination.k8s.io leases (deploy/clusterrole.yaml)", e.getMessage());
      }
      return Optional.ofNullable(judged);
    }
  }

  private static boolean sameVersion(HasMetadata read, HasMetadata judged) {
    return judged != null
        && Objects.equals(read.getMetadata().getResourceVersion(), judged.getMetadata().getResourceVersion());
  }
}

package dev.respawn.controller;

import dev.respawn.api.v1alpha1.AgentInstance;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Leases other than the spec's that an instance's runs renewed (a run keeps the Lease its pod was given when
 * spec.heartbeat.leaseName is edited), by instance UID: what this process remembers of their renewals is dropped
 * with the instance. An instance whose Lease name never changed has no entry.
 *
 * <p>Also the Lease name whose create met someone else's Lease of that name (409; it lacks the instance label, so
 * no informer shows it), with the run it was for: the create is tried once per run, not at every wake-up of it
 * (api.md §12: nothing is written because time passed). A new run, or a renamed Lease, tries again.
 *
 * <p>And which Lease of the run's name is its heartbeat at all ({@link #heartbeatOf}): one another object controls
 * (a predecessor of the same name whose Lease the garbage collector has not removed yet, holder
 * {@code <name>-1} as the new first pod's) is neither believed nor touched, and said once for each such Lease.
 */
final class RunLeases {
  private static final Logger LOG = LoggerFactory.getLogger(RunLeases.class);
  private final Map<String, Set<String>> byInstance = new ConcurrentHashMap<>();
  private final Map<String, Taken> taken = new ConcurrentHashMap<>();
  /** By instance UID: the other object's Lease last said to be in its way, as name/UID. */
  private final Map<String, String> anothersSeen = new ConcurrentHashMap<>();

  /** A Lease name found held by another for a run of the instance. */
  private record Taken(String lease, int run) {}

  /** A run of the instance renews {@code lease}; {@code specLease} is the one its spec names. */
  void remember(String instanceUid, String specLeaseName, String lease) {
    if (!lease.equals(specLeaseName)) {
      byInstance.computeIfAbsent(instanceUid, k -> ConcurrentHashMap.newKeySet()).add(lease);
    }
  }

  /** The create of {@code lease} for run {@code run} of the instance met a Lease of that name that is not its own. */
  void heldByAnother(String instanceUid, String lease, int run) {
    taken.put(instanceUid, new Taken(lease, run));
  }

  /** Whether the create of {@code lease} met another's Lease in this run already (not to be tried again). */
  boolean heldByAnotherInRun(String instanceUid, String lease, int run) {
    return new Taken(lease, run).equals(taken.get(instanceUid));
  }

  /**
   * The cached Lease of the run's name when it is the instance's heartbeat ({@link #heartbeatOf}); empty when there
   * is none, or it is another object's (said once for that Lease: the run's renewals are not heard until it is gone
   * and the operator has made the instance's own).
   */
  Optional<Lease> heartbeat(Optional<Lease> cached, AgentInstance instance) {
    if (cached.isEmpty() || heartbeatOf(cached.get(), instance)) {
      return cached;
    }
    String name = cached.get().getMetadata().getName();
    // said once for each such Lease (its UID), not at every wake-up of the run
    String seen = name + "/" + cached.get().getMetadata().getUid();
    if (!seen.equals(anothersSeen.put(instance.getMetadata().getUid(), seen))) {
      LOG.warn("Heartbeat Lease {}/{} is not instance {}'s: its controller is another object (uid {}); its renewals"
          + " and verdict are not the run's. Made again once it is gone (the garbage collector removes a deleted"
          + " predecessor's); else rename spec.heartbeat.leaseName", instance.getMetadata().getNamespace(), name,
          instance.getMetadata().getName(), InstanceSighting.controllerUid(cached.get()));
    }
    return Optional.empty();
  }

  /**
   * Whether a Lease is {@code instance}'s heartbeat: controlled by it, or controlled by nothing and labelled for it.
   * One that another object controls is not, whatever its label says (the instance label names an instance, not an
   * incarnation: a deleted predecessor's Lease bears it too), nor is one someone made unlabelled.
   */
  static boolean heartbeatOf(Lease lease, AgentInstance instance) {
    String controller = InstanceSighting.controllerUid(lease);
    if (controller != null) {
      return controller.equals(instance.getMetadata().getUid());
    }
    Map<String, String> labels = lease.getMetadata().getLabels();
    return labels != null && instance.getMetadata().getName().equals(labels.get(AgentInstance.INSTANCE_LABEL));
  }

  /** The other Leases the instance's runs renewed, forgotten (and a Lease name found held by another). */
  Set<String> forget(String instanceUid) {
    taken.remove(instanceUid);
    anothersSeen.remove(instanceUid);
    Set<String> names = byInstance.remove(instanceUid);
    return names == null ? Set.of() : names;
  }
}

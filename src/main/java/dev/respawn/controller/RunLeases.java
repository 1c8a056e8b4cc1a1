package dev.respawn.controller;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The Leases other than the spec's that an instance's runs renewed (a run keeps the Lease its pod was given when
 * spec.heartbeat.leaseName is edited), by instance UID: what this process remembers of their renewals is dropped
 * with the instance. An instance whose Lease name never changed has no entry.
 *
 * <p>Also the Lease name whose create met someone else's Lease of that name (409; it lacks the instance label, so
 * no informer shows it), with the run it was for: the create is tried once per run, not at every wake-up of it
 * (api.md §12: nothing is written because time passed). A new run, or a renamed Lease, tries again.
 */
final class RunLeases {
  private final Map<String, Set<String>> byInstance = new ConcurrentHashMap<>();
  private final Map<String, Taken> taken = new ConcurrentHashMap<>();

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

  /** The other Leases the instance's runs renewed, forgotten (and a Lease name found held by another). */
  Set<String> forget(String instanceUid) {
    taken.remove(instanceUid);
    Set<String> names = byInstance.remove(instanceUid);
    return names == null ? Set.of() : names;
  }
}

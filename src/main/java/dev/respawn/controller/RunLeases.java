package dev.respawn.controller;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The Leases other than the spec's that an instance's runs renewed (a run keeps the Lease its pod was given when
 * spec.heartbeat.leaseName is edited), by instance UID: what this process remembers of their renewals is dropped
 * with the instance. An instance whose Lease name never changed has no entry.
 */
final class RunLeases {
  private final Map<String, Set<String>> byInstance = new ConcurrentHashMap<>();

  /** A run of the instance renews {@code lease}; {@code specLease} is the one its spec names. */
  void remember(String instanceUid, String specLeaseName, String lease) {
    if (!lease.equals(specLeaseName)) {
      byInstance.computeIfAbsent(instanceUid, k -> ConcurrentHashMap.newKeySet()).add(lease);
    }
  }

  /** The other Leases the instance's runs renewed, forgotten. */
  Set<String> forget(String instanceUid) {
    Set<String> names = byInstance.remove(instanceUid);
    return names == null ? Set.of() : names;
  }
}

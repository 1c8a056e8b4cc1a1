package dev.respawn.controller;

import dev.respawn.policy.Tier;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Optional;
import java.util.Set;
import java.util.function.LongSupplier;

/**
 * What the operator was started with (api.md §10 flags), plus its clock and jitter seed.
 *
 * @param namespaces namespaces to watch; empty means all
 * @param defaultPolicy policy used by instances without spec.policyRef: a name in the instance's
 *     namespace or {@code namespace/name}; empty means the built-in defaults of api.md §1
 * @param tier the license tier (soft gate on backoff types, custom evaluators)
 * @param clock the operator's clock (tests inject a controllable one)
 * @param ticker monotonic nanoseconds ({@code System::nanoTime}): what ages the operator keeps in memory are
 *     measured with, so that a step of the wall clock (NTP, a VM resumed) does not age every heartbeat at once
 * @param jitterSeed seed of the per-decision jitter generator: decisions are reproducible
 * @param informerSyncTimeout how long the start waits for an informer's first list before it goes on without
 *     it (an API the server does not serve, or RBAC that forbids it, never lists)
 */
public record OperatorSettings(Set<String> namespaces, Optional<String> defaultPolicy, Tier tier,
    InstantSource clock, LongSupplier ticker, long jitterSeed, Duration informerSyncTimeout) {

  /** The default of {@link #informerSyncTimeout()}: ample for a first list of 10,000 pods. */
  public static final Duration INFORMER_SYNC_TIMEOUT = Duration.ofSeconds(20);

  public OperatorSettings {
    namespaces = Set.copyOf(namespaces);
  }

  public OperatorSettings(Set<String> namespaces, Optional<String> defaultPolicy, Tier tier, InstantSource clock,
      long jitterSeed) {
    this(namespaces, defaultPolicy, tier, clock, System::nanoTime, jitterSeed, INFORMER_SYNC_TIMEOUT);
  }

  public static OperatorSettings defaults() {
    return new OperatorSettings(Set.of(), Optional.empty(), Tier.Enterprise, InstantSource.system(), 0x5eed);
  }

  /** Another wall clock; the ticker stays: heartbeat ages are still measured in real time (see {@link #ticker}). */
  public OperatorSettings withClock(InstantSource c) {
    return new OperatorSettings(namespaces, defaultPolicy, tier, c, ticker, jitterSeed, informerSyncTimeout);
  }

  public OperatorSettings withNamespaces(Set<String> ns) {
    return new OperatorSettings(ns, defaultPolicy, tier, clock, ticker, jitterSeed, informerSyncTimeout);
  }

  public OperatorSettings withDefaultPolicy(String name) {
    return new OperatorSettings(namespaces, Optional.ofNullable(name), tier, clock, ticker, jitterSeed,
        informerSyncTimeout);
  }

  public OperatorSettings withTier(Tier t) {
    return new OperatorSettings(namespaces, defaultPolicy, t, clock, ticker, jitterSeed, informerSyncTimeout);
  }

  public OperatorSettings withInformerSyncTimeout(Duration timeout) {
    return new OperatorSettings(namespaces, defaultPolicy, tier, clock, ticker, jitterSeed, timeout);
  }
}

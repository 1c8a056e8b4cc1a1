package dev.respawn.controller;

import dev.respawn.policy.Tier;
import java.time.InstantSource;
import java.util.Optional;
import java.util.Set;

/**
 * What the operator was started with (api.md §10 flags), plus its clock and jitter seed.
 *
 * @param namespaces namespaces to watch; empty means all
 * @param defaultPolicy policy used by instances without spec.policyRef: a name in the instance's
 *     namespace or {@code namespace/name}; empty means the built-in defaults of api.md §1
 * @param tier the license tier (soft gate on backoff types, custom evaluators)
 * @param clock the operator's clock (tests inject a controllable one)
 * @param jitterSeed seed of the per-decision jitter generator: decisions are reproducible
 */
public record OperatorSettings(Set<String> namespaces, Optional<String> defaultPolicy, Tier tier,
    InstantSource clock, long jitterSeed) {

  public OperatorSettings {
    namespaces = Set.copyOf(namespaces);
  }

  public static OperatorSettings defaults() {
    return new OperatorSettings(Set.of(), Optional.empty(), Tier.Enterprise, InstantSource.system(), 0x5eed);
  }

  public OperatorSettings withClock(InstantSource c) {
    return new OperatorSettings(namespaces, defaultPolicy, tier, c, jitterSeed);
  }

  public OperatorSettings withNamespaces(Set<String> ns) {
    return new OperatorSettings(ns, defaultPolicy, tier, clock, jitterSeed);
  }

  public OperatorSettings withDefaultPolicy(String name) {
    return new OperatorSettings(namespaces, Optional.ofNullable(name), tier, clock, jitterSeed);
  }

  public OperatorSettings withTier(Tier t) {
    return new OperatorSettings(namespaces, defaultPolicy, t, clock, jitterSeed);
  }
}

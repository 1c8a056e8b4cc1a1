package dev.respawn.policy;

import dev.respawn.api.v1alpha1.BackoffType;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;

/**
 * License tiers (operator flag --tier), a soft gate: a policy asking for a backoff type its tier
 * does not allow is served by the strongest allowed type and reported as TierRestricted.
 */
public enum Tier {
  Core(EnumSet.of(BackoffType.None)),
  WriterPro(EnumSet.of(BackoffType.None, BackoffType.Immediate, BackoffType.Linear)),
  Teams(EnumSet.allOf(BackoffType.class)),
  Enterprise(EnumSet.allOf(BackoffType.class));

  private final Set<BackoffType> allowed;

  Tier(Set<BackoffType> allowed) {
    this.allowed = allowed;
  }

  public boolean allows(BackoffType type) {
    return allowed.contains(type);
  }

  /** Custom evaluators (the {@link dev.respawn.policy.spi.CustomEvaluator} SPI) run only on Enterprise. */
  public boolean allowsCustomEvaluators() {
    return this == Enterprise;
  }

  /** The strongest allowed type not stronger than {@code requested} (types are ordered by strength). */
  public BackoffType strongestAllowed(BackoffType requested) {
    for (int i = requested.ordinal(); i >= 0; i--) {
      BackoffType t = BackoffType.values()[i];
      if (allows(t)) {
        return t;
      }
    }
    return BackoffType.None;
  }

  /** Applies the gate: the policy as served, and why it was restricted, if it was. */
  public Gated gate(RestartPolicy policy) {
    BackoffType requested = policy.backoff().type();
    if (allows(requested)) {
      return new Gated(policy, Optional.empty());
    }
    BackoffType served = strongestAllowed(requested);
    return new Gated(policy.withBackoffType(served), Optional.of("spec.backoff.type: " + requested
        + " is not available on tier " + name() + "; served as " + served));
  }

  /** A policy after the tier gate. */
  public record Gated(RestartPolicy policy, Optional<String> restriction) {}
}

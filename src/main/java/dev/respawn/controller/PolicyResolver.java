package dev.respawn.controller;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.policy.Bounds;
import dev.respawn.policy.PolicyCompiler;
import dev.respawn.policy.PolicyInvalidException;
import dev.respawn.policy.RestartPolicy;
import dev.respawn.policy.Tier;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * Finds the policy an instance uses and compiles it (cached per uid and generation), through the
 * tier's soft gate. The outcome is a usable policy or the reason there is none.
 */
public final class PolicyResolver {
  /** api.md §1's defaults (as {@code spec: {}}), before the tier's gate. */
  static final RestartPolicy BUILT_IN;

  static {
    try {
      BUILT_IN = PolicyCompiler.compile(new AgentRestartPolicySpec());
    } catch (PolicyInvalidException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * What the core decides with while an instance is refused (its policy missing or invalid) and suspended:
   * only the suspension is acted on, and the restarts status recorded are kept for the real policy.
   */
  static final RestartPolicy WHILE_REFUSED = BUILT_IN.whileRefused();

  private final OperatorSettings settings;
  private final Function<ResourceID, Optional<AgentRestartPolicy>> lookup;
  /** By policy (namespace and name: a policy deleted and made anew reuses its entry), the latest compiled. */
  private final Map<ResourceID, Compiled> compiled = new ConcurrentHashMap<>();

  private record Compiled(String uid, Long generation, Resolved resolved) {
    boolean of(AgentRestartPolicy policy) {
      return uid.equals(String.valueOf(policy.getMetadata().getUid()))
          && Objects.equals(generation, policy.getMetadata().getGeneration());
    }
  }

  public PolicyResolver(OperatorSettings settings, Function<ResourceID, Optional<AgentRestartPolicy>> lookup) {
    this.settings = settings;
    this.lookup = lookup;
  }

  /** The outcome: a policy (maybe tier-restricted), or why the instance has none. */
  public record Resolved(Optional<RestartPolicy> policy, Refusal reason, String message) {
    static Resolved ok(RestartPolicy p) {
      return new Resolved(Optional.of(p), null, "");
    }

    static Resolved refused(Refusal reason, String message) {
      return new Resolved(Optional.empty(), reason, message);
    }

    /** The same outcome for an instance of another namespace than the policy's (RestartPolicy#outsideTheFleet). */
    Resolved outsideTheFleet() {
      return new Resolved(policy.map(RestartPolicy::outsideTheFleet), reason, message);
    }
  }

  /** The policy reference of an instance: its namespace and name, or empty for the built-in defaults. */
  public Optional<ResourceID> reference(AgentInstance instance) {
    String ns = instance.getMetadata().getNamespace();
    var ref = instance.getSpec() == null ? null : instance.getSpec().policyRef;
    if (ref != null && ref.name != null && !ref.name.isEmpty()) {
      return Optional.of(new ResourceID(ref.name, ns));
    }
    return settings.defaultPolicy().map(p -> p.contains("/")
        ? new ResourceID(p.substring(p.indexOf('/') + 1), p.substring(0, p.indexOf('/'))) : new ResourceID(p, ns));
  }

  /** The shared circuits of the instance's policy, as its status shows them (none without a policy). */
  public java.util.Map<String, dev.respawn.policy.DependencyCircuit> circuits(AgentInstance instance) {
    return reference(instance).flatMap(lookup).map(DependencyStatuses::of).orElse(java.util.Map.of());
  }

  public Resolved resolve(AgentInstance instance) {
    Optional<ResourceID> ref = reference(instance);
    if (ref.isEmpty()) {
      return Resolved.ok(settings.tier().gate(BUILT_IN).policy()); // the defaults obey the tier too
    }
    Optional<AgentRestartPolicy> found = lookup.apply(ref.get());
    if (found.isEmpty()) {
      compiled.remove(ref.get()); // a deleted policy's
      var own = instance.getSpec() == null ? null : instance.getSpec().policyRef;
      boolean byDefault = own == null || own.name == null || own.name.isEmpty();
      return Resolved.refused(Refusal.PolicyNotFound, "AgentRestartPolicy " + ref.get().getNamespace().orElse("") + "/"
          + ref.get().getName() + (byDefault ? " (the operator's --default-policy: spec.policyRef is not set)" : "")
          + " does not exist; nothing is restarted until it does");
    }
    Resolved resolved = compile(found.get());
    boolean elsewhere = !ref.get().getNamespace().orElse("").equals(instance.getMetadata().getNamespace());
    return elsewhere ? resolved.outsideTheFleet() : resolved;
  }

  private static Resolved refused(AgentRestartPolicy policy, String why) {
    return Resolved.refused(Refusal.PolicyInvalid, Bounds.oneLine("AgentRestartPolicy " + policy.getMetadata().getName()
        + " is invalid: " + why, Bounds.MESSAGE_BYTES));
  }

  /**
   * Compiles a policy through the tier gate; invalid ones say which field breaks which rule. The compiling runs in
   * {@code compute} (it touches no other entry of the map: two policies compiled at once on two threads each hold
   * only their own bin); a policy already compiled at its generation is read without taking that bin's lock.
   */
  public Resolved compile(AgentRestartPolicy policy) {
    Compiled cached = compiled.get(ResourceID.fromResource(policy));
    if (cached != null && cached.of(policy)) {
      return cached.resolved();
    }
    return compiled.compute(ResourceID.fromResource(policy), (id, known) -> known != null && known.of(policy) ? known
        : new Compiled(String.valueOf(policy.getMetadata().getUid()), policy.getMetadata().getGeneration(),
            compiledNow(policy))).resolved();
  }

  /** The policy is deleted: its compiled entry goes. Returns true (its delete event is told to its instances). */
  boolean forget(ResourceID policy) {
    compiled.remove(policy);
    return true;
  }

  /** Policies with a compiled entry (tests: one per policy, whatever its edits). */
  int compiledPolicies() {
    return compiled.size();
  }

  private Resolved compiledNow(AgentRestartPolicy policy) {
    String unreadable = policy.unreadable().describe();
    try {
      Tier.Gated gated = settings.tier().gate(PolicyCompiler.compile(policy.getSpec()));
      return unreadable.isEmpty() ? Resolved.ok(gated.policy()) : refused(policy, unreadable);
    } catch (PolicyInvalidException e) {
      return refused(policy, unreadable.isEmpty() ? e.getMessage() : unreadable + "; " + e.getMessage());
    }
  }
}

package dev.respawn.heartbeat;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.HealthVerdict;
import dev.respawn.policy.Bounds;
import dev.respawn.policy.LeaseView;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseSpec;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/** The heartbeat Lease of an instance (api.md §5): its name, how it is created, and how it is read. */
public final class HeartbeatLeases {
  public static final String HEALTH = "respawn.dev/health";
  public static final String DETAIL = "respawn.dev/detail";
  public static final String CHECKPOINT = "respawn.dev/checkpoint";
  public static final String CHECKPOINT_STATUS = "respawn.dev/checkpoint-status";
  public static final String STEP_IDEMPOTENT = "respawn.dev/step-idempotent";
  public static final String ARTIFACTS_READY = "respawn.dev/artifacts-ready";

  private HeartbeatLeases() {}

  /** spec.heartbeat.leaseName, or the instance's name. */
  public static String leaseName(AgentInstance instance) {
    var hb = instance.getSpec() == null ? null : instance.getSpec().heartbeat;
    return hb != null && hb.leaseName != null && !hb.leaseName.isEmpty() ? hb.leaseName
        : instance.getMetadata().getName();
  }

  /** The env variable that names the run's Lease to its agent. */
  public static final String LEASE_NAME_ENV = "RESPAWN_LEASE_NAME";

  /**
   * The Lease a run renews: the one its pod was given ({@value #LEASE_NAME_ENV}), which an edit of
   * spec.heartbeat.leaseName does not change for a run already started; else the spec's.
   */
  public static String leaseName(AgentInstance instance, io.fabric8.kubernetes.api.model.Pod runPod) {
    if (runPod != null && runPod.getSpec() != null && runPod.getSpec().getContainers() != null) {
      for (var c : runPod.getSpec().getContainers()) {
        if (c.getEnv() != null) {
          for (var e : c.getEnv()) {
            if (LEASE_NAME_ENV.equals(e.getName()) && e.getValue() != null && !e.getValue().isEmpty()) {
              return e.getValue();
            }
          }
        }
      }
    }
    return leaseName(instance);
  }

  /** A new, unheld Lease owned by the instance and labelled with its name. */
  public static Lease newLease(AgentInstance instance, OwnerReference owner) {
    Lease lease = new Lease();
    ObjectMeta meta = new ObjectMeta();
    meta.setName(leaseName(instance));
    meta.setNamespace(instance.getMetadata().getNamespace());
    meta.setLabels(Map.of(AgentInstance.INSTANCE_LABEL, instance.getMetadata().getName()));
    meta.setOwnerReferences(List.of(owner));
    lease.setMetadata(meta);
    lease.setSpec(new LeaseSpec());
    return lease;
  }

  /** The Lease as the decision core sees it (the core checks its holder), or null when it has no spec. */
  public static LeaseView view(Lease lease, Instant changeSeenAt) {
    return view(lease, changeSeenAt, false);
  }

  /**
   * The Lease as the decision core sees it; {@code firstSight}: changeSeenAt is this process's first look at a
   * renewal made before it (see {@link LeaseView#firstSight()}).
   */
  public static LeaseView view(Lease lease, Instant changeSeenAt, boolean firstSight) {
    if (lease == null || lease.getSpec() == null) {
      return null;
    }
    Map<String, String> a = lease.getMetadata().getAnnotations() == null ? Map.of()
        : lease.getMetadata().getAnnotations();
    // the agent writes these: cut to the bounds of api.md §5 before they can reach status; a checkpoint is a
    // name the next run is handed, never a cut one: one too long is none (resume_missing_checkpoint)
    String checkpoint = a.get(CHECKPOINT);
    return new LeaseView(RenewalClock.renewTime(lease), changeSeenAt, verdict(a.get(HEALTH)),
        Bounds.truncateUtf8(a.get(DETAIL), Bounds.DETAIL_BYTES),
        Bounds.fitsUtf8(checkpoint, Bounds.CHECKPOINT_BYTES) ? checkpoint : null,
        Bounds.truncateUtf8(a.get(CHECKPOINT_STATUS), Bounds.CHECKPOINT_BYTES),
        bool(a.get(STEP_IDEMPOTENT)), bool(a.get(ARTIFACTS_READY)), firstSight);
  }

  /**
   * Whether the Lease still carries a verdict other than Healthy: a run's own words, which the next run's agent
   * need not overwrite (the annotations are optional) and must not inherit. A Healthy verdict (with or without a
   * detail) condemns nobody and costs no write.
   */
  public static boolean carriesVerdict(Lease lease) {
    Map<String, String> a = lease == null || lease.getMetadata().getAnnotations() == null ? Map.of()
        : lease.getMetadata().getAnnotations();
    // read as the verdict is read (any case, blanks around): a "healthy" written by hand is Healthy here too
    return a.get(HEALTH) != null && verdict(a.get(HEALTH)) != HealthVerdict.Healthy;
  }

  /**
   * True when an update changed something a reconcile must see: the holder, or any annotation.
   * A renewal that changes only renewTime (and resourceVersion) is filtered out.
   */
  public static boolean meaningfulChange(Lease newer, Lease older) {
    if (older == null || older.getSpec() == null || newer.getSpec() == null) {
      return true;
    }
    return !Objects.equals(newer.getSpec().getHolderIdentity(), older.getSpec().getHolderIdentity())
        || !Objects.equals(newer.getMetadata().getAnnotations(), older.getMetadata().getAnnotations());
  }

  /** The pod that holds the Lease (spec.holderIdentity), or null. */
  public static String holder(Lease lease) {
    return lease == null || lease.getSpec() == null ? null : lease.getSpec().getHolderIdentity();
  }

  /** An unknown verdict value is Ambiguous: fail closed. Absent means Healthy (the renewal itself). */
  static HealthVerdict verdict(String value) {
    if (value == null) {
      return null;
    }
    for (HealthVerdict v : HealthVerdict.values()) {
      if (v.name().equalsIgnoreCase(value.trim()) && v.agentMayReport()) {
        return v;
      }
    }
    return HealthVerdict.Ambiguous;
  }

  /**
   * A true/false annotation: null when absent; any value but {@code true} is false (fail-closed: a step said
   * to be idempotent "yes", or artifacts ready "maybe", is not vouched for, api.md §7).
   */
  private static Boolean bool(String value) {
    if (value == null) {
      return null;
    }
    return "true".equalsIgnoreCase(value.trim());
  }


}

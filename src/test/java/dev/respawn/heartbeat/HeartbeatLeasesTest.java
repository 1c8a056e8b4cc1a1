package dev.respawn.heartbeat;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentInstanceSpec;
import dev.respawn.api.v1alpha1.HealthVerdict;
import dev.respawn.api.v1alpha1.InstanceHeartbeatSpec;
import dev.respawn.policy.LeaseView;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class HeartbeatLeasesTest {
  static Lease lease(Map<String, String> annotations) {
    return new LeaseBuilder().withNewMetadata().withName("coder").withAnnotations(annotations).endMetadata()
        .withNewSpec().withHolderIdentity("coder-1").endSpec().build();
  }

  @Test
  void theAgentsWordsAreCutToTheirBoundsButACheckpointIsNeverCut() {
    String fits = "é".repeat(128); // 256 bytes
    String tooLong = fits + "x";
    LeaseView view = HeartbeatLeases.view(lease(Map.of(HeartbeatLeases.CHECKPOINT, fits,
        "respawn.dev/detail", "d".repeat(600))), Instant.EPOCH);
    assertThat(view.checkpoint()).isEqualTo(fits);
    assertThat(view.detail()).hasSize(512);
    LeaseView refused = HeartbeatLeases.view(lease(Map.of(HeartbeatLeases.CHECKPOINT, tooLong)), Instant.EPOCH);
    assertThat(refused.checkpoint()).as("a name longer than 256 bytes names no checkpoint the agent has").isNull();
  }

  static AgentInstance instance(String leaseName) {
    AgentInstance instance = new AgentInstance();
    instance.setMetadata(new ObjectMetaBuilder().withName("coder").withNamespace("agents").withUid("u-1").build());
    instance.setSpec(new AgentInstanceSpec());
    if (leaseName != null) {
      instance.getSpec().heartbeat = new InstanceHeartbeatSpec();
      instance.getSpec().heartbeat.leaseName = leaseName;
    }
    return instance;
  }

  static LeaseView viewOf(String annotation, String value) {
    Map<String, String> a = new HashMap<>();
    a.put(annotation, value);
    return HeartbeatLeases.view(lease(a), Instant.EPOCH);
  }

  /** api.md §2: spec.heartbeat.leaseName, "default: the instance name". */
  @Test
  void theLeaseIsNamedBySpecHeartbeatLeaseNameElseByTheInstance() {
    assertThat(HeartbeatLeases.leaseName(instance("coder-beat"))).isEqualTo("coder-beat");
    assertThat(HeartbeatLeases.leaseName(instance(null))).isEqualTo("coder");
    assertThat(HeartbeatLeases.leaseName(instance(""))).as("an empty name names nothing").isEqualTo("coder");
    AgentInstance noSpec = instance(null);
    noSpec.setSpec(null);
    assertThat(HeartbeatLeases.leaseName(noSpec)).isEqualTo("coder");
  }

  /**
   * README "Heartbeat Lease": an edit of spec.heartbeat.leaseName is for the next run; a running agent renews the
   * Lease its pod was given (RESPAWN_LEASE_NAME), whichever of the pod's containers carries it.
   */
  @Test
  void aRunIsJudgedByTheLeaseItsPodWasGivenNotByAnEditedSpec() {
    Pod pod = new PodBuilder().withNewMetadata().withName("coder-2").endMetadata().withNewSpec()
        .addNewContainer().withName("proxy").endContainer()
        .addNewContainer().withName("agent").addNewEnv().withName("OTHER").withValue("x").endEnv()
        .addNewEnv().withName(HeartbeatLeases.LEASE_NAME_ENV).withValue("old-beat").endEnv().endContainer()
        .endSpec().build();
    assertThat(HeartbeatLeases.leaseName(instance("new-beat"), pod)).isEqualTo("old-beat");
    Pod given = new PodBuilder().withNewMetadata().withName("coder-2").endMetadata().withNewSpec()
        .addNewContainer().withName("agent").addNewEnv().withName(HeartbeatLeases.LEASE_NAME_ENV).withValue("")
        .endEnv().endContainer().endSpec().build();
    assertThat(HeartbeatLeases.leaseName(instance("new-beat"), given)).as("an empty value names no Lease")
        .isEqualTo("new-beat");
    assertThat(HeartbeatLeases.leaseName(instance("new-beat"), null)).as("no pod yet: the spec's")
        .isEqualTo("new-beat");
  }

  /** api.md §5 / README: the operator creates the Lease, owned by the instance, labelled respawn.dev/instance. */
  @Test
  void theOperatorsLeaseIsOwnedByTheInstanceLabelledWithItAndHeldByNobody() {
    OwnerReference owner = new OwnerReferenceBuilder().withKind("AgentInstance").withName("coder").withUid("u-1")
        .withController(true).build();
    Lease lease = HeartbeatLeases.newLease(instance("coder-beat"), owner);
    assertThat(lease.getMetadata().getName()).isEqualTo("coder-beat");
    assertThat(lease.getMetadata().getNamespace()).isEqualTo("agents");
    assertThat(lease.getMetadata().getLabels()).containsExactly(Map.entry(AgentInstance.INSTANCE_LABEL, "coder"));
    assertThat(lease.getMetadata().getOwnerReferences()).containsExactly(owner);
    assertThat(lease.getSpec()).isNotNull();
    assertThat(HeartbeatLeases.holder(lease)).isNull();
    assertThat(RenewalClock.renewTime(lease)).as("never renewed").isNull();
  }

  /**
   * api.md §5: respawn.dev/health is Healthy | Stalled | Crashed | Ambiguous; a value the agent may not write (or
   * none of them) fails closed as Ambiguous; no annotation is no verdict (the renewal itself says Healthy).
   */
  @Test
  void theAgentsVerdictIsReadAndAnythingElseIsAmbiguous() {
    assertThat(viewOf(HeartbeatLeases.HEALTH, "Stalled").verdict()).isEqualTo(HealthVerdict.Stalled);
    assertThat(viewOf(HeartbeatLeases.HEALTH, " crashed ").verdict()).isEqualTo(HealthVerdict.Crashed);
    assertThat(viewOf(HeartbeatLeases.HEALTH, "Healthy").verdict()).isEqualTo(HealthVerdict.Healthy);
    assertThat(viewOf(HeartbeatLeases.HEALTH, "fine").verdict()).isEqualTo(HealthVerdict.Ambiguous);
    assertThat(viewOf(HeartbeatLeases.HEALTH, "Stale").verdict()).as("the operator's word, not the agent's")
        .isEqualTo(HealthVerdict.Ambiguous);
    assertThat(viewOf(HeartbeatLeases.HEALTH, "Unknown").verdict()).isEqualTo(HealthVerdict.Ambiguous);
    assertThat(HeartbeatLeases.view(lease(Map.of()), Instant.EPOCH).verdict()).isNull();
  }

  /** api.md §5: step-idempotent and artifacts-ready are true | false; absent says nothing, any other value is false. */
  @Test
  void theResumeFlagsAreTrueFalseOrUnsaid() {
    assertThat(viewOf(HeartbeatLeases.STEP_IDEMPOTENT, "true").stepIdempotent()).isTrue();
    assertThat(viewOf(HeartbeatLeases.STEP_IDEMPOTENT, " FALSE").stepIdempotent()).isFalse();
    // anything but true vouches for nothing (fail-closed): shown as false, and no resume
    assertThat(viewOf(HeartbeatLeases.STEP_IDEMPOTENT, "yes").stepIdempotent()).isFalse();
    assertThat(viewOf(HeartbeatLeases.ARTIFACTS_READY, "false").artifactsReady()).isFalse();
    assertThat(viewOf(HeartbeatLeases.ARTIFACTS_READY, "True").artifactsReady()).isTrue();
    assertThat(viewOf(HeartbeatLeases.ARTIFACTS_READY, "1").artifactsReady()).isFalse();
    assertThat(viewOf(HeartbeatLeases.ARTIFACTS_READY, "nope").artifactsReady()).isFalse();
    assertThat(HeartbeatLeases.view(lease(Map.of()), Instant.EPOCH).artifactsReady()).isNull();
    assertThat(HeartbeatLeases.view(new Lease(), Instant.EPOCH)).as("a Lease without a spec").isNull();
  }

  /**
   * README "Heartbeat Lease": a verdict other than Healthy is the run's own and is removed for the next run; a
   * Healthy verdict (with its detail) stays.
   */
  @Test
  void onlyAVerdictOtherThanHealthyIsCarriedOverToBeCleared() {
    assertThat(HeartbeatLeases.carriesVerdict(lease(Map.of(HeartbeatLeases.HEALTH, "Stalled")))).isTrue();
    assertThat(HeartbeatLeases.carriesVerdict(lease(Map.of(HeartbeatLeases.HEALTH, "Healthy",
        HeartbeatLeases.DETAIL, "step 3")))).isFalse();
    assertThat(HeartbeatLeases.carriesVerdict(lease(Map.of(HeartbeatLeases.DETAIL, "step 3")))).isFalse();
    assertThat(HeartbeatLeases.carriesVerdict(null)).isFalse();
    // read as the verdict is read: in any case, blanks around
    assertThat(HeartbeatLeases.carriesVerdict(lease(Map.of(HeartbeatLeases.HEALTH, " healthy ")))).isFalse();
    assertThat(HeartbeatLeases.carriesVerdict(lease(Map.of(HeartbeatLeases.HEALTH, "stalled")))).isTrue();
    assertThat(HeartbeatLeases.carriesVerdict(lease(Map.of(HeartbeatLeases.HEALTH, "fine")))).as("Ambiguous").isTrue();
  }

  /** api.md §12: a renewal that changes only renewTime wakes no reconcile; a new holder or annotation does. */
  @Test
  void onlyANewHolderOrAnnotationIsAChangeAReconcileMustSee() {
    Lease older = lease(Map.of(HeartbeatLeases.HEALTH, "Healthy"));
    Lease renewed = new LeaseBuilder(older).editSpec().withRenewTime(java.time.ZonedDateTime.now()).endSpec().build();
    assertThat(HeartbeatLeases.meaningfulChange(renewed, older)).isFalse();
    Lease handedOver = new LeaseBuilder(older).editSpec().withHolderIdentity("coder-2").endSpec().build();
    assertThat(HeartbeatLeases.meaningfulChange(handedOver, older)).isTrue();
    Lease stalled = new LeaseBuilder(older).editMetadata().addToAnnotations(HeartbeatLeases.HEALTH, "Stalled")
        .endMetadata().build();
    assertThat(HeartbeatLeases.meaningfulChange(stalled, older)).isTrue();
    assertThat(HeartbeatLeases.meaningfulChange(older, null)).isTrue();
    assertThat(HeartbeatLeases.meaningfulChange(older, new Lease())).as("an older Lease without a spec").isTrue();
  }
}

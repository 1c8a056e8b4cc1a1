package dev.respawn.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClientException;
import org.junit.jupiter.api.Test;

class RunEndRecheckTest {
  private static Lease lease(String resourceVersion) {
    Lease l = new Lease();
    l.setMetadata(new ObjectMetaBuilder().withName("a").withNamespace("ns").withResourceVersion(resourceVersion)
        .build());
    return l;
  }

  @Test
  void theServersLeaseIsTakenOnlyWhenItIsNotTheCopyJudged() {
    Lease cached = lease("7");
    assertThat(RunEndRecheck.differs(cached, () -> lease("7"))).isEmpty();
    assertThat(RunEndRecheck.differs(cached, () -> lease("9"))).get().extracting(l -> l.getMetadata()
        .getResourceVersion()).isEqualTo("9");
    // the cache had none yet: the server's is news
    assertThat(RunEndRecheck.differs(null, () -> lease("3"))).isPresent();
    // gone at the server too: the judgement on the last renewal seen stands
    assertThat(RunEndRecheck.differs(cached, () -> null)).isEmpty();
  }

  @Test
  void aReadNotGrantedLeavesTheCachesJudgementOtherErrorsAreThrown() {
    Lease cached = lease("7");
    assertThat(RunEndRecheck.differs(cached, () -> {
      throw new KubernetesClientException("leases \"a\" is forbidden", 403, null);
    })).isEmpty();
    assertThatThrownBy(() -> RunEndRecheck.differs(cached, () -> {
      throw new KubernetesClientException("etcdserver: request timed out", 500, null);
    })).isInstanceOf(KubernetesClientException.class).hasMessageContaining("timed out");
  }

  @Test
  void aLeaseIsAHeartbeatOnlyWhenControlledByTheInstanceOrByNothingAndLabelledForIt() {
    dev.respawn.api.v1alpha1.AgentInstance instance = new dev.respawn.api.v1alpha1.AgentInstance();
    instance.setMetadata(new ObjectMetaBuilder().withName("coder").withNamespace("ns").withUid("u-1").build());
    Lease foreign = lease("1");
    assertThat(RunLeases.heartbeatOf(foreign, instance)).isFalse();
    Lease labelled = lease("1");
    labelled.getMetadata().setLabels(java.util.Map.of("respawn.dev/instance", "coder"));
    assertThat(RunLeases.heartbeatOf(labelled, instance)).isTrue();
    Lease otherInstances = lease("1");
    otherInstances.getMetadata().setLabels(java.util.Map.of("respawn.dev/instance", "writer"));
    assertThat(RunLeases.heartbeatOf(otherInstances, instance)).isFalse();
    Lease owned = lease("1");
    owned.getMetadata().setOwnerReferences(java.util.List.of(new io.fabric8.kubernetes.api.model.OwnerReferenceBuilder()
        .withApiVersion("respawn.dev/v1alpha1").withKind("AgentInstance").withName("coder").withUid("u-1")
        .withController(true).build()));
    assertThat(RunLeases.heartbeatOf(owned, instance)).isTrue();
    Lease predecessors = lease("1"); // labelled for the name, controlled by an earlier instance of that name
    predecessors.getMetadata().setLabels(java.util.Map.of("respawn.dev/instance", "coder"));
    predecessors.getMetadata().setOwnerReferences(java.util.List.of(new io.fabric8.kubernetes.api.model.OwnerReferenceBuilder()
        .withApiVersion("respawn.dev/v1alpha1").withKind("AgentInstance").withName("coder").withUid("u-0")
        .withController(true).build()));
    assertThat(RunLeases.heartbeatOf(predecessors, instance)).isFalse();
  }
}

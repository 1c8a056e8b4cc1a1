package dev.respawn.controller;

import static dev.respawn.controller.OperatorFixture.at;
import static dev.respawn.controller.OperatorFixture.hasCondition;
import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.heartbeat.HeartbeatLeases;
import dev.respawn.sandbox.Run;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import java.time.Duration;
import java.time.ZonedDateTime;
import org.junit.jupiter.api.Test;

/**
 * An instance made again under the name of one just deleted (kubectl replace --force, a GitOps re-sync) while the
 * garbage collector has not yet removed its predecessor's heartbeat Lease: that Lease bears the instance label and a
 * holder named like the new first pod ({@code <name>-1}), but its controller is the predecessor. Its verdict is not
 * the new run's, and nothing the new run does is judged by it.
 */
class PredecessorLeaseScenarioTest extends MockClusterScenario {

  private void predecessorsLease(String name, String verdict) {
    f.api.client().resource(new LeaseBuilder().withNewMetadata().withName(name).withNamespace(OperatorFixture.NS)
        .addToLabels(AgentInstance.INSTANCE_LABEL, name)
        .addToAnnotations(HeartbeatLeases.HEALTH, verdict)
        .addToAnnotations(HeartbeatLeases.DETAIL, "said by the predecessor")
        .withOwnerReferences(new OwnerReferenceBuilder().withApiVersion("respawn.dev/v1alpha1").withKind("AgentInstance")
            .withName(name).withUid("uid-of-the-predecessor").withController(true).build())
        .endMetadata().withNewSpec().withHolderIdentity(name + "-1").withRenewTime(ZonedDateTime.now())
        .withLeaseDurationSeconds(60).endSpec().build()).create();
  }

  @Test
  void thePredecessorsVerdictDoesNotEndTheNewRunAndTheOperatorMakesItsOwnLeaseOnceThatOneIsGone() {
    f.policy("hb", """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
        heartbeat: {timeout: 2s, startupGrace: 8s}
        """);
    predecessorsLease("ghost", "Crashed");
    f.kubelet.script("ghost", Run.runForever(), Run.runForever());
    AgentInstance created = f.instance("ghost", "hb");
    // the predecessor's Crashed on a Lease held by "ghost-1": not the new ghost-1's word
    f.awaitInstance("ghost", i -> at(i, 1, Phase.Starting) || at(i, 1, Phase.Running));
    f.holdsFor(Duration.ofSeconds(2), () -> f.get("ghost"),
        i -> i.getStatus() != null && Integer.valueOf(0).equals(i.getStatus().attempt) && i.getStatus().lastFailure == null);
    assertThat(f.podsEverCreated("ghost")).containsExactly("ghost-1");
    assertThat(f.lease("ghost").getMetadata().getAnnotations())
        .as("another's Lease is not touched").containsEntry(HeartbeatLeases.HEALTH, "Crashed");
    // the garbage collector removes it: the operator makes the instance's own, which the agent renews
    f.api.client().leases().inNamespace(OperatorFixture.NS).withName("ghost").delete();
    Lease own = org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> f.lease("ghost"),
        l -> l != null && created.getMetadata().getUid().equals(InstanceSighting.controllerUid(l)));
    assertThat(own.getMetadata().getAnnotations()).doesNotContainKey(HeartbeatLeases.HEALTH);
    f.kubelet.renewEvery(Duration.ofMillis(200), "ghost", "ghost-1", "Healthy");
    AgentInstance healthy = f.awaitInstance("ghost",
        i -> at(i, 1, Phase.Running) && hasCondition(i, "Ready", "True", "Healthy"));
    assertThat(healthy.getStatus().attempt).isZero();
    assertThat(f.podsEverCreated("ghost")).containsExactly("ghost-1");
  }
}

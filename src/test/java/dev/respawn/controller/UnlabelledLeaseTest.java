package dev.respawn.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.testsupport.ApiFaults;
import dev.respawn.testsupport.MockApi;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class UnlabelledLeaseTest {
  static final String NS = MockApi.NAMESPACE;
  MockApi api = MockApi.start();

  @AfterEach
  void stop() {
    api.close();
  }

  AgentInstance instance(String uid) {
    AgentInstance i = new AgentInstance();
    i.setMetadata(new ObjectMetaBuilder().withName("coder").withNamespace(NS).withUid(uid).build());
    return i;
  }

  void lease(String ownerUid) {
    api.client().resource(new LeaseBuilder().withNewMetadata().withName("coder").withNamespace(NS)
        .withOwnerReferences(new OwnerReferenceBuilder().withApiVersion("respawn.dev/v1alpha1")
            .withKind("AgentInstance").withName("coder").withUid(ownerUid).withController(true).build())
        .endMetadata().withNewSpec().withHolderIdentity("coder-1").endSpec().build()).create();
  }

  Lease onServer() {
    return api.client().leases().inNamespace(NS).withName("coder").get();
  }

  /** The first {@code times} patches of the Lease answered {@code code}; counts the patches. */
  AtomicInteger patchesAnswered(int code, int times) {
    AtomicInteger patches = new AtomicInteger();
    api.faults(new ApiFaults() {
      @Override
      public MockResponse before(RecordedRequest r) {
        boolean patch = "PATCH".equals(r.getMethod()) && r.getPath().contains("/leases/coder");
        return patch && patches.incrementAndGet() <= times ? ApiFaults.status(code, code == 409 ? "Conflict"
            : "Forbidden", code == 409 ? "the object has been modified" : "denied by a policy") : null;
      }
    });
    return patches;
  }

  /** Patches of the Lease answered 409 (renewed since it was read) {@code times} times. */
  AtomicInteger conflicts(int times) {
    return patchesAnswered(409, times);
  }

  @Test
  void anOwnLeaseIsLabelledAgainAlsoWhenTheAgentRenewedBetweenReadAndPatch() {
    lease("uid-1");
    AtomicInteger patches = conflicts(1);
    UnlabelledLease.Result r = UnlabelledLease.relabel(api.client(), instance("uid-1"), "coder");
    assertThat(r.outcome()).isEqualTo(UnlabelledLease.Outcome.RELABELLED);
    assertThat(patches).hasValue(2);
    assertThat(onServer().getMetadata().getLabels()).containsEntry(AgentInstance.INSTANCE_LABEL, "coder");
    assertThat(r.lease()).get().satisfies(l -> assertThat(l.getSpec().getHolderIdentity()).isEqualTo("coder-1"));
  }

  @Test
  void aLeaseThatKeepsChangingIsLeftForTheNextCreateNotTakenForAnothers() {
    lease("uid-1");
    AtomicInteger patches = conflicts(Integer.MAX_VALUE);
    UnlabelledLease.Result r = UnlabelledLease.relabel(api.client(), instance("uid-1"), "coder");
    assertThat(r.outcome()).isEqualTo(UnlabelledLease.Outcome.NOT_NOW);
    assertThat(patches).hasValue(UnlabelledLease.TRIES);
    assertThat(onServer().getMetadata().getLabels()).isNullOrEmpty();
  }

  @Test
  void aRefusedPatchIsAFailureNotATryAgainNow() {
    lease("uid-1");
    AtomicInteger patches = patchesAnswered(403, Integer.MAX_VALUE);
    assertThat(UnlabelledLease.relabel(api.client(), instance("uid-1"), "coder").outcome())
        .isEqualTo(UnlabelledLease.Outcome.FAILED);
    assertThat(patches).as("not tried again at once").hasValue(1);
    assertThat(onServer().getMetadata().getLabels()).isNullOrEmpty();
  }

  @Test
  void anotherInstancesLeaseIsNeverTouched() {
    lease("uid-of-another");
    AtomicInteger patches = conflicts(0);
    UnlabelledLease.Result r = UnlabelledLease.relabel(api.client(), instance("uid-1"), "coder");
    assertThat(r.outcome()).isEqualTo(UnlabelledLease.Outcome.NOT_OURS);
    assertThat(patches).hasValue(0);
    assertThat(onServer().getMetadata().getLabels()).isNullOrEmpty();
  }
}

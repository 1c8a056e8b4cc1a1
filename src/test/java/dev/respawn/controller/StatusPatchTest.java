package dev.respawn.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentInstanceSpec;
import dev.respawn.api.v1alpha1.AgentInstanceStatus;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.testsupport.MockApi;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The status write lands only on the object as it was read, and the server says so at once otherwise, on fabric8's
 * mock API server too (where a status diff applied to a re-made object got no answer at all).
 */
class StatusPatchTest {
  @RegisterExtension
  static final MockApi API = new MockApi();
  private static final AtomicInteger SEQ = new AtomicInteger();
  /** No retries and a short timeout: a request the server never answers fails as a timeout, not as a 409. */
  private final KubernetesClient client = API.newClient(b -> b.withRequestTimeout(5_000)
      .withRequestRetryBackoffLimit(0));

  private AgentInstance created() {
    AgentInstance instance = new AgentInstance();
    instance.setMetadata(new ObjectMetaBuilder().withName("agent-" + SEQ.incrementAndGet())
        .withNamespace(MockApi.NAMESPACE).build());
    instance.setSpec(Serialization.unmarshal("{\"policyRef\": {\"name\": \"standard\"}, \"template\": {\"spec\": "
        + "{\"containers\": [{\"name\": \"agent\", \"image\": \"registry.example/agents/coder:1\"}]}}}",
        AgentInstanceSpec.class));
    return client.resource(instance).create();
  }

  private Resource<AgentInstance> onServer(AgentInstance instance) {
    return client.resources(AgentInstance.class).inNamespace(MockApi.NAMESPACE)
        .withName(instance.getMetadata().getName());
  }

  private static AgentInstanceStatus status(Phase phase, int attempt, String nextRestartAt) {
    AgentInstanceStatus status = new AgentInstanceStatus();
    status.phase = phase;
    status.attempt = attempt;
    status.nextRestartAt = nextRestartAt;
    return status;
  }

  @Test
  void theWholeStatusOfAnUnchangedObjectIsReplaced() {
    AgentInstance read = created();
    AgentInstance backoff = StatusPatch.replaceIfUnchanged(client, read, status(Phase.Backoff, 2,
        "2026-11-27T10:00:00Z"));
    assertThat(backoff.getMetadata().getResourceVersion()).isNotEqualTo(read.getMetadata().getResourceVersion());

    StatusPatch.replaceIfUnchanged(client, backoff, status(Phase.Running, 2, null));
    AgentInstanceStatus stored = onServer(read).get().getStatus();
    assertThat(stored.phase).isEqualTo(Phase.Running);
    assertThat(stored.attempt).isEqualTo(2);
    assertThat(stored.nextRestartAt).as("a field the new status lacks is gone, not kept").isNull();
  }

  @Test
  void anObjectChangedSinceItWasReadIsRefusedAndKeepsItsStatus() {
    AgentInstance read = StatusPatch.replaceIfUnchanged(client, created(), status(Phase.Running, 0, null));
    onServer(read).edit(i -> {
      i.getMetadata().setAnnotations(java.util.Map.of("respawn.dev/restart", "r-1"));
      return i;
    });

    KubernetesClientException refused = catchThrowableOfType(KubernetesClientException.class,
        () -> StatusPatch.replaceIfUnchanged(client, read, status(Phase.Backoff, 1, "2026-11-27T10:00:00Z")));
    assertThat(refused.getCode()).isEqualTo(409);
    assertThat(onServer(read).get().getStatus().phase).isEqualTo(Phase.Running);
  }

  @Test
  void anObjectDeletedAndMadeAnewUnderItsNameGetsNoneOfTheOldStatusAndTheAnswerComesAtOnce() {
    AgentInstance old = StatusPatch.replaceIfUnchanged(client, created(), status(Phase.Running, 0, null));
    onServer(old).withTimeoutInMillis(0).delete();
    AgentInstance again = new AgentInstance();
    again.setMetadata(new ObjectMetaBuilder().withName(old.getMetadata().getName())
        .withNamespace(MockApi.NAMESPACE).build());
    again.setSpec(old.getSpec());
    AgentInstance remade = client.resource(again).create();

    // a 409, not the client's timeout: the mock answers a version conflict, where a diff's failing op got nothing
    KubernetesClientException refused = catchThrowableOfType(KubernetesClientException.class,
        () -> StatusPatch.replaceIfUnchanged(client, old, status(Phase.Backoff, 3, "2026-11-27T10:00:00Z")));
    assertThat(refused.getCode()).isEqualTo(409);
    AgentInstance now = onServer(old).get();
    assertThat(now.getMetadata().getUid()).isEqualTo(remade.getMetadata().getUid());
    assertThat(now.getStatus()).isNull();
  }

  @Test
  void aDeletedObjectIsNotFound() {
    AgentInstance read = created();
    onServer(read).withTimeoutInMillis(0).delete();
    KubernetesClientException refused = catchThrowableOfType(KubernetesClientException.class,
        () -> StatusPatch.replaceIfUnchanged(client, read, status(Phase.Running, 0, null)));
    assertThat(refused.getCode()).isEqualTo(404);
  }
}

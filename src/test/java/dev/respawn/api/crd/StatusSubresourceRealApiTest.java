package dev.respawn.api.crd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The status subresource: all the durable state the operator keeps there survives a real API server. */
class StatusSubresourceRealApiTest extends RealApiServerFixture {
  /**
   * A status field the CRD schema lacked would be pruned from every status write in silence (the mock keeps
   * anything), and with it what it carries: handled request ids (a restart request acted on again), the circuit's
   * failure times, recent restarts. States of every shape (the round-trip property's generator), mapped to status
   * as the operator maps them, written as the operator writes them (StatusPatch), and read back.
   */
  @Test
  void everyInstanceStatusTheOperatorWritesIsKeptWhole() {
    String name = "status-" + SEQ.incrementAndGet();
    create(INSTANCE, name, "{policyRef: {name: standard}, " + MINIMAL_TEMPLATE + "}");
    var instances = client.resources(dev.respawn.api.v1alpha1.AgentInstance.class).inNamespace(NAMESPACE);
    for (long seed = 1; seed <= 60; seed++) {
      dev.respawn.policy.InstanceState state = dev.respawn.controller.StatusRoundTripProperties.state(
          new java.util.SplittableRandom(seed));
      dev.respawn.api.v1alpha1.AgentInstance current = instances.withName(name).get();
      current.setStatus(dev.respawn.controller.StatusMapper.toStatus(state));
      current.getStatus().conditions = List.of(
          new dev.respawn.api.v1alpha1.StatusCondition("Ready", "False", "StaleHeartbeat", "waiting"),
          new dev.respawn.api.v1alpha1.StatusCondition("Recovering", "True", "Backoff", "attempt 1 of 3"),
          new dev.respawn.api.v1alpha1.StatusCondition("Escalated", "False", "None", ""));
      current.getStatus().conditions.forEach(c -> {
        c.lastTransitionTime = "2026-11-24T10:00:00Z";
        c.observedGeneration = 1L;
      });
      JsonNode sent = JSON.valueToTree(current.getStatus());
      dev.respawn.controller.StatusPatch.replaceIfUnchanged(client, current, current.getStatus());
      dev.respawn.api.v1alpha1.AgentInstanceStatus stored = instances.withName(name).get().getStatus();
      assertThat(dev.respawn.controller.StatusMapper.toState(stored)).as("seed %d: the state read back", seed)
          .isEqualTo(state);
      JsonNode storedJson = JSON.valueToTree(stored);
      assertThat(withoutEmptyArrays(storedJson)).as("seed %d: status as stored", seed)
          .isEqualTo(withoutEmptyArrays(sent));
    }
  }

  /**
   * A status decided on an object that was changed since, or deleted and made anew under its name, is refused with
   * a conflict: it never lands on the newer object (the real server's answer to the operator's write).
   */
  @Test
  void aStatusWriteLandsOnlyOnTheObjectAsItWasRead() {
    String name = "guard-" + SEQ.incrementAndGet();
    create(INSTANCE, name, "{policyRef: {name: standard}, " + MINIMAL_TEMPLATE + "}");
    var instances = client.resources(dev.respawn.api.v1alpha1.AgentInstance.class).inNamespace(NAMESPACE);
    var status = new dev.respawn.api.v1alpha1.AgentInstanceStatus();
    status.phase = dev.respawn.api.v1alpha1.Phase.Backoff;
    status.attempt = 2;
    dev.respawn.api.v1alpha1.AgentInstance read = instances.withName(name).get();
    instances.withName(name).edit(i -> {
      i.getMetadata().setAnnotations(java.util.Map.of("respawn.dev/restart", "r-1"));
      return i;
    });
    assertThat(catchThrowableOfType(KubernetesClientException.class,
        () -> dev.respawn.controller.StatusPatch.replaceIfUnchanged(client, read, status)).getCode())
        .as("changed since it was read").isEqualTo(409);

    dev.respawn.api.v1alpha1.AgentInstance current = instances.withName(name).get();
    instances.withName(name).withTimeoutInMillis(0).delete();
    await().atMost(Duration.ofSeconds(10)).until(() -> instances.withName(name).get() == null);
    create(INSTANCE, name, "{policyRef: {name: standard}, " + MINIMAL_TEMPLATE + "}");
    assertThat(catchThrowableOfType(KubernetesClientException.class,
        () -> dev.respawn.controller.StatusPatch.replaceIfUnchanged(client, current, status)).getCode())
        .as("deleted and made anew").isEqualTo(409);
    assertThat(instances.withName(name).get().getStatus()).isNull();

    dev.respawn.api.v1alpha1.AgentInstance remade = instances.withName(name).get();
    dev.respawn.controller.StatusPatch.replaceIfUnchanged(client, remade, status);
    assertThat(instances.withName(name).get().getStatus().attempt).isEqualTo(2);
  }

  /**
   * status.conditions is a map keyed by type: another party's server-side apply of its own condition (README: a
   * domain-qualified type is kept) owns that item alone; on an atomic list it took the list over, and with
   * --force-conflicts wiped the operator's Ready, Recovering and Escalated (schema-docs tester).
   */
  @Test
  void anotherPartysAppliedConditionLeavesTheOperatorsConditions() {
    String name = "cond-" + SEQ.incrementAndGet();
    create(INSTANCE, name, "{policyRef: {name: standard}, " + MINIMAL_TEMPLATE + "}");
    var instances = client.resources(dev.respawn.api.v1alpha1.AgentInstance.class).inNamespace(NAMESPACE);
    dev.respawn.api.v1alpha1.AgentInstance current = instances.withName(name).get();
    var status = new dev.respawn.api.v1alpha1.AgentInstanceStatus();
    status.phase = dev.respawn.api.v1alpha1.Phase.Running;
    status.conditions = List.of(
        new dev.respawn.api.v1alpha1.StatusCondition("Ready", "True", "Healthy", ""),
        new dev.respawn.api.v1alpha1.StatusCondition("Recovering", "False", "Stable", ""),
        new dev.respawn.api.v1alpha1.StatusCondition("Escalated", "False", "None", ""));
    status.conditions.forEach(c -> c.lastTransitionTime = "2026-11-27T10:00:00Z");
    dev.respawn.controller.StatusPatch.replaceIfUnchanged(client, current, status);

    String applied = "apiVersion: " + GROUP + "/" + VERSION + "\nkind: " + INSTANCE + "\nmetadata: {name: " + name
        + ", namespace: " + NAMESPACE + "}\nstatus:\n  conditions:\n  - {type: example.com/Audited, status: \"True\","
        + " reason: Reviewed, message: ok, lastTransitionTime: \"2026-11-27T11:00:00Z\"}\n";
    client.genericKubernetesResources(KINDS.get(INSTANCE)).inNamespace(NAMESPACE).withName(name)
        .subresource("status").patch(new io.fabric8.kubernetes.client.dsl.base.PatchContext.Builder()
            .withPatchType(io.fabric8.kubernetes.client.dsl.base.PatchType.SERVER_SIDE_APPLY)
            .withFieldManager("auditor").withForce(true).build(), applied);

    assertThat(instances.withName(name).get().getStatus().conditions).extracting(c -> c.type)
        .containsExactlyInAnyOrder("Ready", "Recovering", "Escalated", "example.com/Audited");
  }

  /** The same for a policy's status with a shared dependency's circuit in every field (api.md §11). */
  @Test
  void aPolicyStatusWithEveryDependencyFieldIsKeptWhole() {
    String name = "pstatus-" + SEQ.incrementAndGet();
    create(POLICY, name, "{dependencies: [{name: model-api, match: {messageContains: [HTTP 503]}}]}");
    var policies = client.resources(dev.respawn.api.v1alpha1.AgentRestartPolicy.class).inNamespace(NAMESPACE);
    dev.respawn.api.v1alpha1.AgentRestartPolicy current = policies.withName(name).get();
    var status = new dev.respawn.api.v1alpha1.AgentRestartPolicyStatus();
    status.observedGeneration = 1L;
    status.instances = 3;
    status.totalRetryTime = "14s";
    status.conditions = List.of(new dev.respawn.api.v1alpha1.StatusCondition("Accepted", "True", "Valid", ""));
    var d = new dev.respawn.api.v1alpha1.DependencyStatus();
    d.name = "model-api";
    d.state = dev.respawn.api.v1alpha1.CircuitState.HalfOpen;
    d.blamed = 2;
    d.waiting = 2;
    d.probes = List.of("a0");
    d.trips = 1;
    d.openedAt = "2026-11-24T10:00:00.123Z";
    d.halfOpenAt = "2026-11-24T10:05:00.123Z";
    d.closedAt = "2026-11-24T09:00:00Z";
    d.lastTransitionTime = "2026-11-24T10:05:00.123Z";
    d.releaseOrder = List.of("a1", "a2");
    d.recentBlame = List.of(new dev.respawn.api.v1alpha1.BlameRecord("a1", "2026-11-24T09:59:58.5Z"),
        new dev.respawn.api.v1alpha1.BlameRecord("a2", "2026-11-24T09:59:59Z"));
    status.dependencies = List.of(d);
    current.setStatus(status);
    JsonNode sent = JSON.valueToTree(status);
    dev.respawn.controller.StatusPatch.replaceIfUnchanged(client, current, status);
    JsonNode stored = JSON.valueToTree(policies.withName(name).get().getStatus());
    assertThat(stored).as("policy status as stored").isEqualTo(sent);
  }

  private static JsonNode withoutEmptyArrays(JsonNode node) {
    if (node instanceof ObjectNode object) {
      object.properties().removeIf(f -> f.getValue().isArray() && f.getValue().isEmpty());
      object.forEach(StatusSubresourceRealApiTest::withoutEmptyArrays);
    } else if (node != null && node.isArray()) {
      node.forEach(StatusSubresourceRealApiTest::withoutEmptyArrays);
    }
    return node;
  }
}

package dev.respawn.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.testsupport.MockApi;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** A policy the informer has not delivered yet is not missing: the API server is asked before a refusal. */
class PolicyLookupTest {
  @Test
  void aPolicyTheCacheDoesNotShowYetIsFoundOnTheApiServerAndAMissingOneIsNot() {
    try (MockApi api = MockApi.start(); KubernetesClient client = api.newClient()) {
      AgentRestartPolicy created = new AgentRestartPolicy();
      created.setMetadata(new ObjectMetaBuilder().withName("coding").withNamespace("agents").build());
      created.setSpec(new AgentRestartPolicySpec());
      client.resource(created).create();
      PolicyLookup lookup = new PolicyLookup(id -> Optional.empty(), client);
      assertThat(lookup.apply(new ResourceID("coding", "agents")))
          .hasValueSatisfying(p -> assertThat(p.getMetadata().getName()).isEqualTo("coding"));
      assertThat(lookup.apply(new ResourceID("coding", "elsewhere"))).isEmpty();
      long before = api.requests().all().size();
      AgentRestartPolicy cached = new AgentRestartPolicy();
      cached.setMetadata(new ObjectMetaBuilder().withName("cached").withNamespace("agents").build());
      assertThat(new PolicyLookup(id -> Optional.of(cached), client).apply(new ResourceID("cached", "agents")))
          .containsSame(cached);
      assertThat(api.requests().all()).as("a cached policy costs no request").hasSize((int) before);
    }
  }

  @Test
  void aReadTheServerRefusesIsAMissingPolicyNotAFailedReconcile() {
    try (MockApi api = MockApi.start(); KubernetesClient client = api.newClient()) {
      api.faults(new dev.respawn.testsupport.ApiFaults() {
        @Override
        public io.fabric8.mockwebserver.http.MockResponse before(io.fabric8.mockwebserver.http.RecordedRequest r) {
          return "GET".equals(r.getMethod()) && r.getPath().contains("/agentrestartpolicies/")
              ? dev.respawn.testsupport.ApiFaults.status(403, "Forbidden", "cannot get resource agentrestartpolicies")
              : null;
        }
      });
      assertThat(new PolicyLookup(id -> Optional.empty(), client).apply(new ResourceID("coding", "agents"))).isEmpty();
    }
  }
}

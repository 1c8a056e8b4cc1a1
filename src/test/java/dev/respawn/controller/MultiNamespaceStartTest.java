package dev.respawn.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentInstanceSpec;
import dev.respawn.api.v1alpha1.PolicyReference;
import dev.respawn.testsupport.ApiFaults;
import dev.respawn.testsupport.MockApi;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * An operator watching several namespaces (one informer per namespace, each with its own cache: a cache shared
 * by them lost one namespace's instances whenever another's informer listed) answers every instance that existed
 * before it, also on an API server that serves Respawn's resources but not pods and Leases (an
 * apiextensions-only server, or RBAC that forbids them), where it goes on without those informers after its
 * informer sync timeout.
 */
class MultiNamespaceStartTest {
  MockApi api = MockApi.start();
  RespawnOperator operator;

  @AfterEach
  void stop() {
    if (operator != null) {
      operator.close();
    }
    api.close();
  }

  static AgentInstance instance(String namespace, String name) {
    AgentInstance i = new AgentInstance();
    i.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(namespace).build());
    AgentInstanceSpec spec = new AgentInstanceSpec();
    spec.policyRef = new PolicyReference("missing");
    spec.template = new PodTemplateSpecBuilder().withNewSpec().addNewContainer().withName("agent").withImage("x")
        .endContainer().endSpec().build();
    i.setSpec(spec);
    return i;
  }

  static final List<String> NAMESPACES = List.of("team-a", "team-b");

  @Test
  void instancesThatExistedBeforeTheOperatorAreAnsweredInEveryWatchedNamespace() {
    startWithInstances();
    awaitEveryInstanceAnswered();
  }

  @Test
  void soAreTheyWhenPodsAndLeasesAreNotServed() {
    api.faults(new ApiFaults() {
      @Override
      public MockResponse before(RecordedRequest r) {
        String path = r.getPath();
        boolean unserved = path.matches("^/api/v1/(namespaces/[^/]+/)?pods.*")
            || path.startsWith("/apis/coordination.k8s.io/");
        return unserved ? ApiFaults.status(404, "NotFound", "the server could not find the requested resource")
            : null;
      }
    });
    startWithInstances();
    awaitEveryInstanceAnswered();
  }

  private void startWithInstances() {
    for (String ns : NAMESPACES) {
      for (String name : List.of("one", "two")) {
        api.client().resource(instance(ns, name)).create();
      }
    }
    operator = new RespawnOperator(api.newClient(), OperatorSettings.defaults()
        .withNamespaces(Set.copyOf(NAMESPACES)).withInformerSyncTimeout(Duration.ofSeconds(2)), DecisionSink.NONE,
        Optional.empty()).start();
  }

  private void awaitEveryInstanceAnswered() {
    for (String ns : NAMESPACES) {
      for (String name : List.of("one", "two")) {
        AgentInstance answered = await(ns + "/" + name).atMost(Duration.ofSeconds(20)).until(
            () -> api.client().resources(AgentInstance.class).inNamespace(ns).withName(name).get(),
            i -> i.getStatus() != null && i.getStatus().conditions != null);
        assertThat(answered.getStatus().conditions).anySatisfy(c -> {
          assertThat(c.type).isEqualTo("Ready");
          assertThat(c.reason).isEqualTo("PolicyNotFound");
        });
      }
    }
  }
}

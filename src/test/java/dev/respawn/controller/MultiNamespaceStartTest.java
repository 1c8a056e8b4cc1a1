package dev.respawn.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentInstanceSpec;
import dev.respawn.api.v1alpha1.PolicyReference;
import dev.respawn.testsupport.ApiFaults;
import dev.respawn.testsupport.MockApi;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntry;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntryBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
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

  /**
   * With several namespaces the caches are fabric8's own, whole objects (no {@link TrimmedStore}); the operator's
   * serialization ({@link TolerantResources#forOperator()}) still reads no managed fields, and leaves them on the
   * server.
   */
  @Test
  void theInstancesTheOperatorIsToldOfCarryNoManagedFieldsWhichStayOnTheServer() {
    List<AgentInstance> told = new CopyOnWriteArrayList<>();
    for (String ns : NAMESPACES) {
      AgentInstance applied = instance(ns, "applied");
      applied.getMetadata().setManagedFields(List.of(new ManagedFieldsEntryBuilder()
          .withManager("kubectl-client-side-apply").withOperation("Update").withApiVersion("respawn.dev/v1alpha1")
          .build()));
      api.client().resource(applied).create();
    }
    operator = new RespawnOperator(api.newOperatorClient(b -> b), OperatorSettings.defaults()
        .withNamespaces(Set.copyOf(NAMESPACES)), new DecisionSink() {
          @Override
          public void decided(AgentInstance instance, dev.respawn.policy.Decision decision, Pod pod) {}

          @Override
          public void policyRefused(AgentInstance instance, Refusal reason, String message, Instant at) {
            told.add(instance);
          }
        }, Optional.empty()).start();

    for (String ns : NAMESPACES) {
      AgentInstance answered = awaitAnswered(ns, "applied");
      assertThat(answered.getMetadata().getManagedFields()).as("on the server, after the operator's status write")
          .extracting(ManagedFieldsEntry::getManager).contains("kubectl-client-side-apply");
    }
    assertThat(told).extracting(i -> i.getMetadata().getNamespace()).containsAll(NAMESPACES);
    assertThat(told).allSatisfy(i -> assertThat(i.getMetadata().getManagedFields()).isNullOrEmpty());
  }

  private void startWithInstances() {
    for (String ns : NAMESPACES) {
      for (String name : List.of("one", "two")) {
        api.client().resource(instance(ns, name)).create();
      }
    }
    operator = new RespawnOperator(api.newOperatorClient(b -> b), OperatorSettings.defaults()
        .withNamespaces(Set.copyOf(NAMESPACES)).withInformerSyncTimeout(Duration.ofSeconds(2)), DecisionSink.NONE,
        Optional.empty()).start();
  }

  private void awaitEveryInstanceAnswered() {
    for (String ns : NAMESPACES) {
      for (String name : List.of("one", "two")) {
        AgentInstance answered = awaitAnswered(ns, name);
        assertThat(answered.getStatus().conditions).anySatisfy(c -> {
          assertThat(c.type).isEqualTo("Ready");
          assertThat(c.reason).isEqualTo("PolicyNotFound");
        });
      }
    }
  }

  private AgentInstance awaitAnswered(String ns, String name) {
    return await(ns + "/" + name).atMost(Duration.ofSeconds(20)).until(
        () -> api.client().resources(AgentInstance.class).inNamespace(ns).withName(name).get(),
        i -> i.getStatus() != null && i.getStatus().conditions != null);
  }
}

package dev.respawn.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentInstanceSpec;
import dev.respawn.api.v1alpha1.AgentInstanceStatus;
import dev.respawn.api.v1alpha1.InstanceHeartbeatSpec;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.api.v1alpha1.PolicyReference;
import dev.respawn.heartbeat.HeartbeatLeases;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntryBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class TrimmedStoreTest {
  static final Map<String, String> ANNOTATIONS = Map.of(
      TrimmedStore.LAST_APPLIED, "{\"a whole copy\":\"of the object\"}",
      AgentInstance.STARTED_AT_ANNOTATION, "2026-11-27T17:00:00.123Z",
      "respawn.dev/restart", "r-1",
      "team.example/notes", "x".repeat(10_000));

  static ObjectMetaBuilder meta(String name) {
    return new ObjectMetaBuilder().withNamespace("team-a").withName(name).withUid("u-" + name)
        .withResourceVersion("7").withLabels(Map.of(AgentInstance.INSTANCE_LABEL, "coder"))
        .withAnnotations(ANNOTATIONS).withManagedFields(new ManagedFieldsEntryBuilder().withManager("kubelet")
            .withOperation("Update").withSubresource("status").build());
  }

  @Test
  void podsKeepTheOperatorsOwnAnnotationsOnly() {
    TrimmedStore<Pod> store = TrimmedStore.ofPods();
    Pod pod = new PodBuilder().withMetadata(meta("coder-1").build()).withNewSpec()
        .addNewInitContainer().withName("checkout").withImage("git").endInitContainer()
        .addNewInitContainer().withName("proxy").withImage("envoy").withRestartPolicy("Always").endInitContainer()
        .addNewContainer().withName("agent").withImage("registry.example/coder:1")
        .addNewEnv().withName("MODEL").withValue("large").endEnv()
        .addNewEnv().withName(HeartbeatLeases.LEASE_NAME_ENV).withValue("coder-lease").endEnv()
        .addNewVolumeMount().withName("workspace").withMountPath("/workspace").endVolumeMount().endContainer()
        .addNewContainer().withName("tools").withImage("tools:2").endContainer()
        .addNewVolume().withName("workspace").withNewEmptyDir().endEmptyDir().endVolume()
        .withServiceAccountName("coder-agent").endSpec()
        .withNewStatus().withPhase("Running").addNewContainerStatus().withName("agent").withRestartCount(0)
        .endContainerStatus().endStatus().build();
    String key = store.getKey(pod);
    assertThat(key).isEqualTo(Cache.metaNamespaceKeyFunc(pod));
    store.put(key, pod);

    Pod held = store.get(key);
    assertThat(held.getMetadata().getManagedFields()).isNullOrEmpty();
    assertThat(held.getMetadata().getAnnotations()).containsOnlyKeys(AgentInstance.STARTED_AT_ANNOTATION,
        "respawn.dev/restart");
    assertThat(held.getMetadata().getLabels()).containsEntry(AgentInstance.INSTANCE_LABEL, "coder");
    assertThat(held.getMetadata().getUid()).isEqualTo("u-coder-1");
    // of the spec, what the operator reads: container names, the run's Lease, which init containers are sidecars
    assertThat(held.getSpec().getContainers()).extracting(Container::getName).containsExactly("agent", "tools");
    assertThat(HeartbeatLeases.leaseName(null, held)).isEqualTo("coder-lease");
    assertThat(held.getSpec().getContainers().get(0).getEnv()).extracting(EnvVar::getName)
        .containsExactly(HeartbeatLeases.LEASE_NAME_ENV);
    assertThat(held.getSpec().getContainers()).allSatisfy(c -> {
      assertThat(c.getImage()).isNull();
      assertThat(c.getVolumeMounts()).isNullOrEmpty();
    });
    assertThat(held.getSpec().getInitContainers()).extracting(Container::getName, Container::getRestartPolicy)
        .containsExactly(tuple("checkout", null), tuple("proxy", "Always"));
    assertThat(held.getSpec().getVolumes()).isNullOrEmpty();
    assertThat(held.getSpec().getServiceAccountName()).isNull();
    assertThat(held.getStatus().getPhase()).isEqualTo("Running");
    assertThat(held.getStatus().getContainerStatuses()).extracting(ContainerStatus::getName).containsExactly("agent");
    // the informer tells its handlers the object it stored: trimmed in place, old and new compare alike
    assertThat(held).isSameAs(pod);
    assertThat(store.size()).isEqualTo(1);
    assertThat(store.remove(key)).isSameAs(pod);
    assertThat(store.keySet()).isEmpty();
  }

  @Test
  void instancesLoseManagedFieldsAndTheLastAppliedCopyOnly() {
    TrimmedStore<AgentInstance> store = TrimmedStore.ofMetadata();
    AgentInstance instance = instance();
    store.put(store.getKey(instance), instance);

    AgentInstance held = store.values().findFirst().orElseThrow();
    assertThat(held.getMetadata().getManagedFields()).isNullOrEmpty();
    // the operator's action annotations and anything else of the user's are read and kept
    assertThat(held.getMetadata().getAnnotations()).containsOnlyKeys(AgentInstance.STARTED_AT_ANNOTATION,
        "respawn.dev/restart", "team.example/notes");
    assertThat(held.getSpec().template).isNotNull();
    assertThat(held.getSpec().task).isEqualTo("refactor the billing module");
  }

  @Test
  void fleetMembersKeepWhatThePoliciesRead() {
    TrimmedStore<AgentInstance> store = TrimmedStore.ofFleetMembers();
    AgentInstance instance = instance();
    store.put(store.getKey(instance), instance);

    AgentInstance held = store.get("team-a/coder");
    assertThat(held.getSpec().policyRef.name).isEqualTo("agents");
    assertThat(held.getSpec().suspend).isTrue();
    assertThat(held.getStatus().phase).isEqualTo(Phase.Backoff);
    assertThat(held.getMetadata().getUid()).isEqualTo("u-coder");
    assertThat(held.getSpec().template).isNull();
    assertThat(held.getSpec().task).isNull();
    assertThat(held.getSpec().heartbeat).isNull();
    assertThat(held.getSpec().agentContainer).isNull();
    assertThat(held.getMetadata().getManagedFields()).isNullOrEmpty();
    assertThat(held.getMetadata().getAnnotations()).doesNotContainKey(TrimmedStore.LAST_APPLIED);
  }

  @Test
  void aStoreIsGivenOnlyToAnInformerOfItsOwn() {
    TrimmedStore<Pod> store = TrimmedStore.ofPods();
    assertThat(TrimmedStore.forWatched(Set.of(), store)).isSameAs(store);
    assertThat(TrimmedStore.forWatched(Set.of("team-a"), store)).isSameAs(store);
    assertThat(TrimmedStore.forWatched(Set.of("team-a", "team-b"), store)).as("JOSDK's own").isNull();
  }

  static AgentInstance instance() {
    AgentInstance instance = new AgentInstance();
    instance.setMetadata(meta("coder").build());
    AgentInstanceSpec spec = new AgentInstanceSpec();
    spec.policyRef = new PolicyReference("agents");
    spec.suspend = true;
    spec.task = "refactor the billing module";
    spec.agentContainer = "agent";
    spec.heartbeat = new InstanceHeartbeatSpec();
    spec.template = new PodTemplateSpecBuilder().withNewSpec().addNewContainer().withName("agent").withImage("x")
        .endContainer().endSpec().build();
    instance.setSpec(spec);
    AgentInstanceStatus status = new AgentInstanceStatus();
    status.phase = Phase.Backoff;
    instance.setStatus(status);
    return instance;
  }
}

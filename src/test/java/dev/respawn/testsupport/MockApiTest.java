package dev.respawn.testsupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentInstanceSpec;
import dev.respawn.api.v1alpha1.AgentInstanceStatus;
import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.api.v1alpha1.Phase;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.MixedOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.api.model.KubernetesResourceList;
import io.fabric8.mockwebserver.MockWebServer;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class MockApiTest {
  @RegisterExtension
  static final MockApi API = new MockApi();

  static MixedOperation<AgentInstance, KubernetesResourceList<AgentInstance>, Resource<AgentInstance>> instances(
      KubernetesClient client) {
    return client.resources(AgentInstance.class);
  }

  static AgentInstance instance(String namespace, String name, String task) {
    AgentInstance ai = new AgentInstance();
    ai.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(namespace).build());
    AgentInstanceSpec spec = new AgentInstanceSpec();
    spec.task = task;
    spec.template = new PodTemplateSpecBuilder().withNewSpec().addNewContainer().withName("agent")
        .withImage("registry.example/agents/coder:1.4").endContainer().endSpec().build();
    ai.setSpec(spec);
    return ai;
  }

  @Test
  void registersBothCrdsWithTheStatusSubresource() {
    List<CustomResourceDefinition> crds = API.client().apiextensions().v1().customResourceDefinitions().list()
        .getItems();

    assertThat(crds).extracting(c -> c.getMetadata().getName())
        .containsExactlyInAnyOrder("agentinstances.respawn.dev", "agentrestartpolicies.respawn.dev");
    assertThat(crds).allSatisfy(c -> assertThat(c.getSpec().getVersions().get(0).getSubresources().getStatus())
        .isNotNull());
  }

  @Test
  void aStatusWriteLeavesTheSpecAloneAndASpecWriteLeavesTheStatusAlone() {
    var client = API.client();
    var created = instances(client).inNamespace("crd-status").resource(instance("crd-status", "coder", "TASK-1"))
        .create();
    assertThat(created.getMetadata().getGeneration()).isEqualTo(1L);

    // status subresource: the status changes, the spec change in the same body is ignored
    AgentInstance statusWrite = instance("crd-status", "coder", "TASK-changed-by-status-write");
    statusWrite.setStatus(new AgentInstanceStatus());
    statusWrite.getStatus().phase = Phase.Running;
    statusWrite.getStatus().run = 4;
    instances(client).inNamespace("crd-status").resource(statusWrite).updateStatus();

    AgentInstance afterStatus = instances(client).inNamespace("crd-status").withName("coder").get();
    assertThat(afterStatus.getSpec().task).isEqualTo("TASK-1");
    assertThat(afterStatus.getStatus().phase).isEqualTo(Phase.Running);
    assertThat(afterStatus.getStatus().run).isEqualTo(4);
    assertThat(afterStatus.getMetadata().getGeneration()).isEqualTo(1L);

    // main resource: the spec changes, the status change in the same body is ignored
    afterStatus.getSpec().task = "TASK-2";
    afterStatus.getStatus().phase = Phase.Failed;
    afterStatus.getStatus().run = 99;
    instances(client).inNamespace("crd-status").resource(afterStatus).update();

    AgentInstance afterSpec = instances(client).inNamespace("crd-status").withName("coder").get();
    assertThat(afterSpec.getSpec().task).isEqualTo("TASK-2");
    assertThat(afterSpec.getStatus().phase).isEqualTo(Phase.Running);
    assertThat(afterSpec.getStatus().run).isEqualTo(4);
    assertThat(afterSpec.getMetadata().getGeneration()).isEqualTo(2L);

    // a JSON merge patch of the status (what the operator uses instead of server-side apply)
    AgentInstance patch = instances(client).inNamespace("crd-status").withName("coder").get();
    patch.getStatus().phase = Phase.Backoff;
    instances(client).inNamespace("crd-status").resource(patch).patchStatus();
    AgentInstance afterPatch = instances(client).inNamespace("crd-status").withName("coder").get();
    assertThat(afterPatch.getStatus().phase).isEqualTo(Phase.Backoff);
    assertThat(afterPatch.getSpec().task).isEqualTo("TASK-2");
  }

  @Test
  void theRestartPolicyHasAStatusSubresourceToo() {
    var client = API.client();
    AgentRestartPolicy policy = new AgentRestartPolicy();
    policy.setMetadata(new ObjectMetaBuilder().withName("standard").withNamespace("crd-policy").build());
    policy.setSpec(new AgentRestartPolicySpec());
    policy.getSpec().maxRetries = 3;
    client.resource(policy).create();

    policy.getSpec().maxRetries = 7;
    policy.setStatus(new dev.respawn.api.v1alpha1.AgentRestartPolicyStatus());
    policy.getStatus().instances = 12;
    client.resources(AgentRestartPolicy.class).inNamespace("crd-policy").resource(policy).updateStatus();

    AgentRestartPolicy stored = client.resources(AgentRestartPolicy.class).inNamespace("crd-policy")
        .withName("standard").get();
    assertThat(stored.getStatus().instances).isEqualTo(12);
    assertThat(stored.getSpec().maxRetries).isEqualTo(3);

    // the part that needs the CRD: a write of the main resource keeps the stored status
    stored.getSpec().maxRetries = 5;
    stored.getStatus().instances = 0;
    client.resources(AgentRestartPolicy.class).inNamespace("crd-policy").resource(stored).update();
    AgentRestartPolicy updated = client.resources(AgentRestartPolicy.class).inNamespace("crd-policy")
        .withName("standard").get();
    assertThat(updated.getSpec().maxRetries).isEqualTo(5);
    assertThat(updated.getStatus().instances).isEqualTo(12);
  }

  @Test
  void countsWritesByVerbAndResource() {
    var client = API.client();
    long before = API.requests().writeCount();
    Pod pod = new PodBuilder().withNewMetadata().withName("counted").withNamespace("counting").endMetadata()
        .withNewSpec().addNewContainer().withName("agent").withImage("busybox").endContainer().endSpec().build();

    client.pods().inNamespace("counting").resource(pod).create();
    client.pods().inNamespace("counting").withName("counted").get();
    client.pods().inNamespace("counting").withName("counted").editStatus(p -> {
      p.setStatus(new io.fabric8.kubernetes.api.model.PodStatus());
      p.getStatus().setPhase("Running");
      return p;
    });
    client.pods().inNamespace("counting").withName("counted").delete();

    assertThat(API.requests().writeCount() - before).isEqualTo(3);
    assertThat(API.requests().count("POST", "pods")).isEqualTo(1);
    assertThat(API.requests().count("PATCH", "pods/status")).isEqualTo(1);
    assertThat(API.requests().count("DELETE", "pods")).isEqualTo(1);
    assertThat(API.requests().count("GET", "pods")).isEqualTo(2); // the explicit get and the one of editStatus
    assertThat(API.requests().writesByResource())
        .containsEntry("POST pods", 1L).containsEntry("PATCH pods/status", 1L).containsEntry("DELETE pods", 1L)
        .containsEntry("POST customresourcedefinitions.apiextensions.k8s.io", 2L);
    assertThat(API.requests().writes()).allMatch(RequestLog.Request::isWrite);
    assertThat(API.requests().matching(r -> r.resource().equals("pods/status")))
        .singleElement().satisfies(r -> assertThat(r.code()).isEqualTo(202));
  }

  @Test
  void clearForgetsWhatWasRecorded() {
    MockApi own = MockApi.start();
    try {
      assertThat(own.requests().writeCount()).isEqualTo(2); // the two CRDs
      own.requests().clear();
      assertThat(own.requests().all()).isEmpty();
      own.client().pods().inNamespace("x").list();
      assertThat(own.requests().all()).singleElement()
          .satisfies(r -> assertThat(r.key()).isEqualTo("GET pods"));
    } finally {
      own.close();
    }
  }

  @Test
  void drainsTheMockServersOwnRequestQueue() throws InterruptedException {
    API.client().pods().inNamespace("drain").list();
    API.client().pods().inNamespace("drain").list();

    assertThat(API.server().getRequestCount()).isGreaterThanOrEqualTo(2);
    assertThat(API.server().takeRequest(50, TimeUnit.MILLISECONDS)).isNull();
  }

  @Test
  void expectationsComeBeforeTheStoreSoATestCanMakeTheServerFail() {
    API.server().expect().post().withPath("/api/v1/namespaces/refused/pods")
        .andReturn(403, new StatusBuilder().withCode(403).withReason("Forbidden").withMessage("quota").build())
        .once();
    Pod pod = new PodBuilder().withNewMetadata().withName("refused").endMetadata().build();

    assertThatThrownBy(() -> API.client().pods().inNamespace("refused").resource(pod).create())
        .isInstanceOf(KubernetesClientException.class)
        .satisfies(e -> assertThat(((KubernetesClientException) e).getCode()).isEqualTo(403));
    assertThat(API.requests().matching(r -> r.path().equals("/api/v1/namespaces/refused/pods")))
        .singleElement().satisfies(r -> assertThat(r.code()).isEqualTo(403));
    // once: the next create reaches the CRUD store
    assertThat(API.client().pods().inNamespace("refused").resource(pod).create().getMetadata().getUid()).isNotNull();
  }

  @Test
  void newClientsTakeConfigurationChanges() {
    KubernetesClient kubelet = API.newClient(b -> b.withUserAgent("simulated-kubelet").withNamespace("elsewhere"));

    assertThat(kubelet.getNamespace()).isEqualTo("elsewhere");
    assertThat(API.client().getNamespace()).isEqualTo(MockApi.NAMESPACE);
    assertThat(kubelet.getMasterUrl().toString()).isEqualTo(API.url());
  }

  @Test
  void silencesTheMockServersRequestLogging() {
    assertThat(Logger.getLogger(MockWebServer.class.getName()).getLevel()).isEqualTo(Level.OFF);
  }

  @ParameterizedTest
  @CsvSource({
      "/api/v1/namespaces/a/pods, pods",
      "/api/v1/namespaces/a/pods/coder-1, pods",
      "/api/v1/namespaces/a/pods/coder-1/status, pods/status",
      "/api/v1/pods?labelSelector=respawn.dev%2Finstance&watch=true, pods",
      "/api/v1/namespaces/a, namespaces",
      "/api/v1/namespaces, namespaces",
      "/apis/respawn.dev/v1alpha1/namespaces/a/agentinstances/coder/status?fieldManager=x, "
          + "agentinstances.respawn.dev/status",
      "/apis/events.k8s.io/v1/namespaces/a/events, events.events.k8s.io",
      "/apis/coordination.k8s.io/v1/namespaces/a/leases/coder, leases.coordination.k8s.io",
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions, customresourcedefinitions.apiextensions.k8s.io",
      "/version, ''",
      "/apis/respawn.dev/v1alpha1, ''"
  })
  void namesTheResourceOfAPath(String path, String resource) {
    assertThat(RequestLog.resourceOf(path)).isEqualTo(resource);
  }

  /**
   * A fact of the mock the load harness must live with: fabric8's informers end each watch after 5 to 10
   * minutes and resume it at their last resourceVersion. A real API server then sends what happened since
   * (a deletion included); the mock ignores the resourceVersion and starts the watch afresh: an ADDED for
   * every object there is now, nothing for one deleted meanwhile, so an informer keeps a deleted pod for good.
   */
  @Test
  void aWatchResumedAtAResourceVersionIsNotToldOfADeletionMadeBeforeItBegan() throws InterruptedException {
    try (MockApi api = MockApi.start()) {
      var client = api.client();
      String ns = "watch-resume";
      Pod kept = client.pods().inNamespace(ns).resource(pod("kept")).create();
      client.pods().inNamespace(ns).resource(pod("gone")).create();
      String resumeAt = client.pods().inNamespace(ns).list().getMetadata().getResourceVersion();
      client.pods().inNamespace(ns).withName("gone").delete();
      java.util.concurrent.BlockingQueue<String> seen = new java.util.concurrent.LinkedBlockingQueue<>();
      try (var watch = client.pods().inNamespace(ns).watch(new io.fabric8.kubernetes.api.model.ListOptionsBuilder()
          .withResourceVersion(resumeAt).build(), new io.fabric8.kubernetes.client.Watcher<Pod>() {
            @Override
            public void eventReceived(Action action, Pod pod) {
              seen.add(action + " " + pod.getMetadata().getName() + " " + pod.getMetadata().getLabels());
            }

            @Override
            public void onClose(io.fabric8.kubernetes.client.WatcherException cause) {}
          })) {
        client.pods().inNamespace(ns).withName("kept").edit(p -> new PodBuilder(p).editMetadata()
            .addToLabels("marker", "after").endMetadata().build());
        List<String> events = new java.util.ArrayList<>();
        String event;
        do {
          event = seen.poll(10, TimeUnit.SECONDS);
          events.add(event);
        } while (event != null && !event.contains("marker=after"));
        // a real API server: "DELETED gone {}" first, then the marker's MODIFIED
        assertThat(events).containsExactly("ADDED kept " + kept.getMetadata().getLabels(),
            "MODIFIED kept {marker=after}");
      }
    }
  }

  private static Pod pod(String name) {
    return new PodBuilder().withNewMetadata().withName(name).endMetadata().withNewSpec().addNewContainer()
        .withName("c").withImage("busybox").endContainer().endSpec().build();
  }

  @Test
  void aStoppedApiRefusesUse() {
    MockApi stopped = new MockApi();
    assertThatThrownBy(stopped::client).isInstanceOf(IllegalStateException.class);
  }
}

package dev.respawn.controller;

import static dev.respawn.controller.OperatorFixture.NS;
import static dev.respawn.controller.OperatorFixture.at;
import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentInstanceSpec;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.api.v1alpha1.PolicyReference;
import dev.respawn.sandbox.Run;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntryBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The operator's caches keep less than the API server holds ({@link TrimmedStore}): what they drop is neither
 * missed by a decision nor lost on the server by the operator's writes.
 */
class TrimmedCacheScenarioTest extends MockClusterScenario {
  static final String NOTES = "team.example/notes";

  @Test
  void whatTheCachesDropStaysOnTheServerAndEveryDecisionIsMadeAsBefore() {
    // the pods the decisions are told with, as the operator's cache holds them
    java.util.List<io.fabric8.kubernetes.api.model.Pod> told = new java.util.concurrent.CopyOnWriteArrayList<>();
    f.observer = new DecisionSink() {
      @Override
      public void decided(AgentInstance i, dev.respawn.policy.Decision decision, io.fabric8.kubernetes.api.model.Pod pod) {
        if (pod != null) {
          told.add(pod);
        }
      }

      @Override
      public void policyRefused(AgentInstance i, Refusal reason, String message, java.time.Instant at) {}
    };
    f.policy("fast", "backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}");
    f.kubelet.script("coder", Run.exit(1, "Error", "connection reset by peer"), Run.runForever(),
        Run.runForever());
    AgentInstance instance = new AgentInstance();
    instance.setMetadata(new ObjectMetaBuilder().withName("coder").withNamespace(NS)
        .withAnnotations(Map.of(TrimmedStore.LAST_APPLIED, "{\"kind\":\"AgentInstance\"}"))
        .withManagedFields(new ManagedFieldsEntryBuilder().withManager("kubectl-client-side-apply")
            .withOperation("Update").withApiVersion("respawn.dev/v1alpha1").build()).build());
    AgentInstanceSpec spec = new AgentInstanceSpec();
    spec.policyRef = new PolicyReference("fast");
    spec.task = "refactor the billing module";
    spec.template = new PodTemplateSpecBuilder().withNewMetadata().withAnnotations(Map.of(NOTES, "x".repeat(4096)))
        .endMetadata().withNewSpec().addNewContainer().withName("agent").withImage("registry.example/coder:1")
        .endContainer().endSpec().build();
    instance.setSpec(spec);
    f.client.resource(instance).create();

    // a counted failure, then a restart asked for: the action annotation is read from the trimmed cache
    f.awaitInstance("coder", i -> at(i, 2, Phase.Running));
    f.annotate("coder", "respawn.dev/restart", "r-1");
    AgentInstance restarted = f.awaitInstance("coder", i -> at(i, 3, Phase.Running));
    assertThat(restarted.getStatus().attempt).isEqualTo(1);
    assertThat(restarted.getStatus().lastRestart.reason).isNotBlank();
    // the policies count their instances from a cache without templates
    f.awaitPolicy("fast", p -> p.getStatus() != null && Integer.valueOf(1).equals(p.getStatus().instances));

    // the operator's status writes left what its cache dropped on the server
    assertThat(restarted.getMetadata().getAnnotations()).containsKey(TrimmedStore.LAST_APPLIED);
    assertThat(restarted.getMetadata().getManagedFields()).extracting(m -> m.getManager())
        .contains("kubectl-client-side-apply");
    // the cache held the run that failed without the template's annotations and image, its end whole
    assertThat(told).filteredOn(p -> "coder-1".equals(p.getMetadata().getName()) && p.getStatus() != null
        && p.getStatus().getContainerStatuses() != null && p.getStatus().getContainerStatuses().stream()
            .anyMatch(c -> c.getState() != null && c.getState().getTerminated() != null))
        .isNotEmpty().allSatisfy(p -> {
          assertThat(p.getMetadata().getAnnotations()).doesNotContainKey(NOTES)
              .containsKey(AgentInstance.STARTED_AT_ANNOTATION);
          assertThat(p.getSpec().getContainers()).singleElement().satisfies(c -> {
            assertThat(c.getName()).isEqualTo("agent");
            assertThat(c.getImage()).isNull();
          });
        });
    // and every pod got the template's annotations, its own cache of pods holding none of them
    assertThat(f.pods("coder")).singleElement().satisfies(pod ->
        assertThat(pod.getMetadata().getAnnotations()).containsEntry(NOTES, "x".repeat(4096))
            .containsKey(AgentInstance.STARTED_AT_ANNOTATION));
  }
}

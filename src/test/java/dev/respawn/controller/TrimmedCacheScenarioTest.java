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
    // and every pod got the template's annotations, its own cache of pods holding none of them
    assertThat(f.pods("coder")).singleElement().satisfies(pod ->
        assertThat(pod.getMetadata().getAnnotations()).containsEntry(NOTES, "x".repeat(4096))
            .containsKey(AgentInstance.STARTED_AT_ANNOTATION));
  }
}

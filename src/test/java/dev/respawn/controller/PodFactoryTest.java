package dev.respawn.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentInstanceSpec;
import dev.respawn.policy.Decision;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class PodFactoryTest {
  private static final java.time.Instant AT = java.time.Instant.parse("2026-11-21T10:00:00.250Z");

  /**
   * The kubelet expands {@code $(NAME)} in env values and turns {@code $$} into {@code $}: free text the operator
   * passes (spec.task, the checkpoint to resume from) is escaped, so the agent reads it as written.
   */
  @Test
  void freeTextInTheEnvironmentReachesTheAgentAsWritten() {
    AgentInstance instance = instance("budget $$5 for $(HOME)", new PodTemplateSpecBuilder().withNewSpec()
        .addNewContainer().withName("agent").withImage("registry.example/agents/coder:1.4").endContainer().endSpec()
        .build());

    Map<String, String> env = PodFactory.build(instance, new Decision.PodStart(2, "coder-2", 1,
        Optional.of("ckpt-$(RESPAWN_RUN)"), Optional.empty(), Optional.empty(), AT), "coder").getSpec().getContainers().get(0).getEnv()
        .stream().collect(Collectors.toMap(EnvVar::getName, EnvVar::getValue));

    assertThat(env).containsEntry("RESPAWN_TASK", "budget $$$$5 for $$(HOME)")
        .containsEntry("RESPAWN_RESUME_CHECKPOINT", "ckpt-$$(RESPAWN_RUN)").containsEntry("RESPAWN_RUN", "2");
    assertThat(KubeletExpansion.of(env.get("RESPAWN_TASK"))).isEqualTo("budget $$5 for $(HOME)");
  }

  /** The kubelet expands $(NAME) only from variables listed before: the operator's come first, a template uses them. */
  @Test
  void theTemplatesOwnValuesMayReferToTheOperatorsAndCannotReplaceThem() {
    AgentInstance instance = instance("TASK-31-1", new PodTemplateSpecBuilder().withNewSpec().addNewContainer()
        .withName("agent").withImage("registry.example/agents/coder:1.4").addNewEnv().withName("PROMPT")
        .withValue("work on $(RESPAWN_TASK)").endEnv().addNewEnv().withName("RESPAWN_RUN").withValue("99").endEnv()
        .endContainer().endSpec().build());

    java.util.List<EnvVar> env = PodFactory.build(instance, new Decision.PodStart(3, "coder-3", 0, Optional.empty(),
        Optional.empty(), Optional.empty(), AT), "coder").getSpec().getContainers().get(0).getEnv();

    java.util.List<String> names = env.stream().map(EnvVar::getName).toList();
    assertThat(names.indexOf("RESPAWN_TASK")).isLessThan(names.indexOf("PROMPT"));
    assertThat(env).filteredOn(e -> e.getName().equals("RESPAWN_RUN")).singleElement()
        .satisfies(e -> assertThat(e.getValue()).isEqualTo("3"));
    assertThat(names).endsWith("PROMPT");
  }

  /**
   * Every run's pod, the first included, carries when the operator started it, by the operator's own clock: its
   * startup deadlines are counted from that, not from creationTimestamp (the API server's clock).
   */
  @Test
  void everyPodCarriesTheTimeTheOperatorStartedItsRun() {
    AgentInstance instance = instance("t", new PodTemplateSpecBuilder().withNewMetadata()
        .addToAnnotations("example.com/team", "a").endMetadata().withNewSpec().addNewContainer().withName("agent")
        .withImage("registry.example/agents/coder:1.4").endContainer().endSpec().build());

    var pod = PodFactory.build(instance, new Decision.PodStart(1, "coder-1", 0, Optional.empty(), Optional.empty(),
        Optional.empty(), AT), "coder");

    assertThat(pod.getMetadata().getAnnotations()).containsEntry(AgentInstance.STARTED_AT_ANNOTATION,
        "2026-11-21T10:00:00.250Z").containsEntry("example.com/team", "a");
  }

  private static AgentInstance instance(String task, io.fabric8.kubernetes.api.model.PodTemplateSpec template) {
    AgentInstance instance = new AgentInstance();
    instance.setMetadata(new ObjectMetaBuilder().withName("coder").withNamespace("agents").withUid("u-1").build());
    instance.setSpec(new AgentInstanceSpec());
    instance.getSpec().task = task;
    instance.getSpec().template = template;
    return instance;
  }

  /** What the kubelet does to an env value with no variables defined before it: {@code $$} -> {@code $}. */
  static final class KubeletExpansion {
    static String of(String value) {
      StringBuilder out = new StringBuilder();
      for (int i = 0; i < value.length(); i++) {
        char c = value.charAt(i);
        if (c == '$' && i + 1 < value.length() && value.charAt(i + 1) == '$') {
          out.append('$');
          i++;
        } else {
          out.append(c);
        }
      }
      return out.toString();
    }
  }
}

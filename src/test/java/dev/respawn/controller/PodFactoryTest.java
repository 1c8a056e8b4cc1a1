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

  /**
   * The template's finalizers reach the pod, as a Deployment's or a Job's do (a collector that must see every pod
   * before it goes); the template's name, namespace and owners do not: those are the operator's.
   */
  @Test
  void theTemplatesFinalizersReachThePodItsNameAndOwnersDoNot() {
    AgentInstance instance = instance("t", new PodTemplateSpecBuilder().withNewMetadata().withName("mine")
        .withNamespace("elsewhere").addToFinalizers("example.com/collect-logs").addNewOwnerReference().withUid("x")
        .withName("other").withKind("ConfigMap").withApiVersion("v1").endOwnerReference().endMetadata().withNewSpec()
        .addNewContainer().withName("agent").withImage("registry.example/agents/coder:1.4").endContainer().endSpec()
        .build());

    var pod = PodFactory.build(instance, new Decision.PodStart(1, "coder-1", 0, Optional.empty(), Optional.empty(),
        Optional.empty(), AT), "coder");

    assertThat(pod.getMetadata().getFinalizers()).containsExactly("example.com/collect-logs");
    assertThat(pod.getMetadata().getName()).isEqualTo("coder-1");
    assertThat(pod.getMetadata().getNamespace()).isEqualTo("agents");
    assertThat(pod.getMetadata().getOwnerReferences()).singleElement()
        .satisfies(o -> assertThat(o.getUid()).isEqualTo("u-1"));
  }

  /**
   * api.md §2: pods are named {@code <instance>-<run>}, owned by the instance (controller=true), labelled
   * respawn.dev/instance and respawn.dev/run, restartPolicy Never (whatever the template says), and given env
   * RESPAWN_INSTANCE, RESPAWN_RUN, RESPAWN_ATTEMPT, RESPAWN_LEASE_NAME, RESPAWN_TASK; the template's labels stay.
   */
  @Test
  void aRunsPodIsNamedOwnedLabelledAndNeverRestartedByTheKubelet() {
    AgentInstance instance = instance("TASK-31-1", new PodTemplateSpecBuilder().withNewMetadata()
        .addToLabels("team", "a").addToLabels(AgentInstance.RUN_LABEL, "7").endMetadata().withNewSpec()
        .withRestartPolicy("Always").addNewContainer().withName("agent").withImage("registry.example/agents/coder:1.4")
        .endContainer().endSpec().build());
    instance.setApiVersion("respawn.dev/v1alpha1");
    instance.setKind("AgentInstance");

    var pod = PodFactory.build(instance, new Decision.PodStart(3, "coder-3", 2, Optional.empty(), Optional.empty(),
        Optional.empty(), AT), "coder-beat");

    assertThat(pod.getMetadata().getName()).isEqualTo("coder-3");
    assertThat(pod.getMetadata().getNamespace()).isEqualTo("agents");
    assertThat(pod.getMetadata().getLabels()).containsEntry(AgentInstance.INSTANCE_LABEL, "coder")
        .containsEntry(AgentInstance.RUN_LABEL, "3").containsEntry("team", "a");
    assertThat(pod.getMetadata().getOwnerReferences()).singleElement().satisfies(o -> {
      assertThat(o.getUid()).isEqualTo("u-1");
      assertThat(o.getName()).isEqualTo("coder");
      assertThat(o.getKind()).isEqualTo("AgentInstance");
      assertThat(o.getController()).isTrue();
    });
    assertThat(pod.getSpec().getRestartPolicy()).isEqualTo("Never");
    Map<String, String> env = pod.getSpec().getContainers().get(0).getEnv().stream()
        .collect(Collectors.toMap(EnvVar::getName, EnvVar::getValue));
    assertThat(env).containsEntry("RESPAWN_INSTANCE", "coder").containsEntry("RESPAWN_RUN", "3")
        .containsEntry("RESPAWN_POD_NAME", pod.getMetadata().getName()).containsEntry("RESPAWN_ATTEMPT", "2").containsEntry("RESPAWN_LEASE_NAME", "coder-beat")
        .containsEntry("RESPAWN_TASK", "TASK-31-1").doesNotContainKeys("RESPAWN_RESUME_CHECKPOINT",
            "RESPAWN_INTERRUPTION_CLASS");
  }

  /** api.md §2: on a resume the pod is also given RESPAWN_RESUME_CHECKPOINT and RESPAWN_INTERRUPTION_CLASS. */
  @Test
  void aResumedRunIsToldItsCheckpointAndWhatInterruptedItsPredecessor() {
    AgentInstance instance = instance(null, new PodTemplateSpecBuilder().withNewSpec().addNewContainer()
        .withName("agent").withImage("registry.example/agents/coder:1.4").endContainer().endSpec().build());

    Map<String, String> env = PodFactory.build(instance, new Decision.PodStart(4, "coder-4", 1, Optional.of("ckpt-17"),
        Optional.of(dev.respawn.api.v1alpha1.InterruptionClass.ContextReset), Optional.empty(), AT), "coder")
        .getSpec().getContainers().get(0).getEnv().stream().collect(Collectors.toMap(EnvVar::getName, EnvVar::getValue));

    assertThat(env).containsEntry("RESPAWN_RESUME_CHECKPOINT", "ckpt-17")
        .containsEntry("RESPAWN_INTERRUPTION_CLASS", "ContextReset").containsEntry("RESPAWN_TASK", "");
  }

  /** Init containers get the operator's env too: a checkout before the agent needs the task. */
  @Test
  void initContainersAreGivenTheRunsEnvironmentToo() {
    AgentInstance instance = instance("TASK-9", new PodTemplateSpecBuilder().withNewSpec().addNewInitContainer()
        .withName("checkout").withImage("git:1").endInitContainer().addNewContainer().withName("agent")
        .withImage("registry.example/agents/coder:1.4").endContainer().endSpec().build());

    var pod = PodFactory.build(instance, new Decision.PodStart(1, "coder-1", 0, Optional.empty(), Optional.empty(),
        Optional.empty(), AT), "coder");

    assertThat(pod.getSpec().getInitContainers().get(0).getEnv()).extracting(EnvVar::getName)
        .contains("RESPAWN_TASK", "RESPAWN_RUN");
  }

  /**
   * api.md §2: spec.agentContainer names the container whose exit decides, default the first container; the pod
   * records which one it was made with, so a later edit of the spec does not change how its run is judged.
   */
  @Test
  void thePodRecordsItsAgentContainerTheNamedOneElseTheFirst() {
    io.fabric8.kubernetes.api.model.PodTemplateSpec template = new PodTemplateSpecBuilder().withNewSpec()
        .addNewContainer().withName("proxy").withImage("p:1").endContainer()
        .addNewContainer().withName("agent").withImage("a:1").endContainer().endSpec().build();
    Decision.PodStart start = new Decision.PodStart(1, "coder-1", 0, Optional.empty(), Optional.empty(),
        Optional.empty(), AT);

    AgentInstance named = instance("t", template);
    named.getSpec().agentContainer = "agent";
    assertThat(PodFactory.build(named, start, "coder").getMetadata().getAnnotations())
        .containsEntry(AgentInstance.AGENT_CONTAINER_ANNOTATION, "agent");
    AgentInstance unnamed = instance("t", template);
    assertThat(PodFactory.build(unnamed, start, "coder").getMetadata().getAnnotations())
        .containsEntry(AgentInstance.AGENT_CONTAINER_ANNOTATION, "proxy");
    unnamed.getSpec().agentContainer = "";
    assertThat(PodFactory.build(unnamed, start, "coder").getMetadata().getAnnotations())
        .containsEntry(AgentInstance.AGENT_CONTAINER_ANNOTATION, "proxy");
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

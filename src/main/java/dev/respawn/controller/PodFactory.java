package dev.respawn.controller;

import dev.respawn.heartbeat.HeartbeatLeases;
import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.policy.Decision.PodStart;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Builds the pod of one run from the instance's template (api.md §2). */
public final class PodFactory {
  private PodFactory() {}

  public static Pod build(AgentInstance instance, PodStart start, String leaseName) {
    PodTemplateSpec template = instance.getSpec().template == null ? new PodTemplateSpec()
        : Serialization.clone(instance.getSpec().template);
    ObjectMeta meta = template.getMetadata() == null ? new ObjectMeta() : template.getMetadata();
    Map<String, String> labels = new LinkedHashMap<>(meta.getLabels() == null ? Map.of() : meta.getLabels());
    labels.put(AgentInstance.INSTANCE_LABEL, instance.getMetadata().getName());
    labels.put(AgentInstance.RUN_LABEL, Integer.toString(start.run()));
    ObjectMeta podMeta = new ObjectMeta();
    podMeta.setName(start.podName());
    podMeta.setNamespace(instance.getMetadata().getNamespace());
    podMeta.setLabels(labels);
    podMeta.setOwnerReferences(List.of(owner(instance)));
    // the template's finalizers too, as Kubernetes' own controllers copy them (a collector of logs or artifacts that
    // must see every pod before it goes); its name, namespace and owners are the operator's
    if (meta.getFinalizers() != null && !meta.getFinalizers().isEmpty()) {
      podMeta.setFinalizers(new ArrayList<>(meta.getFinalizers()));
    }
    PodSpec spec = template.getSpec() == null ? new PodSpec() : template.getSpec();
    Map<String, String> annotations = new LinkedHashMap<>(meta.getAnnotations() == null ? Map.of()
        : meta.getAnnotations());
    agentContainer(instance, spec).ifPresent(name -> annotations.put(AgentInstance.AGENT_CONTAINER_ANNOTATION, name));
    // when the run started, by the operator's clock: its deadlines are counted from it, never from the API
    // server's creationTimestamp (another clock), and a start whose status write waits keeps its exact time
    annotations.put(AgentInstance.STARTED_AT_ANNOTATION, start.at().toString());
    podMeta.setAnnotations(annotations);
    spec.setRestartPolicy("Never");
    List<EnvVar> env = env(instance, start, leaseName);
    List<Container> all = new ArrayList<>(spec.getContainers() == null ? List.of() : spec.getContainers());
    all.addAll(spec.getInitContainers() == null ? List.of() : spec.getInitContainers()); // a checkout needs the task
    for (Container c : all) {
      // the operator's first, so the template's own values may refer to them ($(RESPAWN_TASK)); the template's
      // values of the same names are dropped: the agent must see the operator's
      List<EnvVar> merged = new ArrayList<>(env);
      for (EnvVar e : c.getEnv() == null ? List.<EnvVar>of() : c.getEnv()) {
        if (env.stream().noneMatch(r -> r.getName().equals(e.getName()))) {
          merged.add(e);
        }
      }
      c.setEnv(merged);
    }
    Pod pod = new Pod();
    pod.setMetadata(podMeta);
    pod.setSpec(spec);
    return pod;
  }

  /** The container whose exit decides the run: spec.agentContainer, else the template's first container. */
  static java.util.Optional<String> agentContainer(AgentInstance instance, PodSpec spec) {
    String named = instance.getSpec().agentContainer;
    if (named != null && !named.isEmpty()) {
      return java.util.Optional.of(named);
    }
    return spec.getContainers() == null || spec.getContainers().isEmpty() ? java.util.Optional.empty()
        : java.util.Optional.ofNullable(spec.getContainers().get(0).getName());
  }

  /** The controller owner reference every pod and Lease of the instance carries. */
  public static OwnerReference owner(AgentInstance instance) {
    return new OwnerReferenceBuilder().withApiVersion(instance.getApiVersion()).withKind(instance.getKind())
        .withName(instance.getMetadata().getName()).withUid(instance.getMetadata().getUid()).withController(true)
        .withBlockOwnerDeletion(true).build();
  }

  /**
   * A free-text value the agent must get as written: the kubelet expands {@code $(NAME)} in an env value and turns
   * {@code $$} into {@code $}, so every {@code $} is doubled (a task or checkpoint id is never rewritten on the way).
   */
  static String literal(String value) {
    return value.replace("$", "$$");
  }

  private static List<EnvVar> env(AgentInstance instance, PodStart start, String leaseName) {
    List<EnvVar> env = new ArrayList<>();
    env.add(new EnvVar("RESPAWN_INSTANCE", instance.getMetadata().getName(), null));
    env.add(new EnvVar("RESPAWN_RUN", Integer.toString(start.run()), null));
    // the Lease's holder: HOSTNAME is not it when the kubelet cut a pod name over 63 characters, or spec.hostname
    env.add(new EnvVar("RESPAWN_POD_NAME", start.podName(), null));
    env.add(new EnvVar("RESPAWN_ATTEMPT", Integer.toString(start.attempt()), null));
    env.add(new EnvVar(HeartbeatLeases.LEASE_NAME_ENV, leaseName, null));
    String task = instance.getSpec().task;
    env.add(new EnvVar("RESPAWN_TASK", literal(task == null ? "" : task), null));
    start.resumeCheckpoint().ifPresent(c -> env.add(new EnvVar("RESPAWN_RESUME_CHECKPOINT", literal(c), null)));
    start.interruptionClass().ifPresent(c -> env.add(new EnvVar("RESPAWN_INTERRUPTION_CLASS", c.name(), null)));
    return env;
  }
}

package dev.respawn.controller;

import dev.respawn.api.v1alpha1.AgentInstance;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A pod whose create came back without the labels Respawn's pod watch selects by (a mutating webhook that replaced
 * the whole label map): no watch would show it, so its run would be judged on what a direct read happens to see, and
 * ended as never started. The pod was made by this very call (its UID is in the patch, a precondition), so its
 * labels are put back at once, and the webhook named in the log.
 */
final class LostLabels {
  private static final Logger LOG = LoggerFactory.getLogger(LostLabels.class);

  private LostLabels() {}

  /** The pod as created, or as labelled again when admission dropped Respawn's labels. */
  static Pod restore(KubernetesClient client, Pod sent, Pod created) {
    Map<String, String> have = created.getMetadata().getLabels() == null ? Map.of() : created.getMetadata().getLabels();
    Map<String, String> missing = new LinkedHashMap<>();
    for (String key : new String[] {AgentInstance.INSTANCE_LABEL, AgentInstance.RUN_LABEL}) {
      String value = sent.getMetadata().getLabels().get(key);
      if (value != null && !have.containsKey(key)) {
        missing.put(key, value);
      }
    }
    if (missing.isEmpty()) {
      return created;
    }
    String ns = created.getMetadata().getNamespace();
    String name = created.getMetadata().getName();
    String labels = missing.entrySet().stream().map(e -> "\"" + e.getKey() + "\":\"" + e.getValue() + "\"")
        .collect(Collectors.joining(",", "{", "}"));
    String patch = "{\"metadata\":{\"uid\":\"" + created.getMetadata().getUid() + "\",\"labels\":" + labels + "}}";
    try {
      Pod labelled = client.pods().inNamespace(ns).resource(created).patch(PatchContext.of(PatchType.JSON_MERGE), patch);
      boolean kept = labelled.getMetadata().getLabels() != null
          && labelled.getMetadata().getLabels().containsKey(AgentInstance.INSTANCE_LABEL);
      LOG.warn("Pod {}/{} was stored without the labels {} (a mutating webhook replaced its labels): {}", ns, name,
          missing.keySet(), kept ? "labelled again" : "labelling it again did not hold; the operator sees the pod only"
              + " by reading it. Fix the webhook to add to metadata.labels rather than replace it");
      return kept ? labelled : created;
    } catch (KubernetesClientException e) {
      LOG.warn("Pod {}/{} was stored without the labels {} (a mutating webhook replaced its labels) and could not be"
          + " labelled again: {}", ns, name, missing.keySet(), e.getMessage());
      return created;
    }
  }
}

package dev.respawn.controller;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** Which AgentInstances an event of a pod or a Lease is told to (the informers' secondary-to-primary mapping). */
final class InstancesTold {
  private InstancesTold() {}

  /**
   * The instances a pod or Lease event is told to: the one its label names, and the AgentInstance its controller
   * ownerReference names. Ownership is that reference (api.md §2): a pod whose label someone changed to another
   * value is still its owner's, and its owner must hear how its run goes (the label's instance only looks, and
   * leaves a pod it does not own alone).
   */
  static Set<ResourceID> of(HasMetadata m) {
    String ns = m.getMetadata().getNamespace();
    Set<ResourceID> told = new HashSet<>();
    told.add(new ResourceID(m.getMetadata().getLabels().get(AgentInstance.INSTANCE_LABEL), ns));
    var refs = m.getMetadata().getOwnerReferences();
    for (var ref : refs == null ? List.<OwnerReference>of() : refs) {
      if (Boolean.TRUE.equals(ref.getController()) && "AgentInstance".equals(ref.getKind()) && ref.getName() != null
          && ref.getApiVersion() != null && ref.getApiVersion().startsWith(AgentRestartPolicy.GROUP + "/")) {
        told.add(new ResourceID(ref.getName(), ns));
      }
    }
    return told;
  }
}

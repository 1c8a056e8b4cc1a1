package dev.respawn.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentInstanceSpec;
import dev.respawn.controller.PodFactory;
import dev.respawn.deploy.DeployManifests.Access;
import dev.respawn.deploy.DeployManifests.Grant;
import dev.respawn.heartbeat.HeartbeatLeases;
import dev.respawn.policy.Decision.PodStart;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * kube-apiserver's OwnerReferencesPermissionEnforcement admission plugin (on in OpenShift; the RBAC comments of
 * deploy/clusterrole.yaml and the Helm chart name it; plugin/pkg/admission/gc/gc_admission.go) checks, when an
 * object's ownerReferences are set:
 * <ol>
 *   <li>{@code delete} on the object's own resource, but only when an existing object's ownerReferences change:
 *   since Kubernetes 1.11 (kubernetes#63403) a create may set them without it, as its creator could have never
 *   made it;</li>
 *   <li>for blockOwnerDeletion=true, on a create too: {@code update} on the owner's {@code finalizers}
 *   subresource.</li>
 * </ol>
 * The operator only creates the objects it owns (pods, heartbeat Leases) and never changes their owners, so (2) is
 * what deploy/ must grant, and Leases need no delete (the operator deletes none).
 */
class OwnerRefAdmissionRbacTest {
  static final String NS = "agents";

  static AgentInstance instance() {
    AgentInstance i = new AgentInstance();
    ObjectMeta m = new ObjectMeta();
    m.setName("coder");
    m.setNamespace(NS);
    m.setUid("0c0ffee0-0000-4000-8000-000000000001");
    i.setMetadata(m);
    AgentInstanceSpec spec = new AgentInstanceSpec();
    spec.template = new PodTemplateSpecBuilder().withNewSpec().addNewContainer().withName("agent")
        .withImage("busybox").endContainer().endSpec().build();
    i.setSpec(spec);
    return i;
  }

  /** What gc_admission.go asks the authorizer for the create of {@code object}: nothing of its own resource. */
  static List<Access> admissionChecks(HasMetadata object) {
    List<Access> checks = new ArrayList<>();
    List<OwnerReference> refs = object.getMetadata().getOwnerReferences();
    if (refs == null || refs.isEmpty()) {
      return checks;
    }
    for (OwnerReference r : refs) {
      if (Boolean.TRUE.equals(r.getBlockOwnerDeletion())) {
        checks.add(new Access("update", "respawn.dev", "agentinstances/finalizers", NS, r.getName()));
      }
    }
    return checks;
  }

  @Test
  void everyOwnedObjectTheOperatorCreatesPassesOwnerReferencesPermissionEnforcement() {
    List<Grant> grants = DeployManifests.operatorGrants(DeployManifests.objects(DeployManifests.DEPLOY));
    AgentInstance instance = instance();
    var pod = PodFactory.build(instance, new PodStart(1, "coder-1", 0, Optional.empty(), Optional.empty(),
        Optional.empty(), Instant.parse("2026-11-27T10:00:00Z")), "coder");
    var lease = HeartbeatLeases.newLease(instance, PodFactory.owner(instance));
    Map<String, List<Access>> checks = Map.of(
        "Pod " + pod.getMetadata().getName(), admissionChecks(pod),
        "Lease " + lease.getMetadata().getName(), admissionChecks(lease));
    // both carry blockOwnerDeletion=true: each create is checked
    assertThat(checks.values()).allSatisfy(list -> assertThat(list).isNotEmpty());
    List<String> denied = new ArrayList<>();
    checks.forEach((what, list) -> list.stream().filter(a -> grants.stream().noneMatch(g -> g.allows(a)))
        .forEach(a -> denied.add(what + ": " + a)));
    assertThat(denied).as("admission checks of OwnerReferencesPermissionEnforcement that deploy/ RBAC denies "
        + "(\"cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on\")")
        .isEmpty();
  }
}

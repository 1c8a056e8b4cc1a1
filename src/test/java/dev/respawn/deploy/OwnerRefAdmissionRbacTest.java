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
 * deploy/clusterrole.yaml and the Helm chart name it) checks TWO things on a create that sets ownerReferences
 * (plugin/pkg/admission/gc/gc_admission.go, Admit):
 * <ol>
 *   <li>"cannot set an ownerRef on a resource you can't delete": the creator needs {@code delete} on the created
 *   object's own resource;</li>
 *   <li>for blockOwnerDeletion=true: {@code update} on the owner's {@code finalizers} subresource.</li>
 * </ol>
 * deploy/ grants (2), and (1) for pods, but not (1) for Leases: the heartbeat Lease the operator creates
 * (HeartbeatLeases.newLease with PodFactory.owner) is refused with 403 there, and with it every heartbeat.
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

  /** What gc_admission.go asks the authorizer for the create of {@code object} (resource = its plural). */
  static List<Access> admissionChecks(HasMetadata object, String group, String resource) {
    List<Access> checks = new ArrayList<>();
    List<OwnerReference> refs = object.getMetadata().getOwnerReferences();
    if (refs == null || refs.isEmpty()) {
      return checks;
    }
    checks.add(new Access("delete", group, resource, NS, object.getMetadata().getName()));
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
        "Pod " + pod.getMetadata().getName(), admissionChecks(pod, "", "pods"),
        "Lease " + lease.getMetadata().getName(), admissionChecks(lease, "coordination.k8s.io", "leases"));
    List<String> denied = new ArrayList<>();
    checks.forEach((what, list) -> list.stream().filter(a -> grants.stream().noneMatch(g -> g.allows(a)))
        .forEach(a -> denied.add(what + ": " + a)));
    assertThat(denied).as("admission checks of OwnerReferencesPermissionEnforcement that deploy/ RBAC denies "
        + "(\"cannot set an ownerRef on a resource you can't delete\")").isEmpty();
  }
}

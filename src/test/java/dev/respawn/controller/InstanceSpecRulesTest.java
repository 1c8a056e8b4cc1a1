package dev.respawn.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentInstanceSpec;
import dev.respawn.api.v1alpha1.InstanceHeartbeatSpec;
import dev.respawn.api.v1alpha1.PolicyReference;
import dev.respawn.policy.Violation;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * api.md §9: a spec the CRD schema should have refused is refused again by the operator. Each bound of the
 * AgentInstance schema (crds/agentinstances.respawn.dev.yaml), at its edge and one past it.
 */
class InstanceSpecRulesTest {
  static AgentInstance instance(Consumer<AgentInstanceSpec> edit) {
    AgentInstance instance = new AgentInstance();
    instance.setMetadata(new ObjectMetaBuilder().withName("coder").withNamespace("agents").build());
    AgentInstanceSpec spec = new AgentInstanceSpec();
    spec.template = new PodTemplateSpecBuilder().withNewSpec().addNewContainer().withName("agent").withImage("a")
        .endContainer().endSpec().build();
    edit.accept(spec);
    instance.setSpec(spec);
    return instance;
  }

  static List<String> fields(Consumer<AgentInstanceSpec> edit) {
    return InstanceSpecRules.check(instance(edit)).stream().map(Violation::field).toList();
  }

  @Test
  void aValidSpecBreaksNoRule() {
    assertThat(InstanceSpecRules.check(instance(s -> {
      s.policyRef = new PolicyReference("p".repeat(253));
      s.agentContainer = "agent";
      s.task = "t".repeat(256);
      s.heartbeat = new InstanceHeartbeatSpec();
      s.heartbeat.leaseName = "coder.lease-1";
    }))).isEmpty();
    assertThat(InstanceSpecRules.check(instance(s -> s.task = ""))).as("task has no minimum").isEmpty();
  }

  @Test
  void aPolicyRefMustNameAPolicyOfAtMost253Characters() {
    assertThat(fields(s -> s.policyRef = new PolicyReference())).containsExactly("spec.policyRef.name");
    assertThat(fields(s -> s.policyRef = new PolicyReference(""))).containsExactly("spec.policyRef.name");
    assertThat(fields(s -> s.policyRef = new PolicyReference("p".repeat(254)))).containsExactly("spec.policyRef.name");
    assertThat(InstanceSpecRules.check(instance(s -> s.policyRef = new PolicyReference(""))).get(0).toString())
        .isEqualTo("spec.policyRef.name: must not be empty");
  }

  /** A name that no AgentRestartPolicy can have never reaches a request path ("../pods/x", "ns/p"): refused. */
  @Test
  void aPolicyRefNamesAnObjectADns1123SubdomainCanName() {
    for (String bad : List.of("other-ns/p7", "../../pods/control-1", "Standard", "p_7", "-p", "p.")) {
      assertThat(InstanceSpecRules.check(instance(s -> s.policyRef = new PolicyReference(bad))))
          .as(bad).extracting(Violation::toString).singleElement().asString()
          .startsWith("spec.policyRef.name: must be a DNS-1123 subdomain").contains(bad);
    }
    assertThat(InstanceSpecRules.check(instance(s -> s.policyRef = new PolicyReference("team-a.standard-2"))))
        .isEmpty();
  }

  @Test
  void theTaskIsAtMost256Characters() {
    List<Violation> found = InstanceSpecRules.check(instance(s -> s.task = "é".repeat(257)));
    assertThat(found).extracting(Violation::toString)
        .containsExactly("spec.task: must be at most 256 characters (got 257)");
  }

  @Test
  void theAgentContainerIsOneTo63CharactersAndAContainerOfTheTemplate() {
    assertThat(fields(s -> s.agentContainer = "")).containsExactly("spec.agentContainer");
    assertThat(fields(s -> s.agentContainer = "a".repeat(64))).as("one violation, not also 'no such container'")
        .containsExactly("spec.agentContainer");
    assertThat(fields(s -> s.agentContainer = "sidecar")).containsExactly("spec.agentContainer");
  }

  @Test
  void theLeaseNameIsADns1123SubdomainOfAtMost253Characters() {
    for (String bad : List.of("Bad_Lease", "-lease", "lease.", "UPPER", "a..b", "a.-b")) {
      List<Violation> found = InstanceSpecRules.check(instance(s -> {
        s.heartbeat = new InstanceHeartbeatSpec();
        s.heartbeat.leaseName = bad;
      }));
      assertThat(found).as(bad).singleElement().satisfies(v -> {
        assertThat(v.field()).isEqualTo("spec.heartbeat.leaseName");
        assertThat(v.toString()).contains("DNS-1123 subdomain").contains(bad);
      });
    }
    assertThat(fields(s -> {
      s.heartbeat = new InstanceHeartbeatSpec();
      s.heartbeat.leaseName = "";
    })).containsExactly("spec.heartbeat.leaseName");
    assertThat(fields(s -> {
      s.heartbeat = new InstanceHeartbeatSpec();
      s.heartbeat.leaseName = "l".repeat(254);
    })).containsExactly("spec.heartbeat.leaseName");
  }
}

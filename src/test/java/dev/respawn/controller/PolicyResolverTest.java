package dev.respawn.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentInstanceSpec;
import dev.respawn.api.v1alpha1.BackoffType;
import dev.respawn.policy.Tier;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class PolicyResolverTest {
  private static AgentInstance withoutPolicyRef() {
    AgentInstance i = new AgentInstance();
    i.setMetadata(new ObjectMetaBuilder().withNamespace("agents").withName("coder").build());
    i.setSpec(new AgentInstanceSpec());
    return i;
  }

  @Test
  void theBuiltInDefaultsObeyTheTierLikeAnyPolicy() {
    PolicyResolver core = new PolicyResolver(OperatorSettings.defaults().withTier(Tier.Core), id -> Optional.empty());
    assertThat(core.resolve(withoutPolicyRef()).policy()).hasValueSatisfying(p ->
        assertThat(p.backoff().type()).isEqualTo(BackoffType.None));

    PolicyResolver enterprise = new PolicyResolver(OperatorSettings.defaults().withTier(Tier.Enterprise),
        id -> Optional.empty());
    assertThat(enterprise.resolve(withoutPolicyRef()).policy()).hasValueSatisfying(p ->
        assertThat(p.backoff().type()).isEqualTo(BackoffType.Exponential));
  }

  @Test
  void aMissingDefaultPolicySaysItIsTheFlagsForItWasNeverNamedByTheInstance() {
    PolicyResolver resolver = new PolicyResolver(OperatorSettings.defaults().withDefaultPolicy("dflt"),
        id -> Optional.empty());
    assertThat(resolver.resolve(withoutPolicyRef()).message()).isEqualTo("AgentRestartPolicy agents/dflt (the "
        + "operator's --default-policy: spec.policyRef is not set) does not exist; nothing is restarted until it does");
    AgentInstance named = withoutPolicyRef();
    named.getSpec().policyRef = new dev.respawn.api.v1alpha1.PolicyReference();
    named.getSpec().policyRef.name = "standard";
    assertThat(resolver.resolve(named).message())
        .isEqualTo("AgentRestartPolicy agents/standard does not exist; nothing is restarted until it does");
  }
}

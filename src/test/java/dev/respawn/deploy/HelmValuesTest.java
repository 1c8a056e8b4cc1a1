package dev.respawn.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.controller.RespawnOperator;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What the chart's values do, as {@code helm template} renders them: the operator's flags (tier, namespaces,
 * default policy, leader election, metrics port), the image, and the RBAC that follows the watched
 * namespaces and leader election.
 */
class HelmValuesTest {
  static Deployment deployment(List<HasMetadata> objects) {
    return HelmChart.ofKind(objects, "Deployment", Deployment.class).get(0);
  }

  static Container operator(List<HasMetadata> objects) {
    return deployment(objects).getSpec().getTemplate().getSpec().getContainers().get(0);
  }

  @Test
  void tierAndDefaultPolicyBecomeFlags() {
    List<String> args = operator(HelmChart.render("{tier: Core, defaultPolicy: policies/standard}")).getArgs();
    assertThat(args).containsSubsequence("--tier", "Core").containsSubsequence("--default-policy", "policies/standard")
        .doesNotContain("Enterprise", "--namespaces");
  }

  @Test
  void watchedNamespacesAreBoundEachByARoleBindingInsteadOfClusterWide() {
    List<HasMetadata> objects = HelmChart.render("watchNamespaces: [team-a, team-b]");
    assertThat(operator(objects).getArgs()).containsSubsequence("--namespaces", "team-a,team-b");
    assertThat(HelmChart.ofKind(objects, "ClusterRoleBinding", ClusterRoleBinding.class)).isEmpty();
    List<RoleBinding> toTheClusterRole = HelmChart.ofKind(objects, "RoleBinding", RoleBinding.class).stream()
        .filter(b -> b.getRoleRef().getKind().equals("ClusterRole")).toList();
    assertThat(toTheClusterRole).extracting(b -> b.getMetadata().getNamespace())
        .containsExactlyInAnyOrder("team-a", "team-b");
    assertThat(toTheClusterRole).allSatisfy(b -> {
      assertThat(b.getRoleRef().getName()).isEqualTo("respawn-operator");
      assertThat(b.getSubjects()).singleElement().satisfies(s -> {
        assertThat(s.getName()).isEqualTo(DeployManifests.SERVICE_ACCOUNT);
        assertThat(s.getNamespace()).isEqualTo(HelmChart.NAMESPACE);
      });
    });
    // the operator's, and the two for the people who run agents (aggregated, bound to no one by the chart)
    assertThat(HelmChart.ofKind(objects, "ClusterRole", ClusterRole.class)).extracting(r -> r.getMetadata().getName())
        .containsExactlyInAnyOrder("respawn-operator", "respawn-operator-agents-edit", "respawn-operator-agents-view");
  }

  @Test
  void withoutLeaderElectionThereIsNoLeaseRoleAndNoFlag() {
    List<HasMetadata> objects = HelmChart.render("leaderElection: {enabled: false}");
    assertThat(operator(objects).getArgs()).doesNotContain("--leader-election", "--leader-election-namespace",
        "--leader-election-lease");
    assertThat(HelmChart.ofKind(objects, "Role", Role.class)).isEmpty();
    assertThat(HelmChart.ofKind(objects, "RoleBinding", RoleBinding.class)).isEmpty();
    assertThat(HelmChart.ofKind(objects, "ClusterRole", ClusterRole.class).get(0).getRules())
        .noneSatisfy(r -> assertThat(r.getResources()).contains("selfsubjectrulesreviews"));
    assertThat(deployment(objects).getSpec().getReplicas()).isEqualTo(1);
    assertThat(deployment(objects).getSpec().getStrategy().getType())
        .as("an upgrade never runs two operators that both act").isEqualTo("Recreate");
    assertThat(deployment(objects).getSpec().getStrategy().getRollingUpdate()).isNull();
    assertThat(deployment(HelmChart.render("{}")).getSpec().getStrategy().getType())
        .as("with leader election the new pod waits for the Lease").isEqualTo("RollingUpdate");
  }

  @Test
  void theLeaseNamespaceMovesTheRoleButNotTheServiceAccount() {
    List<HasMetadata> objects = HelmChart.render("{replicaCount: 2, leaderElection: {namespace: ops}}");
    assertThat(operator(objects).getArgs()).containsSubsequence("--leader-election", "--leader-election-namespace",
        "ops").doesNotContain("--leader-election-lease");
    assertThat(HelmChart.ofKind(objects, "Role", Role.class)).singleElement().satisfies(r -> {
      assertThat(r.getMetadata().getNamespace()).isEqualTo("ops");
      assertThat(r.getRules()).anySatisfy(rule -> assertThat(rule.getResourceNames())
          .containsExactly(RespawnOperator.LEADER_LEASE));
    });
    RoleBinding binding = HelmChart.ofKind(objects, "RoleBinding", RoleBinding.class).get(0);
    assertThat(binding.getMetadata().getNamespace()).isEqualTo("ops");
    assertThat(binding.getSubjects().get(0).getNamespace()).isEqualTo(HelmChart.NAMESPACE);
    assertThat(deployment(objects).getSpec().getReplicas()).isEqualTo(2);
  }

  @Test
  void aNamedLeaseIsTheFlagAndTheOnlyLeaseTheRoleMayRenew() {
    List<HasMetadata> objects = HelmChart.render("leaderElection: {leaseName: respawn-team-a}");
    assertThat(operator(objects).getArgs()).containsSubsequence("--leader-election-lease", "respawn-team-a")
        .doesNotContain(RespawnOperator.LEADER_LEASE);
    assertThat(HelmChart.ofKind(objects, "Role", Role.class).get(0).getRules())
        .anySatisfy(rule -> assertThat(rule.getResourceNames()).containsExactly("respawn-team-a"));
  }

  @Test
  void theMetricsPortIsTheFlagTheContainerPortAndTheServicePort() {
    List<HasMetadata> objects = HelmChart.render("metrics: {port: 9090}");
    Container c = operator(objects);
    assertThat(c.getArgs()).containsSubsequence("--metrics-port", "9090").doesNotContain("8080");
    assertThat(c.getPorts()).singleElement().satisfies(p -> {
      assertThat(p.getName()).isEqualTo("metrics");
      assertThat(p.getContainerPort()).isEqualTo(9090);
    });
    assertThat(c.getReadinessProbe().getHttpGet().getPort().getStrVal()).isEqualTo("metrics");
    assertThat(HelmChart.ofKind(objects, "Service", Service.class).get(0).getSpec().getPorts()).singleElement()
        .satisfies(p -> assertThat(p.getPort()).isEqualTo(9090));
    assertThat(HelmChart.template("metrics: {port: 9090, service: {enabled: false}}"))
        .doesNotContain("kind: Service\n");
  }

  @Test
  void theImageIsRepositoryAndTagOrPinnedByDigest() {
    Container tagged = operator(HelmChart.render("image: {repository: registry.example/respawn, tag: 0.2.0, "
        + "pullPolicy: Always}"));
    assertThat(tagged.getImage()).isEqualTo("registry.example/respawn:0.2.0");
    assertThat(tagged.getImagePullPolicy()).isEqualTo("Always");
    String digest = "sha256:" + "ab".repeat(32);
    assertThat(operator(HelmChart.render("image: {tag: 0.2.0, digest: '" + digest + "'}")).getImage())
        .isEqualTo("ghcr.io/respawn-dev/respawn@" + digest);
  }

  @Test
  void logsResourcesAndExtraEnvironment() {
    Container c = operator(HelmChart.render("""
        logFormat: text
        logLevel: DEBUG
        resources: {requests: {cpu: 50m, memory: 128Mi}, limits: {cpu: null, memory: 1Gi}}
        extraEnv: [{name: HTTPS_PROXY, value: 'http://proxy:3128'}]
        """));
    assertThat(c.getEnv()).extracting(e -> e.getName() + "=" + e.getValue()).contains("RESPAWN_LOG_FORMAT=text",
        "RESPAWN_LOG_LEVEL=DEBUG", "HTTPS_PROXY=http://proxy:3128");
    assertThat(c.getResources().getRequests()).extractingByKey("cpu").hasToString("50m");
    // helm merges maps with the defaults: null removes the default CPU limit
    assertThat(c.getResources().getLimits()).containsOnlyKeys("memory");
  }

  @Test
  void anExistingServiceAccountMustBeNamedAndIsThenBound() {
    assertThat(HelmChart.templateError("serviceAccount: {create: false}"))
        .contains("serviceAccount.name is required when serviceAccount.create is false");
    List<HasMetadata> objects = HelmChart.render("serviceAccount: {create: false, name: existing}");
    assertThat(HelmChart.ofKind(objects, "ServiceAccount", ServiceAccount.class)).isEmpty();
    assertThat(deployment(objects).getSpec().getTemplate().getSpec().getServiceAccountName()).isEqualTo("existing");
    assertThat(HelmChart.ofKind(objects, "ClusterRoleBinding", ClusterRoleBinding.class).get(0).getSubjects())
        .singleElement().satisfies(s -> assertThat(s.getName()).isEqualTo("existing"));
  }

  @Test
  void withoutRbacTheChartCreatesNoRoleOrBinding() {
    assertThat(HelmChart.render("rbac: {create: false}")).extracting(HasMetadata::getKind)
        .containsExactlyInAnyOrder("ServiceAccount", "Service", "Deployment");
  }

  @Test
  void aServiceMonitorNeedsTheMetricsService() {
    assertThat(HelmChart.templateError("metrics: {service: {enabled: false}, serviceMonitor: {enabled: true}}"))
        .contains("metrics.serviceMonitor.enabled needs metrics.service.enabled");
  }

  /** The operator would refuse to start (it could never see that policy): helm says so before anything is made. */
  @Test
  void aDefaultPolicyOutsideTheWatchedNamespacesIsRefused() {
    assertThat(HelmChart.templateError("watchNamespaces: [team-a]\ndefaultPolicy: policies/std"))
        .contains("defaultPolicy policies/std is in namespace policies, which watchNamespaces does not include");
    String manifest = HelmChart.template("watchNamespaces: [team-a, policies]\ndefaultPolicy: policies/std");
    assertThat(manifest).contains("- --default-policy", "\"policies/std\"", "\"team-a,policies\"");
  }

  @Test
  void anotherReleaseNameNamesEverythingAfterIt() {
    String manifest = new com.marcnuri.helm.Helm(HelmChart.CHART).template().withName("agents")
        .withNamespace("platform").withKubeVersion(HelmChart.KUBE_VERSION).call();
    List<HasMetadata> objects = HelmChart.objects(manifest);
    assertThat(objects).extracting(o -> o.getKind() + " " + o.getMetadata().getName()).contains(
        "Deployment agents-respawn", "Service agents-respawn-metrics", "Role agents-respawn-leader-election");
    // the operator's Lease whatever the release's name: an upgrade keeps it
    assertThat(operator(objects).getArgs()).doesNotContain("--leader-election-lease");
    assertThat(HelmChart.ofKind(objects, "Role", Role.class).get(0).getRules())
        .anySatisfy(rule -> assertThat(rule.getResourceNames()).containsExactly(RespawnOperator.LEADER_LEASE));
    assertThat(HelmChart.ofKind(objects, "ClusterRoleBinding", ClusterRoleBinding.class).get(0).getSubjects())
        .singleElement().satisfies(s -> assertThat(s.getNamespace()).isEqualTo("platform"));
  }
}

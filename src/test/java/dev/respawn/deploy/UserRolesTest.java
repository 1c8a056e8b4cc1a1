package dev.respawn.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.deploy.DeployManifests.Access;
import dev.respawn.deploy.DeployManifests.Grant;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

/**
 * The roles for the people who run agents (deploy/user-roles.yaml, the chart's user-roles.yaml): aggregated into
 * Kubernetes' edit/admin and view roles, edit writing the custom resources (and so asking for restarts and
 * resumes, which annotate the instance) but not their status, view only reading them.
 */
class UserRolesTest {
  static final String AGGREGATE = "rbac.authorization.k8s.io/aggregate-to-";
  static final List<String> RESOURCES = List.of("agentinstances", "agentrestartpolicies");

  static Stream<Arguments> manifests() {
    return Stream.of(Arguments.of("kustomize base", DeployManifests.objects(DeployManifests.DEPLOY)),
        Arguments.of("chart", HelmChart.render("")));
  }

  static ClusterRole role(List<HasMetadata> objects, String suffix) {
    return DeployManifests.ofType(objects, ClusterRole.class).stream()
        .filter(r -> r.getMetadata().getName().endsWith(suffix)).findFirst().orElseThrow();
  }

  static List<Grant> grants(ClusterRole role) {
    return role.getRules().stream().map(r -> Grant.of(role.getMetadata().getName(), Optional.empty(), r)).toList();
  }

  static boolean allows(ClusterRole role, String verb, String resource) {
    return grants(role).stream().anyMatch(g -> g.allows(new Access(verb, "respawn.dev", resource, "agents", "coder")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("manifests")
  void editWritesTheCustomResourcesButNotTheirStatus(String where, List<HasMetadata> objects) {
    ClusterRole edit = role(objects, "-agents-edit");
    assertThat(edit.getMetadata().getLabels()).containsAllEntriesOf(Map.of(AGGREGATE + "edit", "true",
        AGGREGATE + "admin", "true")).doesNotContainKey(AGGREGATE + "view");
    for (String resource : RESOURCES) {
      for (String verb : List.of("get", "list", "watch", "create", "update", "patch", "delete")) {
        assertThat(allows(edit, verb, resource)).as("%s %s", verb, resource).isTrue();
      }
      for (String verb : List.of("update", "patch")) {
        assertThat(allows(edit, verb, resource + "/status")).as("%s %s/status", verb, resource).isFalse();
      }
    }
    assertThat(grants(edit)).allSatisfy(g -> {
      assertThat(g.apiGroups()).containsExactly("respawn.dev");
      assertThat(g.resources()).containsExactlyInAnyOrderElementsOf(RESOURCES);
    });
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("manifests")
  void viewOnlyReadsThem(String where, List<HasMetadata> objects) {
    ClusterRole view = role(objects, "-agents-view");
    assertThat(view.getMetadata().getLabels()).containsEntry(AGGREGATE + "view", "true")
        .doesNotContainKeys(AGGREGATE + "edit", AGGREGATE + "admin");
    assertThat(grants(view)).isNotEmpty().allSatisfy(g -> {
      assertThat(g.verbs()).containsExactlyInAnyOrder("get", "list", "watch");
      assertThat(g.resources()).containsExactlyInAnyOrderElementsOf(RESOURCES);
    });
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("manifests")
  void neitherIsBoundToTheOperator(String where, List<HasMetadata> objects) {
    assertThat(DeployManifests.operatorGrants(objects)).extracting(Grant::source)
        .noneMatch(source -> source.contains("-agents-"));
  }

  @Test
  void theChartLeavesThemOutWhenAsked() {
    assertThat(DeployManifests.ofType(HelmChart.render("rbac:\n  userRoles: false\n"), ClusterRole.class))
        .extracting(r -> r.getMetadata().getName()).noneMatch(name -> name.contains("-agents-"));
  }
}

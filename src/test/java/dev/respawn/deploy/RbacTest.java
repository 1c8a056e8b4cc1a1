package dev.respawn.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.controller.RespawnOperator;
import dev.respawn.deploy.DeployManifests.Access;
import dev.respawn.deploy.DeployManifests.Grant;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The RBAC of {@code deploy/} is exactly what the operator uses: a representative scenario
 * ({@link OperatorScenario}: restarts, a pod deleted by someone else, Events and their series on both
 * Event APIs, leader election) runs against the mock API server, every request of the operator's own
 * client is mapped to what the RBAC authorizer checks (GET of a named object = get, of a collection = list,
 * with watch=true = watch; POST = create, PUT = update, PATCH = patch, DELETE = delete; the subresource
 * is part of the resource: agentinstances/status) and must be allowed; every permission granted must have
 * been used by some request, except the few listed in {@link #NOT_EXERCISED} with the reason the mock
 * cannot show their use.
 */
class RbacTest {
  /** Granted on purpose although no request of the scenario uses them; each with the reason. */
  static final Map<Access, String> NOT_EXERCISED = Map.of(
      new Access("update", "respawn.dev", "agentinstances/finalizers", null, null),
      "pods and Leases carry an ownerReference with blockOwnerDeletion=true to their AgentInstance; the "
          + "OwnerReferencesPermissionEnforcement admission plugin (on by default in OpenShift) demands update on "
          + "the owner's finalizers for that; the mock has no admission",
      new Access("update", "coordination.k8s.io", "leases", DeployManifests.OPERATOR_NAMESPACE,
          RespawnOperator.LEADER_LEASE),
      "JOSDK refuses to start leader election unless a SelfSubjectRulesReview shows get, create and update on "
          + "its Lease; fabric8's LeaderElector itself renews with a JSON merge patch (PATCH)");

  static final Set<String> FORBIDDEN_RESOURCES = Set.of("secrets", "serviceaccounts/token", "pods/exec",
      "pods/attach", "pods/portforward", "nodes/proxy", "services/proxy", "customresourcedefinitions",
      "clusterroles", "clusterrolebindings", "roles", "rolebindings", "users", "groups", "serviceaccounts",
      "tokenreviews", "certificatesigningrequests", "mutatingwebhookconfigurations",
      "validatingwebhookconfigurations");
  static final Set<String> FORBIDDEN_VERBS = Set.of("*", "escalate", "bind", "impersonate", "deletecollection",
      "approve", "sign");

  static List<HasMetadata> objects;
  static List<Grant> grants;
  static OperatorScenario scenario;
  static List<Access> used;

  @BeforeAll
  static void runTheOperator() {
    objects = DeployManifests.objects(DeployManifests.DEPLOY);
    grants = DeployManifests.operatorGrants(objects);
    scenario = new OperatorScenario(grants).run();
    used = scenario.calls.stream().map(OperatorScenario.Call::access).distinct().toList();
  }

  @AfterAll
  static void stop() {
    if (scenario != null) {
      scenario.close();
    }
  }

  @Test
  void everyRequestOfTheOperatorIsAllowed() {
    List<String> denied = scenario.calls.stream().filter(c -> grants.stream().noneMatch(g -> g.allows(c.access())))
        .map(c -> c.access() + "  <-  " + c).distinct().toList();
    assertThat(denied).as("requests the operator made that deploy/ RBAC does not allow (grants: %s)", grants)
        .isEmpty();
  }

  @Test
  void everyGrantIsUsedOrDocumented() {
    List<String> unused = new ArrayList<>();
    for (Grant g : grants) {
      for (Access granted : g.expand()) {
        boolean documented = NOT_EXERCISED.containsKey(granted);
        boolean exercised = used.stream().anyMatch(a -> a.covers(granted));
        if (!documented && !exercised) {
          unused.add(granted + " (" + g.source() + ")");
        }
        assertThat(documented && exercised)
            .as("%s is listed as not exercised, but the scenario used it: take it off NOT_EXERCISED", granted)
            .isFalse();
      }
    }
    assertThat(unused).as("granted but never used by the operator (requests made: %s)", scenario.summary())
        .isEmpty();
  }

  @Test
  void everyDocumentedExceptionIsGranted() {
    List<Access> granted = grants.stream().flatMap(g -> g.expand().stream()).toList();
    assertThat(NOT_EXERCISED.keySet()).allSatisfy(a -> assertThat(granted).contains(a));
  }

  @Test
  void leaderElectionPassedJosdksPermissionCheck() {
    assertThat(scenario.reviews).as("JOSDK asks with a SelfSubjectRulesReview before electing").isNotEmpty()
        .allSatisfy(r -> assertThat(r.getSpec().getNamespace()).isEqualTo(DeployManifests.OPERATOR_NAMESPACE));
    assertThat(used).contains(new Access("create", "coordination.k8s.io", "leases",
        DeployManifests.OPERATOR_NAMESPACE, null));
  }

  @Test
  void noWildcardsSecretsOrRbacPowers() {
    List<PolicyRule> rules = Stream.concat(
        // the operator's: not the roles for the people who run agents (UserRolesTest)
        DeployManifests.ofType(objects, ClusterRole.class).stream().filter(r -> !r.getMetadata().getName()
            .contains("-agents-")).flatMap(r -> r.getRules().stream()),
        DeployManifests.ofType(objects, Role.class).stream().flatMap(r -> r.getRules().stream())).toList();
    assertThat(rules).isNotEmpty().allSatisfy(r -> {
      List<String> all = Stream.of(r.getApiGroups(), r.getResources(), r.getVerbs(), r.getResourceNames())
          .filter(l -> l != null).flatMap(List::stream).toList();
      assertThat(all).as("wildcards in %s", r).noneMatch(s -> s.contains("*"));
      assertThat(r.getNonResourceURLs()).as("non-resource URLs in %s", r).isNullOrEmpty();
      assertThat(r.getResources()).as("resources of %s", r).doesNotContainAnyElementsOf(FORBIDDEN_RESOURCES);
      assertThat(r.getVerbs()).as("verbs of %s", r).doesNotContainAnyElementsOf(FORBIDDEN_VERBS);
      assertThat(r.getApiGroups()).as("API groups of %s", r).doesNotContain("rbac.authorization.k8s.io",
          "apiextensions.k8s.io", "admissionregistration.k8s.io", "certificates.k8s.io");
    });
    assertThat(DeployManifests.ofType(objects, ClusterRole.class)).allSatisfy(
        cr -> assertThat(cr.getAggregationRule()).isNull());
  }

  @Test
  void theDeploymentRunsAsTheBoundServiceAccount() {
    Deployment d = DeployManifests.ofType(objects, Deployment.class).get(0);
    assertThat(d.getMetadata().getNamespace()).isEqualTo(DeployManifests.OPERATOR_NAMESPACE);
    assertThat(d.getSpec().getTemplate().getSpec().getServiceAccountName()).isEqualTo(
        DeployManifests.SERVICE_ACCOUNT);
    assertThat(grants).as("the ServiceAccount is bound to the ClusterRole and the leader-election Role")
        .extracting(Grant::source).map(s -> s.split(" ")[0]).contains("ClusterRole", "Role");
    // the Deployment asks for leader election in its own namespace, where the Role grants the Lease
    assertThat(d.getSpec().getTemplate().getSpec().getContainers().get(0).getArgs()).contains("--leader-election");
    Set<String> roleNamespaces = grants.stream().filter(g -> g.namespace().isPresent())
        .map(g -> g.namespace().get()).collect(Collectors.toSet());
    assertThat(roleNamespaces).containsExactly(DeployManifests.OPERATOR_NAMESPACE);
  }
}

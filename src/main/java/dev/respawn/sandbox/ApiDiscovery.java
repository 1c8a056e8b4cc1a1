package dev.respawn.sandbox;

import io.fabric8.kubernetes.api.model.APIGroup;
import io.fabric8.kubernetes.api.model.APIGroupBuilder;
import io.fabric8.kubernetes.api.model.APIGroupList;
import io.fabric8.kubernetes.api.model.APIGroupListBuilder;
import io.fabric8.kubernetes.api.model.APIResource;
import io.fabric8.kubernetes.api.model.APIResourceBuilder;
import io.fabric8.kubernetes.api.model.APIResourceList;
import io.fabric8.kubernetes.api.model.APIResourceListBuilder;
import io.fabric8.kubernetes.api.model.APIVersions;
import io.fabric8.kubernetes.api.model.APIVersionsBuilder;
import io.fabric8.kubernetes.api.model.GroupVersionForDiscovery;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionVersion;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The discovery documents kubectl reads before anything else ({@code /api}, {@code /apis}, one
 * APIResourceList per group version): the built-in resources the sandbox's examples and kubectl's
 * commands use, and Respawn's CRDs with their short names and categories. The mock API server has none.
 */
final class ApiDiscovery {
  /** The Kubernetes version the sandbox's server says it is (what kubectl compares its own with). */
  static final String VERSION = "v1.32.0";
  private static final List<String> ALL_VERBS = List.of("create", "delete", "deletecollection", "get", "list",
      "patch", "update", "watch");

  /** group/version ("v1" for the core group) -> its resources. */
  private final Map<String, List<APIResource>> resources = new LinkedHashMap<>();
  private final List<CustomResourceDefinition> crds;

  ApiDiscovery(List<CustomResourceDefinition> crds) {
    this.crds = List.copyOf(crds);
    add("v1", resource("pods", "Pod", true, "po"), sub("pods/status", "Pod"), sub("pods/log", "Pod"),
        resource("events", "Event", true, "ev"), resource("namespaces", "Namespace", false, "ns"),
        resource("serviceaccounts", "ServiceAccount", true, "sa"), resource("configmaps", "ConfigMap", true, "cm"),
        resource("secrets", "Secret", true));
    add("coordination.k8s.io/v1", resource("leases", "Lease", true));
    add("events.k8s.io/v1", resource("events", "Event", true, "ev"));
    add("rbac.authorization.k8s.io/v1", resource("roles", "Role", true), resource("rolebindings", "RoleBinding", true),
        resource("clusterroles", "ClusterRole", false), resource("clusterrolebindings", "ClusterRoleBinding", false));
    add("apiextensions.k8s.io/v1", resource("customresourcedefinitions", "CustomResourceDefinition", false, "crd",
        "crds"));
    for (CustomResourceDefinition crd : crds) {
      var names = crd.getSpec().getNames();
      boolean namespaced = "Namespaced".equals(crd.getSpec().getScope());
      for (CustomResourceDefinitionVersion v : crd.getSpec().getVersions()) {
        APIResource r = new APIResourceBuilder(resource(names.getPlural(), names.getKind(), namespaced))
            .withSingularName(names.getSingular()).withShortNames(names.getShortNames())
            .withCategories(names.getCategories()).build();
        add(crd.getSpec().getGroup() + "/" + v.getName(), r, sub(names.getPlural() + "/status", names.getKind()));
      }
    }
  }

  List<String> groupVersions() {
    return List.copyOf(resources.keySet());
  }

  /** The CRD serving this group and plural, if it is one of Respawn's. */
  Optional<CustomResourceDefinition> crd(String group, String plural) {
    return crds.stream().filter(c -> c.getSpec().getGroup().equals(group)
        && c.getSpec().getNames().getPlural().equals(plural)).findFirst();
  }

  /** The kind of a resource, if discovery knows it. */
  Optional<String> kind(String groupVersion, String plural) {
    return resources.getOrDefault(groupVersion, List.of()).stream().filter(r -> r.getName().equals(plural))
        .map(APIResource::getKind).findFirst();
  }

  APIVersions coreVersions(String serverAddress) {
    return new APIVersionsBuilder().withVersions("v1").addNewServerAddressByClientCIDR("0.0.0.0/0", serverAddress)
        .build();
  }

  APIGroupList groups() {
    Map<String, List<String>> versions = new LinkedHashMap<>();
    resources.keySet().stream().filter(gv -> gv.contains("/")).forEach(gv -> versions
        .computeIfAbsent(gv.substring(0, gv.indexOf('/')), g -> new ArrayList<>()).add(gv));
    List<APIGroup> groups = new ArrayList<>();
    versions.forEach((group, gvs) -> {
      List<GroupVersionForDiscovery> list = gvs.stream().map(gv -> new GroupVersionForDiscovery(gv,
          gv.substring(gv.indexOf('/') + 1))).toList();
      groups.add(new APIGroupBuilder().withName(group).withVersions(list).withPreferredVersion(list.get(0)).build());
    });
    return new APIGroupListBuilder().withGroups(groups).build();
  }

  /** The APIResourceList of a group version ("v1" for the core group), if it is served. */
  Optional<APIResourceList> resources(String groupVersion) {
    List<APIResource> list = resources.get(groupVersion);
    return list == null ? Optional.empty()
        : Optional.of(new APIResourceListBuilder().withGroupVersion(groupVersion).withResources(list).build());
  }

  private void add(String groupVersion, APIResource... list) {
    resources.computeIfAbsent(groupVersion, k -> new ArrayList<>()).addAll(List.of(list));
  }

  private static APIResource resource(String plural, String kind, boolean namespaced, String... shortNames) {
    return new APIResourceBuilder().withName(plural).withKind(kind).withNamespaced(namespaced)
        .withSingularName(kind.toLowerCase(java.util.Locale.ROOT)).withVerbs(ALL_VERBS)
        .withShortNames(shortNames.length == 0 ? null : List.of(shortNames)).build();
  }

  private static APIResource sub(String name, String kind) {
    return new APIResourceBuilder().withName(name).withKind(kind).withNamespaced(true).withSingularName("")
        .withVerbs(List.of("get", "patch", "update")).build();
  }
}

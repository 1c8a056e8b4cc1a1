package dev.respawn.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesResource;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The kustomize base in {@code deploy/}, read the way kustomize reads it (the files its kustomization.yaml
 * lists), and the RBAC it grants as a tiny authorizer with the Kubernetes RBAC semantics the operator
 * needs: a ClusterRole bound cluster-wide applies everywhere, a Role only in its namespace, resourceNames
 * only to requests that name an object.
 */
public final class DeployManifests {
  static final Path BASEDIR = Path.of(System.getProperty("basedir", System.getProperty("user.dir")));
  public static final Path DEPLOY = BASEDIR.resolve("deploy");
  static final String OPERATOR_NAMESPACE = "respawn-system";
  static final String SERVICE_ACCOUNT = "respawn-operator";
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  private DeployManifests() {}

  /** The files of a kustomization's {@code resources:} (plain files only, in order). */
  static List<Path> resourceFiles(Path kustomizationDir) {
    JsonNode k = yaml(kustomizationDir.resolve("kustomization.yaml"));
    List<Path> files = new ArrayList<>();
    for (JsonNode r : k.path("resources")) {
      Path p = kustomizationDir.resolve(r.asText()).normalize();
      if (Files.isRegularFile(p)) {
        files.add(p);
      } else if (Files.isDirectory(p) && Files.isRegularFile(p.resolve("kustomization.yaml"))) {
        files.addAll(resourceFiles(p));
      } else {
        throw new IllegalStateException(kustomizationDir + "/kustomization.yaml lists " + r.asText()
            + ", which is neither a file nor a kustomization");
      }
    }
    return files;
  }

  /** Every object of the kustomize base in {@code dir}, typed (fabric8's model). */
  public static List<HasMetadata> objects(Path dir) {
    List<HasMetadata> all = new ArrayList<>();
    for (Path f : resourceFiles(dir)) {
      all.addAll(load(f));
    }
    return all;
  }

  static List<HasMetadata> load(Path file) {
    try (InputStream in = Files.newInputStream(file)) {
      Object parsed = Serialization.unmarshal(in);
      if (parsed instanceof List<?> l) {
        return l.stream().filter(Objects::nonNull).map(HasMetadata.class::cast).toList();
      }
      if (parsed instanceof KubernetesResource) {
        return List.of((HasMetadata) parsed);
      }
      throw new IllegalStateException(file + " holds no Kubernetes object");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static JsonNode yaml(Path file) {
    try {
      return YAML.readTree(file.toFile());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public static <T extends HasMetadata> List<T> ofType(List<HasMetadata> objects, Class<T> type) {
    return objects.stream().filter(type::isInstance).map(type::cast).toList();
  }

  /** One RBAC rule with where it applies: everywhere (a ClusterRole) or in one namespace (a Role). */
  public record Grant(String source, Optional<String> namespace, Set<String> apiGroups, Set<String> resources,
      Set<String> verbs, Set<String> resourceNames, Set<String> nonResourceURLs) {
    public static Grant of(String source, Optional<String> namespace, PolicyRule r) {
      return new Grant(source, namespace, set(r.getApiGroups()), set(r.getResources()), set(r.getVerbs()),
          set(r.getResourceNames()), set(r.getNonResourceURLs()));
    }

    private static Set<String> set(List<String> l) {
      return l == null ? Set.of() : Set.copyOf(l);
    }

    public boolean allows(Access a) {
      return namespace.map(ns -> ns.equals(a.namespace())).orElse(true)
          && apiGroups.contains(a.group()) && resources.contains(a.resource()) && verbs.contains(a.verb())
          && (resourceNames.isEmpty() || (a.name() != null && resourceNames.contains(a.name())));
    }

    /** The single permissions this rule grants: one per (group, resource, verb). */
    List<Access> expand() {
      List<Access> out = new ArrayList<>();
      for (String g : apiGroups) {
        for (String r : resources) {
          for (String v : verbs) {
            if (resourceNames.isEmpty()) {
              out.add(new Access(v, g, r, namespace.orElse(null), null));
            }
            for (String n : resourceNames) {
              out.add(new Access(v, g, r, namespace.orElse(null), n));
            }
          }
        }
      }
      return out;
    }

    @Override
    public String toString() {
      return source + namespace.map(n -> " (namespace " + n + ")").orElse("") + ": " + apiGroups + " "
          + resources + (resourceNames.isEmpty() ? "" : " " + resourceNames) + " " + verbs;
    }
  }

  /**
   * One API request as the authorizer sees it: the verb, the API group ("" for core), the resource with
   * its subresource ({@code pods}, {@code agentinstances/status}), the namespace (null: cluster-scoped or
   * all namespaces) and the object's name (null for collections and for create).
   */
  public record Access(String verb, String group, String resource, String namespace, String name) {
    /** Maps an HTTP request of a Kubernetes client to what RBAC checks. */
    public static Access of(String method, URI uri) {
      List<String> seg = List.of(uri.getRawPath().replaceAll("^/+", "").split("/"));
      int i;
      String group;
      if (seg.size() >= 3 && seg.get(0).equals("api")) {
        group = "";
        i = 2;
      } else if (seg.size() >= 4 && seg.get(0).equals("apis")) {
        group = seg.get(1);
        i = 3;
      } else {
        throw new IllegalArgumentException("not a resource request: " + method + " " + uri);
      }
      String namespace = null;
      if (seg.get(i).equals("namespaces") && seg.size() > i + 2) {
        namespace = seg.get(i + 1);
        i += 2;
      }
      String resource = seg.get(i);
      String name = seg.size() > i + 1 ? seg.get(i + 1) : null;
      if (seg.size() > i + 2) {
        resource += "/" + seg.get(i + 2);
      }
      Set<String> query = uri.getRawQuery() == null ? Set.of() : Set.of(uri.getRawQuery().split("&"));
      String verb = switch (method.toUpperCase(java.util.Locale.ROOT)) {
        case "GET" -> name != null ? "get" : query.contains("watch=true") || query.contains("watch=1") ? "watch"
            : "list";
        case "POST" -> "create";
        case "PUT" -> "update";
        case "PATCH" -> "patch";
        case "DELETE" -> name != null ? "delete" : "deletecollection";
        default -> throw new IllegalArgumentException("unexpected method " + method + " " + uri);
      };
      if (verb.equals("create")) {
        name = null; // the authorizer does not know the name of an object being created
      }
      return new Access(verb, group, resource, namespace, name);
    }

    boolean covers(Access granted) {
      return granted.verb.equals(verb) && granted.group.equals(group) && granted.resource.equals(resource)
          && (granted.namespace == null || granted.namespace.equals(namespace))
          && (granted.name == null || granted.name.equals(name));
    }

    @Override
    public String toString() {
      return verb + " " + (group.isEmpty() ? "core" : group) + "/" + resource
          + (namespace == null ? "" : " in " + namespace) + (name == null ? "" : " named " + name);
    }
  }

  /** The operator's grants: the ClusterRole(s) and the Role(s) of deploy/, bound to its ServiceAccount. */
  static List<Grant> operatorGrants(List<HasMetadata> objects) {
    Set<String> clusterRoles = objects.stream()
        .filter(o -> o instanceof io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding b && boundToOperator(
            b.getSubjects()))
        .map(o -> ((io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding) o).getRoleRef().getName())
        .collect(Collectors.toSet());
    Set<String> roles = objects.stream()
        .filter(o -> o instanceof io.fabric8.kubernetes.api.model.rbac.RoleBinding b && boundToOperator(
            b.getSubjects()) && b.getRoleRef().getKind().equals("Role"))
        .map(o -> o.getMetadata().getNamespace() + "/"
            + ((io.fabric8.kubernetes.api.model.rbac.RoleBinding) o).getRoleRef().getName())
        .collect(Collectors.toSet());
    List<Grant> grants = new ArrayList<>();
    for (ClusterRole cr : ofType(objects, ClusterRole.class)) {
      if (clusterRoles.contains(cr.getMetadata().getName())) {
        cr.getRules().forEach(r -> grants.add(Grant.of("ClusterRole " + cr.getMetadata().getName(), Optional.empty(),
            r)));
      }
    }
    for (Role role : ofType(objects, Role.class)) {
      if (roles.contains(role.getMetadata().getNamespace() + "/" + role.getMetadata().getName())) {
        role.getRules().forEach(r -> grants.add(Grant.of("Role " + role.getMetadata().getName(),
            Optional.of(role.getMetadata().getNamespace()), r)));
      }
    }
    return grants;
  }

  private static boolean boundToOperator(List<io.fabric8.kubernetes.api.model.rbac.Subject> subjects) {
    return subjects != null && subjects.stream().anyMatch(s -> "ServiceAccount".equals(s.getKind())
        && SERVICE_ACCOUNT.equals(s.getName()) && OPERATOR_NAMESPACE.equals(s.getNamespace()));
  }
}

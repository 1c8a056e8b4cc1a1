package dev.respawn.sandbox;

import java.util.Optional;

/**
 * A Kubernetes API path taken apart: {@code /api/v1/namespaces/agents/pods/coder-1/status} is group "",
 * version v1, namespace agents, resource pods, name coder-1, subresource status.
 */
record ResourcePath(String group, String version, String namespace, String resource, String name,
    String subresource) {

  static Optional<ResourcePath> parse(String path) {
    String[] p = path.replaceAll("^/+|/+$", "").split("/");
    int i;
    String group;
    if (p.length >= 3 && p[0].equals("api")) {
      group = "";
      i = 1;
    } else if (p.length >= 4 && p[0].equals("apis")) {
      group = p[1];
      i = 2;
    } else {
      return Optional.empty();
    }
    String version = p[i++];
    String namespace = null;
    if (p.length > i + 1 && p[i].equals("namespaces")) {
      namespace = p[i + 1];
      i += 2;
      if (p.length == i) { // the namespace object itself
        return Optional.of(new ResourcePath(group, version, null, "namespaces", namespace, null));
      }
    }
    if (p.length <= i) {
      return Optional.empty();
    }
    String resource = p[i++];
    String name = p.length > i ? p[i++] : null;
    String sub = p.length > i ? p[i] : null;
    return Optional.of(new ResourcePath(group, version, namespace, resource, name, sub));
  }

  String apiVersion() {
    return group.isEmpty() ? version : group + "/" + version;
  }
}

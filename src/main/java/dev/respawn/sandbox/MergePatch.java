package dev.respawn.sandbox;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.util.Iterator;
import java.util.Map;

/**
 * JSON merge patches (RFC 7386) applied here and written with the resourceVersion read, because the
 * mock keeps keys set to null and merges lists ({@code kubectl annotate NAME key-} must remove the key).
 * A strategic merge patch (what kubectl sends for built-in kinds; the mock refuses it) is applied the
 * same way: lists are replaced, not merged by key, which is all kubectl's commands on the sandbox need.
 */
final class MergePatch {
  private final KubernetesClient mock;
  private final ApiDiscovery discovery;

  /** What the patch request gets: a status code and the object (or a Status). */
  record Result(int code, JsonNode body) {}

  MergePatch(KubernetesClient mock, ApiDiscovery discovery) {
    this.mock = mock;
    this.discovery = discovery;
  }

  static boolean handles(String contentType) {
    return contentType != null && (contentType.startsWith("application/merge-patch+json")
        || contentType.startsWith("application/strategic-merge-patch+json"));
  }

  Result apply(ResourcePath path, byte[] patch) {
    String kind = discovery.kind(path.apiVersion(), path.resource()).orElse(null);
    if (kind == null || path.name() == null) {
      return new Result(404, KubectlFront.status(404, "NotFound", "no such resource: " + path));
    }
    var all = mock.genericKubernetesResources(path.apiVersion(), kind);
    var scoped = path.namespace() == null ? all : all.inNamespace(path.namespace());
    Resource<GenericKubernetesResource> one = scoped.withName(path.name());
    try {
      for (int attempt = 0; ; attempt++) {
        GenericKubernetesResource current = one.get();
        if (current == null) {
          return new Result(404, KubectlFront.status(404, "NotFound", kind + " \"" + path.name() + "\" not found"));
        }
        JsonNode merged = merge(Serialization.jsonMapper().valueToTree(current), Serialization.jsonMapper()
            .readTree(patch));
        GenericKubernetesResource next = Serialization.jsonMapper().treeToValue(merged,
            GenericKubernetesResource.class);
        try {
          GenericKubernetesResource written = "status".equals(path.subresource())
              ? scoped.resource(next).updateStatus() : scoped.resource(next).update();
          return new Result(200, Serialization.jsonMapper().valueToTree(written));
        } catch (KubernetesClientException e) {
          if (e.getCode() != 409 || attempt >= 3) {
            throw e;
          }
        }
      }
    } catch (KubernetesClientException e) {
      return new Result(e.getCode() == 0 ? 500 : e.getCode(), KubectlFront.status(e.getCode(), "Failure",
          String.valueOf(e.getMessage())));
    } catch (IOException e) {
      return new Result(400, KubectlFront.status(400, "BadRequest", "the patch is not JSON: " + e.getMessage()));
    }
  }

  /** RFC 7386: objects merge key by key, null removes a key, anything else replaces. */
  static JsonNode merge(JsonNode target, JsonNode patch) {
    if (!patch.isObject()) {
      return patch;
    }
    ObjectNode result = target != null && target.isObject() ? (ObjectNode) target
        : Serialization.jsonMapper().createObjectNode();
    for (Iterator<Map.Entry<String, JsonNode>> it = patch.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      if (e.getKey().startsWith("$")) {
        continue; // strategic merge patch directives
      }
      if (e.getValue().isNull()) {
        result.remove(e.getKey());
      } else {
        result.set(e.getKey(), merge(result.get(e.getKey()), e.getValue()));
      }
    }
    return result;
  }
}

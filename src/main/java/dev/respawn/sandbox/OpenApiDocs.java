package dev.respawn.sandbox;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.APIResource;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.Optional;

/**
 * OpenAPI v3 for kubectl ({@code /openapi/v3} and one document per group version): {@code kubectl explain}
 * reads Respawn's kinds from their CRD schemas; {@code kubectl apply} finds that every kind takes the
 * {@code fieldValidation} parameter. The sandbox's server does not validate anything (the mock has no
 * schema validation): built-in kinds get an open schema, and unknown fields are accepted as with
 * {@code --validate=false}.
 */
final class OpenApiDocs {
  private static final JsonNodeFactory JSON = JsonNodeFactory.instance;
  private final ApiDiscovery discovery;

  OpenApiDocs(ApiDiscovery discovery) {
    this.discovery = discovery;
  }

  ObjectNode index() {
    ObjectNode root = JSON.objectNode();
    ObjectNode paths = root.putObject("paths");
    discovery.groupVersions().forEach(gv -> paths.putObject(docPath(gv)).put("serverRelativeURL",
        "/openapi/v3/" + docPath(gv) + "?hash=respawn-sandbox"));
    return root;
  }

  /** The document of "api/v1" or "apis/GROUP/VERSION". */
  Optional<ObjectNode> document(String path) {
    return discovery.groupVersions().stream().filter(gv -> docPath(gv).equals(path)).findFirst().map(this::build);
  }

  private static String docPath(String groupVersion) {
    return groupVersion.contains("/") ? "apis/" + groupVersion : "api/" + groupVersion;
  }

  private ObjectNode build(String groupVersion) {
    ObjectNode doc = JSON.objectNode().put("openapi", "3.0.0");
    doc.putObject("info").put("title", "Kubernetes (Respawn sandbox)").put("version", ApiDiscovery.VERSION);
    ObjectNode paths = doc.putObject("paths");
    ObjectNode schemas = doc.putObject("components").putObject("schemas");
    String group = groupVersion.contains("/") ? groupVersion.substring(0, groupVersion.indexOf('/')) : "";
    String version = groupVersion.substring(groupVersion.indexOf('/') + 1);
    for (APIResource r : discovery.resources(groupVersion).orElseThrow().getResources()) {
      if (r.getName().contains("/")) {
        continue;
      }
      ObjectNode gvk = JSON.objectNode().put("group", group).put("version", version).put("kind", r.getKind());
      String schemaName = (group.isEmpty() ? "io.k8s.api.core" : group) + "." + version + "." + r.getKind();
      ObjectNode schema = schema(group, r.getName());
      schema.putArray("x-kubernetes-group-version-kind").add(gvk);
      schemas.set(schemaName, schema);
      String base = "/" + docPath(groupVersion) + (Boolean.TRUE.equals(r.getNamespaced())
          ? "/namespaces/{namespace}/" : "/") + r.getName();
      operation(paths.putObject(base), "post", gvk, schemaName);
      operation(paths.putObject(base + "/{name}"), "patch", gvk, schemaName);
    }
    return doc;
  }

  private ObjectNode schema(String group, String plural) {
    Optional<CustomResourceDefinition> crd = discovery.crd(group, plural);
    if (crd.isPresent()) {
      JsonNode s = Serialization.jsonMapper().valueToTree(crd.get().getSpec().getVersions().get(0).getSchema()
          .getOpenAPIV3Schema());
      return s.deepCopy();
    }
    return JSON.objectNode().put("type", "object").put("x-kubernetes-preserve-unknown-fields", true)
        .put("description", "(the sandbox serves no schema for built-in kinds)");
  }

  private static void operation(ObjectNode path, String method, ObjectNode gvk, String schemaName) {
    ObjectNode op = path.putObject(method);
    op.set("x-kubernetes-group-version-kind", gvk);
    op.putArray("parameters").addObject().put("name", "fieldValidation").put("in", "query")
        .putObject("schema").put("type", "string");
    op.putObject("responses").putObject("200").putObject("content").putObject("application/json")
        .putObject("schema").put("$ref", "#/components/schemas/" + schemaName);
  }
}

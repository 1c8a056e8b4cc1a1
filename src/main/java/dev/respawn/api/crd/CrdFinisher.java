package dev.respawn.api.crd;

import com.fasterxml.jackson.annotation.JsonClassDescription;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.client.CustomResource;
import java.io.IOException;
import java.lang.reflect.ParameterizedType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Finishes the CRDs that fabric8's CRD generator writes: printer columns in the order the classes
 * declare them (the generator sorts them by name), and descriptions for the root, spec and status
 * objects taken from {@link JsonClassDescription}, {@code default: {}} on a spec that requires nothing, the
 * lists of named items marked as maps keyed by name ({@link #KEYED_LISTS}; the generator has no annotation for it),
 * and status.conditions as a map keyed by type.
 * Run by the build after the generator
 * ({@code process-classes}); its output is what {@code crds/} must equal.
 */
public final class CrdFinisher {
  /** The custom resources this project defines, keyed by CRD name. */
  public static final Map<String, Class<? extends CustomResource<?, ?>>> RESOURCES = Map.of(
      "agentinstances.respawn.dev", AgentInstance.class,
      "agentrestartpolicies.respawn.dev", AgentRestartPolicy.class);

  /**
   * The spec lists whose items are known by a unique, required name: {@code x-kubernetes-list-type: map} keyed by
   * it, as Kubernetes' own named lists (containers, ports) are. A server-side apply then merges and owns them item by
   * item, so a GitOps tool that compares with its manifest sees an item's defaults as the server's, not as drift;
   * and an item's transition rules can see its old value.
   */
  static final Map<Class<?>, List<String>> KEYED_LISTS = Map.of(
      AgentRestartPolicy.class, List.of("dependencies", "failureRules"));

  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory()
      .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
      .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES)
      .enable(YAMLGenerator.Feature.INDENT_ARRAYS_WITH_INDICATOR));

  private CrdFinisher() {}

  /** Arguments: the generator's output directory, and the directory to write the finished CRDs to. */
  public static void main(String[] args) throws IOException {
    Path in = Path.of(args[0]);
    Path out = Path.of(args[1]);
    Files.createDirectories(out);
    for (var entry : RESOURCES.entrySet()) {
      JsonNode crd = YAML.readTree(in.resolve(entry.getKey() + "-v1.yml").toFile());
      finish((ObjectNode) crd, entry.getValue());
      Files.writeString(out.resolve(entry.getKey() + ".yaml"), render(crd));
    }
  }

  /** The YAML text of a finished CRD, as committed in crds/. */
  public static String render(JsonNode crd) throws IOException {
    return "# Generated from the Java classes in dev.respawn.api.v1alpha1 by `make crds`; do not edit.\n"
        + YAML.writeValueAsString(crd);
  }

  static void finish(ObjectNode crd, Class<?> resource) {
    for (JsonNode version : crd.path("spec").path("versions")) {
      orderPrinterColumns((ObjectNode) version, resource);
      ObjectNode root = (ObjectNode) version.path("schema").path("openAPIV3Schema");
      describe(root, resource);
      var types = (ParameterizedType) resource.getGenericSuperclass();
      ObjectNode spec = (ObjectNode) root.path("properties").path("spec");
      describe(spec, (Class<?>) types.getActualTypeArguments()[0]);
      if (!spec.has("required") && !spec.has("default")) {
        // a spec that needs nothing is defaulted whole, so that one left out gets every default too
        // (the printer columns show them) as `spec: {}` does
        spec.putObject("default");
      }
      for (String list : KEYED_LISTS.getOrDefault(resource, List.of())) {
        ObjectNode items = (ObjectNode) spec.path("properties").path(list);
        items.put("x-kubernetes-list-type", "map");
        items.putArray("x-kubernetes-list-map-keys").add("name");
      }
      ObjectNode status = (ObjectNode) root.path("properties").path("status");
      describe(status, (Class<?>) types.getActualTypeArguments()[1]);
      // conditions are known by their type, as metav1.Condition's are: another party's server-side apply of its own
      // condition owns that item alone, and leaves the operator's (an atomic list would be taken over whole)
      ObjectNode conditions = (ObjectNode) status.path("properties").path("conditions");
      conditions.put("x-kubernetes-list-type", "map");
      conditions.putArray("x-kubernetes-list-map-keys").add("type");
    }
  }

  private static void orderPrinterColumns(ObjectNode version, Class<?> resource) {
    JsonNode columns = version.path("additionalPrinterColumns");
    List<JsonNode> ordered = new ArrayList<>();
    for (AdditionalPrinterColumn declared : resource.getAnnotationsByType(AdditionalPrinterColumn.class)) {
      for (JsonNode column : columns) {
        if (column.path("name").asText().equals(declared.name())) {
          ordered.add(column);
        }
      }
    }
    ArrayNode result = version.putArray("additionalPrinterColumns");
    ordered.forEach(result::add);
  }

  private static void describe(ObjectNode schema, Class<?> type) {
    JsonClassDescription description = type.getAnnotation(JsonClassDescription.class);
    if (description != null && !schema.has("description")) {
      schema.put("description", description.value());
    }
  }
}

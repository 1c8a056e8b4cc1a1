package dev.respawn.api.crd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.BeforeAll;

/**
 * The committed CRDs (crds/*.yaml), read once per class, and how the Crd*Test classes that extend this find a field's
 * schema: they check the CRDs against the API contract, docs/design api.md sections 1, 2 and 9. A real API server's
 * view of the same CRDs is {@link RealApiServerFixture}.
 */
abstract class CrdSchemaFixture {
  static final String POLICY = "agentrestartpolicies.respawn.dev";
  static final String INSTANCE = "agentinstances.respawn.dev";
  static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  static JsonNode policy;
  static JsonNode instance;

  @BeforeAll
  static void load() throws IOException {
    policy = read(POLICY);
    instance = read(INSTANCE);
  }

  static Path file(String crd) {
    return CrdFreshnessTest.COMMITTED.resolve(crd + ".yaml");
  }

  static JsonNode read(String crd) throws IOException {
    Path file = file(crd);
    assertThat(file).as("committed CRD %s", file).isRegularFile();
    return YAML.readTree(file.toFile());
  }

  static JsonNode crd(String name) {
    return switch (name) {
      case POLICY -> policy;
      case INSTANCE -> instance;
      default -> throw new IllegalArgumentException(name);
    };
  }

  static JsonNode version(String crd) {
    return crd(crd).path("spec").path("versions").path(0);
  }

  static JsonNode root(String crd) {
    return version(crd).path("schema").path("openAPIV3Schema");
  }

  /**
   * The schema of a field, by its path below the root object: {@code spec.backoff.type};
   * {@code []} steps into an array's items ({@code spec.failureRules[].name}). Fails when absent.
   */
  static JsonNode schema(String crd, String path) {
    JsonNode node = root(crd);
    for (String segment : path.split("\\.")) {
      boolean items = segment.endsWith("[]");
      String name = items ? segment.substring(0, segment.length() - 2) : segment;
      node = node.path("properties").path(name);
      if (node.isMissingNode()) {
        fail("%s: no property %s in the schema (looking for %s)", crd, name, path);
      }
      if (items) {
        node = node.path("items");
        if (node.isMissingNode()) {
          fail("%s: %s is not an array with items (looking for %s)", crd, name, path);
        }
      }
    }
    return node;
  }

  static List<String> texts(JsonNode array) {
    return StreamSupport.stream(array.spliterator(), false).map(JsonNode::asText).collect(Collectors.toList());
  }

  static Set<String> fieldNames(JsonNode node) {
    Set<String> names = new LinkedHashSet<>();
    node.fieldNames().forEachRemaining(names::add);
    return names;
  }

  interface Visitor {
    void visit(String path, JsonNode schema);
  }

  /** Visits every property below {@code node} (not node itself); does not descend into spec.template. */
  static void walk(JsonNode node, String path, Visitor visitor) {
    node.path("properties").fields().forEachRemaining(e -> {
      String child = path + "." + e.getKey();
      visitor.visit(child, e.getValue());
      if (!child.equals("spec.template")) {
        walk(e.getValue(), child, visitor);
      }
    });
    if (node.path("items").isObject()) {
      walk(node.path("items"), path + "[]", visitor);
    }
    if (node.path("additionalProperties").isObject()) {
      walk(node.path("additionalProperties"), path + "{}", visitor);
    }
  }
}

package dev.respawn.simulate;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.type.LogicalType;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads an AgentRestartPolicy from YAML: one object, a multi-document file such as the ones in
 * examples/ (the first AgentRestartPolicy, or the one with the wanted name), or a {@code kind: List}
 * as {@code kubectl get -o yaml} prints it. Unknown fields are refused with their path, as kubectl's
 * strict field validation does.
 */
public final class PolicyFile {
  static final String API_VERSION = AgentRestartPolicy.GROUP + "/" + AgentRestartPolicy.VERSION;
  private static final ObjectMapper YAML = strictScalars(YAMLMapper.builder()
      .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES).build());

  /**
   * A quoted number or boolean ({@code maxRetries: "3"}), or a number where a string goes, is the wrong type, as
   * the CRD schema and the operator say (api.md §9): simulated, it would be a policy the operator refuses.
   */
  private static ObjectMapper strictScalars(ObjectMapper mapper) {
    for (LogicalType wanted : List.of(LogicalType.Integer, LogicalType.Float, LogicalType.Boolean)) {
      mapper.coercionConfigFor(wanted).setCoercion(CoercionInputShape.String, CoercionAction.Fail);
    }
    for (CoercionInputShape shape : List.of(CoercionInputShape.Integer, CoercionInputShape.Float,
        CoercionInputShape.Boolean)) {
      mapper.coercionConfigFor(LogicalType.Textual).setCoercion(shape, CoercionAction.Fail);
    }
    mapper.coercionConfigFor(LogicalType.Boolean).setCoercion(CoercionInputShape.Integer, CoercionAction.Fail);
    return mapper;
  }

  private PolicyFile() {}

  /** A policy read from a file or the cluster: where it came from, and its spec. */
  public record Loaded(String name, String namespace, String source, AgentRestartPolicySpec spec) {}

  /** The file cannot give a policy: not YAML, no AgentRestartPolicy in it, a field of the wrong type. */
  public static final class PolicyFileException extends Exception {
    public PolicyFileException(String message) {
      super(message);
    }
  }

  /**
   * The first AgentRestartPolicy of {@code text}, or the one named {@code wanted}.
   *
   * @param source the file's name, for messages
   */
  public static Loaded read(String text, String source, String wanted) throws PolicyFileException {
    List<JsonNode> policies = new ArrayList<>();
    try (MappingIterator<JsonNode> docs = YAML.readerFor(JsonNode.class).readValues(text)) {
      while (docs.hasNextValue()) {
        collect(docs.nextValue(), policies);
      }
    } catch (JsonProcessingException e) {
      throw new PolicyFileException(source + " is not valid YAML: " + e.getOriginalMessage());
    } catch (IOException | RuntimeException e) {
      throw new PolicyFileException(source + " cannot be read as YAML: " + e.getMessage());
    }
    List<String> names = new ArrayList<>();
    for (JsonNode p : policies) {
      String name = p.path("metadata").path("name").asText("");
      names.add(name);
      if (wanted == null || wanted.equals(name)) {
        String apiVersion = p.path("apiVersion").asText("");
        if (!API_VERSION.equals(apiVersion)) {
          throw new PolicyFileException(source + ": AgentRestartPolicy " + name + " has apiVersion \"" + apiVersion
              + "\"; this version of Respawn reads " + API_VERSION);
        }
        String ns = p.path("metadata").path("namespace").asText(null);
        return new Loaded(name.isEmpty() ? "(unnamed)" : name, ns, source, spec(p.get("spec"), source));
      }
    }
    if (wanted != null) {
      throw new PolicyFileException(source + " has no AgentRestartPolicy named " + wanted
          + (names.isEmpty() ? "" : " (it has: " + String.join(", ", names) + ")"));
    }
    throw new PolicyFileException(source + " holds no AgentRestartPolicy (kind: AgentRestartPolicy, apiVersion: "
        + API_VERSION + ")");
  }

  private static void collect(JsonNode doc, List<JsonNode> into) {
    if (doc == null || !doc.isObject()) {
      return;
    }
    String kind = doc.path("kind").asText("");
    if ("AgentRestartPolicy".equals(kind)) {
      into.add(doc);
    } else if (kind.endsWith("List") && doc.path("items").isArray()) {
      doc.path("items").forEach(item -> collect(item, into));
    }
  }

  private static AgentRestartPolicySpec spec(JsonNode spec, String source) throws PolicyFileException {
    if (spec == null || spec.isNull()) {
      return new AgentRestartPolicySpec();
    }
    try {
      return YAML.treeToValue(spec, AgentRestartPolicySpec.class);
    } catch (UnrecognizedPropertyException e) {
      throw new PolicyFileException(source + ": " + path(e) + ": unknown field");
    } catch (JsonMappingException e) {
      throw new PolicyFileException(source + ": " + path(e) + ": wrong type ("
          + e.getOriginalMessage().replaceAll("\\s+", " ").replaceAll(" \\(class [^)]*\\)", "") + ")");
    } catch (JsonProcessingException e) {
      throw new PolicyFileException(source + ": spec: " + e.getOriginalMessage());
    }
  }

  /** The field path of a mapping error, e.g. {@code spec.failureRules[0].match.exitCodes[1]}. */
  private static String path(JsonMappingException e) {
    StringBuilder sb = new StringBuilder("spec");
    for (JsonMappingException.Reference ref : e.getPath()) {
      if (ref.getFieldName() != null) {
        sb.append('.').append(ref.getFieldName());
      } else if (ref.getIndex() >= 0) {
        sb.append('[').append(ref.getIndex()).append(']');
      }
    }
    return sb.toString();
  }
}

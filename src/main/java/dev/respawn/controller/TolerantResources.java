package dev.respawn.controller;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.BeanDescription;
import com.fasterxml.jackson.databind.DeserializationConfig;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.deser.BeanDeserializerModifier;
import com.fasterxml.jackson.databind.deser.std.DelegatingDeserializer;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import dev.respawn.policy.Bounds;
import dev.respawn.policy.Violation;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads AgentInstances and AgentRestartPolicies whose JSON does not fit their Java classes (a string
 * where a number goes, a number where an object goes: what the CRD schema refuses, but what an older
 * cluster or bypassed validation lets through) without failing: a field that does not fit is left out,
 * and what was wrong is kept in {@link SpecProblems}, for the reconcilers to refuse the spec with.
 *
 * <p>Without this, one such object makes the client fail on the informer's list and watch events, and
 * JOSDK stops the whole operator ({@code System.exit}) — every other instance unserved.
 */
final class TolerantResources {
  private static final Logger LOG = LoggerFactory.getLogger(TolerantResources.class);
  private static final Set<Class<?>> TOLERATED = Set.of(AgentInstance.class, AgentRestartPolicy.class);
  private static final int MAX_REPAIRS = 64;
  /** One registry per client serialization, installed once. */
  private static final Map<KubernetesSerialization, SpecProblems> INSTALLED = new WeakHashMap<>();

  private TolerantResources() {}

  /**
   * Makes the client's deserialization of AgentInstance and AgentRestartPolicy tolerant (once per
   * client) and returns where it records what it left out. When that is impossible (an unexpected
   * fabric8 version), logs a warning and returns an empty registry.
   */
  static synchronized SpecProblems install(KubernetesClient client) {
    KubernetesSerialization serialization = client.getKubernetesSerialization();
    SpecProblems existing = INSTALLED.get(serialization);
    if (existing != null) {
      return existing;
    }
    SpecProblems problems = new SpecProblems();
    try {
      // the client's own ObjectMapper: fabric8 keeps its getter package-private
      Method getter = KubernetesSerialization.class.getDeclaredMethod("getMapper");
      getter.setAccessible(true);
      ObjectMapper mapper = (ObjectMapper) getter.invoke(serialization);
      mapper.registerModule(new SimpleModule("respawn-tolerant-resources").setDeserializerModifier(
          new BeanDeserializerModifier() {
            @Override
            public JsonDeserializer<?> modifyDeserializer(DeserializationConfig config, BeanDescription bean,
                JsonDeserializer<?> deserializer) {
              return TOLERATED.contains(bean.getBeanClass()) ? new Tolerant(deserializer, problems) : deserializer;
            }
          }));
      selfCheck(serialization, problems);
    } catch (ReflectiveOperationException | RuntimeException e) {
      LOG.warn("Cannot make the deserialization of Respawn resources tolerant ({}): one object with a field "
          + "of the wrong JSON type can stop the operator", e.toString());
    }
    INSTALLED.put(serialization, problems);
    return problems;
  }

  private static void selfCheck(KubernetesSerialization serialization, SpecProblems problems) {
    String probe = "{\"apiVersion\":\"respawn.dev/v1alpha1\",\"kind\":\"AgentRestartPolicy\",\"metadata\":"
        + "{\"name\":\"probe\",\"uid\":\"respawn-tolerance-probe\",\"resourceVersion\":\"1\"},"
        + "\"spec\":{\"maxRetries\":\"x\"}}";
    AgentRestartPolicy p = serialization.unmarshal(probe, AgentRestartPolicy.class);
    if (problems.of(p).isEmpty()) {
      throw new IllegalStateException("the tolerant deserializer is not in use");
    }
    problems.forget(p);
  }

  /** Deserializes from the JSON tree; each field that fails is removed and recorded, then it tries again. */
  private static final class Tolerant extends DelegatingDeserializer {
    private static final long serialVersionUID = 1L;
    private final transient SpecProblems problems;

    Tolerant(JsonDeserializer<?> delegate, SpecProblems problems) {
      super(delegate);
      this.problems = problems;
    }

    @Override
    protected JsonDeserializer<?> newDelegatingInstance(JsonDeserializer<?> newDelegatee) {
      return new Tolerant(newDelegatee, problems);
    }

    @Override
    public Object deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
      JsonNode tree = ctxt.readTree(p);
      if (!(tree instanceof ObjectNode root)) {
        return readFrom(tree, p, ctxt);
      }
      List<Violation> found = new ArrayList<>();
      for (int repairs = 0; ; repairs++) {
        try {
          Object value = readFrom(root, p, ctxt);
          problems.record(root, found);
          return value;
        } catch (JsonProcessingException e) {
          if (repairs >= MAX_REPAIRS || !repair(root, e, found)) {
            throw e;
          }
        }
      }
    }

    private Object readFrom(JsonNode tree, JsonParser p, DeserializationContext ctxt) throws IOException {
      try (JsonParser tp = tree.traverse(p.getCodec())) {
        tp.nextToken();
        return _delegatee.deserialize(tp, ctxt);
      }
    }
  }

  /** Removes the node the exception points at (or, failing that, its top-level field); false if none. */
  static boolean repair(ObjectNode root, JsonProcessingException e, List<Violation> found) {
    List<JsonMappingException.Reference> path = e instanceof JsonMappingException m ? m.getPath() : List.of();
    if (path.isEmpty()) {
      return false;
    }
    StringBuilder field = new StringBuilder();
    JsonNode parent = null;
    JsonNode node = root;
    for (JsonMappingException.Reference ref : path) {
      parent = node;
      if (ref.getFieldName() != null) {
        field.append(field.length() == 0 ? "" : ".").append(ref.getFieldName());
        node = node == null ? null : node.get(ref.getFieldName());
      } else if (ref.getIndex() >= 0) {
        field.append('[').append(ref.getIndex()).append(']');
        node = node == null ? null : node.get(ref.getIndex());
      } else {
        node = null;
      }
    }
    JsonMappingException.Reference last = path.get(path.size() - 1);
    if (node != null && parent instanceof ObjectNode o && last.getFieldName() != null) {
      o.remove(last.getFieldName());
    } else if (node != null && !node.isNull() && parent instanceof ArrayNode a && last.getIndex() >= 0) {
      a.set(last.getIndex(), NullNode.getInstance());
    } else {
      // the path does not lead to a node of the tree: give up the whole top-level field
      String top = path.get(0).getFieldName();
      if (top == null || root.remove(top) == null) {
        return false;
      }
      found.add(new Violation(top, "cannot be read: " + Bounds.truncateUtf8(e.getOriginalMessage(), 200)));
      return true;
    }
    found.add(new Violation(field.toString(), rule(e, node)));
    return true;
  }

  private static String rule(JsonProcessingException e, JsonNode got) {
    String wanted = "of another type";
    if (e instanceof MismatchedInputException m && m.getTargetType() != null) {
      Class<?> t = m.getTargetType();
      if (t == Integer.class || t == int.class || t == Long.class || t == long.class) {
        wanted = "an integer";
      } else if (t == Double.class || t == double.class || t == Float.class) {
        wanted = "a number";
      } else if (t == Boolean.class || t == boolean.class) {
        wanted = "true or false";
      } else if (t == String.class) {
        wanted = "a string";
      } else if (Collection.class.isAssignableFrom(t) || t.isArray()) {
        wanted = "a list";
      } else if (Map.class.isAssignableFrom(t) || !t.isPrimitive()) {
        wanted = "an object";
      }
    }
    return "must be " + wanted + " (got " + Bounds.truncateUtf8(got.toString(), 64) + ")";
  }
}

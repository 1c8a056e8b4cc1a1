package dev.respawn.controller;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.BeanDescription;
import com.fasterxml.jackson.databind.DeserializationConfig;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.deser.BeanDeserializerBuilder;
import com.fasterxml.jackson.databind.deser.BeanDeserializerModifier;
import com.fasterxml.jackson.databind.deser.std.DelegatingDeserializer;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import dev.respawn.api.v1alpha1.Unreadable;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The serialization of the operator's client: AgentInstances and AgentRestartPolicies whose JSON does not
 * fit their Java classes (a string where a number goes, a number where an object goes: what the CRD schema
 * refuses, but what an older cluster or bypassed validation lets through) are read all the same. A field
 * that does not fit is left out, and the object carries what was left out ({@link Unreadable}), for the
 * reconcilers to refuse the spec with.
 *
 * <p>Without it, one such object makes the client fail on the informer's list and watch events, and JOSDK
 * stops the whole operator ({@code System.exit}): every other instance unserved. Everything goes through
 * fabric8's and Jackson's public API: a {@link KubernetesSerialization} built on an ObjectMapper with a
 * module of ours, given to the client with {@code KubernetesClientBuilder.withKubernetesSerialization}.
 */
public final class TolerantResources {
  private static final Set<Class<?>> TOLERATED = Set.of(AgentInstance.class, AgentRestartPolicy.class);
  private static final int MAX_REPAIRS = 64;

  private TolerantResources() {}

  /**
   * A new serialization for a client the operator is given: {@code new KubernetesClientBuilder()
   * .withKubernetesSerialization(TolerantResources.serialization())}. It is fabric8's own, with the tolerant
   * reading of Respawn's resources, and copies ({@link KubernetesSerialization#clone}, which JOSDK and
   * fabric8 use for theirs) keep the original's report.
   */
  public static KubernetesSerialization serialization() {
    return new TolerantSerialization(tolerantMapper());
  }

  /**
   * The serialization of the operator's own client: {@link #serialization()}, and {@code metadata.managedFields}
   * is neither read nor written. On a real API server those are a quarter to a half of each object; the operator
   * never reads them, and it writes no object back whole (it patches, creates and deletes; an update without
   * managed fields would keep the server's, as Kubernetes does for clients that do not know them). So no cache
   * holds them, whatever the namespaces watched: the trimmed stores ({@link TrimmedStore}) cannot be had with
   * several namespaces, this can. The test clients use {@link #serialization()}, which keeps them to look at.
   */
  public static KubernetesSerialization forOperator() {
    ObjectMapper mapper = tolerantMapper();
    mapper.addMixIn(ObjectMeta.class, WithoutManagedFields.class);
    return new TolerantSerialization(mapper);
  }

  /** Object metadata as the operator reads it. */
  @JsonIgnoreProperties(value = "managedFields", ignoreUnknown = true)
  private abstract static class WithoutManagedFields {}

  private static ObjectMapper tolerantMapper() {
    // a field the schema does not know is dropped, as the API server prunes it: not refused as a wrong type
    ObjectMapper mapper = new ObjectMapper()
        .disable(com.fasterxml.jackson.databind.DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);
    mapper.registerModule(new SimpleModule("respawn-tolerant-resources").setDeserializerModifier(
        new BeanDeserializerModifier() {
          @Override
          public JsonDeserializer<?> modifyDeserializer(DeserializationConfig config, BeanDescription bean,
              JsonDeserializer<?> deserializer) {
            return TOLERATED.contains(bean.getBeanClass()) ? new Tolerant(deserializer) : deserializer;
          }

          @Override
          public BeanDeserializerBuilder updateBuilder(DeserializationConfig config, BeanDescription bean,
              BeanDeserializerBuilder builder) {
            return StrictScalars.apply(bean, builder);
          }
        }));
    return mapper;
  }

  /** Whether the client was built with {@link #serialization()} or {@link #forOperator()}. */
  public static boolean isTolerant(KubernetesClient client) {
    return client.getKubernetesSerialization() instanceof TolerantSerialization;
  }

  /** The client, if built with {@link #serialization()} or {@link #forOperator()}; otherwise says how to build it. */
  static KubernetesClient requireTolerant(KubernetesClient client) {
    if (!isTolerant(client)) {
      throw new IllegalArgumentException("The operator's client must be built with new KubernetesClientBuilder()"
          + ".withKubernetesSerialization(TolerantResources.forOperator()) (or serialization()): with fabric8's "
          + "default serialization, one AgentInstance or AgentRestartPolicy with a field of the wrong JSON type "
          + "stops the operator");
    }
    return client;
  }

  /** fabric8's serialization, whose copies carry the original's report (a copy is read from the repaired JSON). */
  private static final class TolerantSerialization extends KubernetesSerialization {
    TolerantSerialization(ObjectMapper mapper) {
      super(mapper, true);
    }

    @Override
    public <T> T clone(T resource) {
      T copy = super.clone(resource);
      if (resource instanceof Unreadable.Holder original && copy instanceof Unreadable.Holder copied) {
        copied.unreadable(original.unreadable());
      }
      return copy;
    }
  }

  /**
   * Deserializes from the JSON tree; each field that fails is removed and noted, then it tries again. The
   * object read carries the notes, so every reading (list, watch event, a write's response) reports anew.
   */
  private static final class Tolerant extends DelegatingDeserializer {
    private static final long serialVersionUID = 1L;

    Tolerant(JsonDeserializer<?> delegate) {
      super(delegate);
    }

    @Override
    protected JsonDeserializer<?> newDelegatingInstance(JsonDeserializer<?> newDelegatee) {
      return new Tolerant(newDelegatee);
    }

    @Override
    public Object deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
      JsonNode tree = ctxt.readTree(p);
      if (!(tree instanceof ObjectNode root)) {
        return readFrom(tree, p, ctxt);
      }
      List<Unreadable.Field> found = new ArrayList<>();
      for (int repairs = 0; ; repairs++) {
        try {
          Object value = readFrom(root, p, ctxt);
          if (value instanceof Unreadable.Holder holder) {
            holder.unreadable(new Unreadable(found));
          }
          return value;
        } catch (JsonProcessingException e) {
          if (repairs >= MAX_REPAIRS || !UnreadableFields.remove(root, e, found)) {
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
}

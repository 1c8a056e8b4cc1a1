package dev.respawn.controller;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.BeanDescription;
import com.fasterxml.jackson.databind.BeanProperty;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.deser.BeanDeserializerBuilder;
import com.fasterxml.jackson.databind.deser.ContextualDeserializer;
import com.fasterxml.jackson.databind.deser.SettableBeanProperty;
import dev.respawn.api.v1alpha1.AgentInstance;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The scalar fields of Respawn's resources take only their own JSON type: {@code "3"} where an integer goes,
 * {@code "true"} where a boolean goes, {@code 5} where a string goes are what the CRD schema refuses ("must be
 * of type integer"), so they are unreadable fields ({@link TolerantResources}) and the spec is refused (api.md
 * §9), not silently read as 3, true or "5" (Jackson's default coercions, and fabric8's Go-compatible reading
 * of an integer from a string). Other resources (pods, Leases) are read as fabric8 reads them.
 */
final class StrictScalars {
  private static final String API_PACKAGE = AgentInstance.class.getPackageName();
  private static final Set<Class<?>> SCALARS = Set.of(Integer.class, Long.class, Double.class, Boolean.class,
      String.class);

  private StrictScalars() {}

  /** Gives each scalar property of a Respawn API class the strict reading. */
  static BeanDeserializerBuilder apply(BeanDescription bean, BeanDeserializerBuilder builder) {
    if (!bean.getBeanClass().getPackageName().equals(API_PACKAGE)) {
      return builder;
    }
    List<SettableBeanProperty> strict = new ArrayList<>();
    builder.getProperties().forEachRemaining(p -> {
      if (SCALARS.contains(p.getType().getRawClass())) {
        strict.add(p.withValueDeserializer(new Strict(p.getType().getRawClass(), null)));
      }
    });
    strict.forEach(p -> builder.addOrReplaceProperty(p, true));
    return builder;
  }

  /** Checks the JSON token's type, then reads it as the usual deserializer of the type does. */
  private static final class Strict extends JsonDeserializer<Object> implements ContextualDeserializer {
    private final Class<?> type;
    private final JsonDeserializer<Object> usual;

    Strict(Class<?> type, JsonDeserializer<Object> usual) {
      this.type = type;
      this.usual = usual;
    }

    @Override
    public JsonDeserializer<?> createContextual(DeserializationContext ctxt, BeanProperty property)
        throws JsonMappingException {
      return new Strict(type, ctxt.findContextualValueDeserializer(ctxt.constructType(type), property));
    }

    @Override
    public Object deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
      JsonToken token = p.currentToken();
      boolean fits = type == Integer.class || type == Long.class ? token == JsonToken.VALUE_NUMBER_INT
          : type == Double.class ? token != null && token.isNumeric()
          : type == Boolean.class ? token != null && token.isBoolean()
          : token == JsonToken.VALUE_STRING;
      if (!fits) {
        return ctxt.handleUnexpectedToken(type, p); // a MismatchedInputException naming the wanted type
      }
      return usual.deserialize(p, ctxt);
    }
  }
}

package dev.respawn.controller;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.respawn.api.v1alpha1.Unreadable;
import dev.respawn.policy.Bounds;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/** Takes the field a failed reading points at out of the JSON tree, and says which rule its value breaks. */
final class UnreadableFields {
  private UnreadableFields() {}

  /** Removes the node the exception points at (or, failing that, its top-level field); false if none. */
  static boolean remove(ObjectNode root, JsonProcessingException e, List<Unreadable.Field> found) {
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
      found.add(new Unreadable.Field(top, "cannot be read: " + Bounds.truncateUtf8(e.getOriginalMessage(), 200)));
      return true;
    }
    found.add(new Unreadable.Field(field.toString(), rule(e, node)));
    return true;
  }

  private static String rule(JsonProcessingException e, JsonNode got) {
    String wanted = "of another type";
    if (e instanceof MismatchedInputException m && m.getTargetType() != null) {
      Class<?> t = m.getTargetType();
      if ((t == Integer.class || t == int.class) && got != null && got.isIntegralNumber() && !got.canConvertToInt()) {
        wanted = "an integer from -2147483648 to 2147483647";
      } else if (t == Integer.class || t == int.class || t == Long.class || t == long.class) {
        wanted = "an integer";
      } else if (t == Double.class || t == double.class || t == Float.class) {
        wanted = "a number";
      } else if (t == Boolean.class || t == boolean.class) {
        wanted = "true or false";
      } else if (t == String.class) {
        wanted = "a string";
      } else if (t.isEnum()) {
        wanted = "one of " + java.util.Arrays.stream(t.getEnumConstants()).map(Object::toString)
            .collect(java.util.stream.Collectors.joining(", "));
      } else if (Collection.class.isAssignableFrom(t) || t.isArray()) {
        wanted = "a list";
      } else if (Map.class.isAssignableFrom(t) || !t.isPrimitive()) {
        wanted = "an object";
      }
    }
    return "must be " + wanted + " (got " + Bounds.truncateUtf8(got.toString(), 64) + ")";
  }
}

package dev.respawn.sandbox;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.MissingNode;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The JSONPath of CRD printer columns, as far as Respawn's CRDs use it: fields ({@code .status.phase})
 * and a filter on a list ({@code .status.conditions[?(@.type=="Ready")].status}). Anything else reads as
 * missing (an empty cell), never as an error.
 */
final class JsonPathLite {
  private static final Pattern FILTER = Pattern.compile("\\[\\?\\(@\\.([A-Za-z0-9_]+)\\s*==\\s*[\"']([^\"']*)[\"']\\)\\]");

  /** One step: a field, or a filter keeping the list elements whose field equals a value. */
  private record Step(String field, String filterField, String filterValue) {}

  private final List<Step> steps;

  private JsonPathLite(List<Step> steps) {
    this.steps = steps;
  }

  static JsonPathLite of(String path) {
    List<Step> steps = new ArrayList<>();
    String rest = path.trim();
    if (rest.startsWith("{") && rest.endsWith("}")) {
      rest = rest.substring(1, rest.length() - 1);
    }
    while (!rest.isEmpty()) {
      if (rest.startsWith(".")) {
        int end = 1;
        while (end < rest.length() && rest.charAt(end) != '.' && rest.charAt(end) != '[') {
          end++;
        }
        steps.add(new Step(rest.substring(1, end), null, null));
        rest = rest.substring(end);
      } else {
        Matcher m = FILTER.matcher(rest);
        if (!m.lookingAt()) {
          return new JsonPathLite(null);
        }
        steps.add(new Step(null, m.group(1), m.group(2)));
        rest = rest.substring(m.end());
      }
    }
    return new JsonPathLite(steps);
  }

  JsonNode read(JsonNode root) {
    if (steps == null) {
      return MissingNode.getInstance();
    }
    JsonNode node = root;
    for (Step s : steps) {
      if (s.field() != null) {
        node = node.path(s.field());
      } else {
        JsonNode found = MissingNode.getInstance();
        for (JsonNode element : node) {
          if (s.filterValue().equals(element.path(s.filterField()).asText(null))) {
            found = element;
            break;
          }
        }
        node = found;
      }
    }
    return node;
  }
}

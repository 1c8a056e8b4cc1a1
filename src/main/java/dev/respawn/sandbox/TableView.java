package dev.respawn.sandbox;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.respawn.api.v1alpha1.Timestamps;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceColumnDefinition;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * Server-side printing, as kubectl asks for it ({@code Accept: application/json;as=Table;v=v1;g=meta.k8s.io}):
 * a list or one object as a meta.k8s.io/v1 Table. Respawn's resources get their CRD's printer columns
 * (a date column as an age, like a real API server); pods and Leases the columns kubectl shows for them
 * on a cluster; anything else NAME and AGE.
 */
final class TableView {
  static final String MEDIA_TYPE = "application/json;as=Table;v=v1;g=meta.k8s.io";
  private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

  /** One column: its definition and how a cell is taken from an object. */
  record Column(String name, String type, String format, int priority, Function<JsonNode, JsonNode> cell) {}

  private final ApiDiscovery discovery;
  private final InstantSource clock;

  TableView(ApiDiscovery discovery, InstantSource clock) {
    this.discovery = discovery;
    this.clock = clock;
  }

  /** True when the request asks for a Table. */
  static boolean wanted(String accept) {
    return accept != null && accept.contains("as=Table");
  }

  /** The Table of a list (its items) or of one object. */
  ObjectNode table(ResourcePath path, JsonNode body, boolean withDefinitions) {
    List<Column> columns = columns(path);
    ObjectNode table = JSON.objectNode().put("kind", "Table").put("apiVersion", "meta.k8s.io/v1");
    ObjectNode metadata = table.putObject("metadata");
    if (body.path("metadata").has("resourceVersion")) {
      metadata.put("resourceVersion", body.path("metadata").path("resourceVersion").asText());
    }
    ArrayNode definitions = table.putArray("columnDefinitions");
    if (withDefinitions) {
      for (Column c : columns) {
        definitions.addObject().put("name", c.name()).put("type", c.type()).put("format", c.format())
            .put("description", "").put("priority", c.priority());
      }
    }
    ArrayNode rows = table.putArray("rows");
    List<JsonNode> items = new ArrayList<>();
    if (body.has("items") || body.path("kind").asText().endsWith("List")) {
      body.path("items").forEach(items::add);
      // a real API server lists in key order
      items.sort(java.util.Comparator.comparing((JsonNode i) -> i.path("metadata").path("namespace").asText())
          .thenComparing(i -> i.path("metadata").path("name").asText()));
    } else {
      items.add(body);
    }
    for (JsonNode item : items) {
      ObjectNode row = rows.addObject();
      ArrayNode cells = row.putArray("cells");
      columns.forEach(c -> cells.add(c.cell().apply(item)));
      row.putObject("object").put("kind", "PartialObjectMetadata").put("apiVersion", "meta.k8s.io/v1")
          .set("metadata", item.path("metadata"));
    }
    return table;
  }

  private List<Column> columns(ResourcePath path) {
    List<Column> columns = new ArrayList<>();
    columns.add(new Column("Name", "string", "name", 0, o -> o.path("metadata").path("name")));
    var crd = discovery.crd(path.group(), path.resource());
    if (crd.isPresent()) {
      for (var version : crd.get().getSpec().getVersions()) {
        if (!version.getName().equals(path.version()) || version.getAdditionalPrinterColumns() == null) {
          continue;
        }
        for (CustomResourceColumnDefinition c : version.getAdditionalPrinterColumns()) {
          JsonPathLite jsonPath = JsonPathLite.of(c.getJsonPath());
          boolean date = "date".equals(c.getType());
          columns.add(new Column(c.getName(), date ? "string" : c.getType(), c.getFormat() == null ? "" : c.getFormat(),
              c.getPriority() == null ? 0 : c.getPriority(), o -> {
                JsonNode v = jsonPath.read(o);
                return date && !v.isMissingNode() && !v.isNull() ? JSON.textNode(age(v.asText())) : v.isMissingNode()
                    ? JSON.nullNode() : v;
              }));
        }
      }
      return columns;
    }
    if (path.group().isEmpty() && path.resource().equals("pods")) {
      columns.add(new Column("Ready", "string", "", 0, TableView::podReady));
      columns.add(new Column("Status", "string", "", 0, TableView::podStatus));
      columns.add(new Column("Restarts", "string", "", 0, o -> JSON.textNode(Integer.toString(restarts(o)))));
    }
    if (path.group().isEmpty() && path.resource().equals("events")) {
      columns.clear();
      columns.add(new Column("Last Seen", "string", "", 0, o -> JSON.textNode(age(o.path("lastTimestamp").asText()))));
      columns.add(new Column("Type", "string", "", 0, o -> o.path("type")));
      columns.add(new Column("Reason", "string", "", 0, o -> o.path("reason")));
      columns.add(new Column("Object", "string", "", 0, o -> JSON.textNode(o.path("involvedObject").path("kind")
          .asText().toLowerCase(java.util.Locale.ROOT) + "/" + o.path("involvedObject").path("name").asText())));
      columns.add(new Column("Message", "string", "", 0, o -> o.path("message")));
      return columns;
    }
    if (path.resource().equals("leases")) {
      columns.add(new Column("Holder", "string", "", 0, o -> o.path("spec").path("holderIdentity")));
    }
    columns.add(new Column("Age", "string", "", 0, o -> JSON.textNode(age(o.path("metadata")
        .path("creationTimestamp").asText()))));
    return columns;
  }

  private static JsonNode podReady(JsonNode pod) {
    int total = pod.path("spec").path("containers").size();
    int ready = 0;
    for (JsonNode s : pod.path("status").path("containerStatuses")) {
      ready += s.path("ready").asBoolean() ? 1 : 0;
    }
    return JSON.textNode(ready + "/" + total);
  }

  private static JsonNode podStatus(JsonNode pod) {
    for (JsonNode s : pod.path("status").path("containerStatuses")) {
      for (String state : List.of("waiting", "terminated")) {
        String reason = s.path("state").path(state).path("reason").asText("");
        if (!reason.isEmpty()) {
          return JSON.textNode(reason);
        }
      }
    }
    String reason = pod.path("status").path("reason").asText("");
    return JSON.textNode(!reason.isEmpty() ? reason : pod.path("status").path("phase").asText("Pending"));
  }

  private static int restarts(JsonNode pod) {
    int n = 0;
    for (JsonNode s : pod.path("status").path("containerStatuses")) {
      n += s.path("restartCount").asInt();
    }
    return n;
  }

  /** kubectl's short human durations: 45s, 3m20s, 15m, 5h3m, 2d4h, 30d. */
  String age(String timestamp) {
    Instant t = Timestamps.parse(timestamp);
    if (t == null) {
      return "<unknown>";
    }
    Duration d = Duration.between(t, clock.instant());
    long s = Math.max(0, d.toSeconds());
    if (s < 120) {
      return s + "s";
    }
    long m = s / 60;
    if (m < 10) {
      return m + "m" + (s % 60 == 0 ? "" : s % 60 + "s");
    }
    if (m < 180) {
      return m + "m";
    }
    long h = m / 60;
    if (h < 8) {
      return h + "h" + (m % 60 == 0 ? "" : m % 60 + "m");
    }
    if (h < 48) {
      return h + "h";
    }
    return h < 192 ? h / 24 + "d" + (h % 24 == 0 ? "" : h % 24 + "h") : h / 24 + "d";
  }

  static String json(ObjectMapper mapper, JsonNode node) {
    try {
      return mapper.writeValueAsString(node);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }
}

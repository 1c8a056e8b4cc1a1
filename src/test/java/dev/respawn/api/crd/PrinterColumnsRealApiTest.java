package dev.respawn.api.crd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.StreamSupport;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;

/** Printer columns, as kubectl gets them (server-side Table). */
class PrinterColumnsRealApiTest extends RealApiServerFixture {
  @Test
  void policyTable() throws Exception {
    String name = uniqueName("table");
    create(POLICY, name, "{restartLimit: {maxRestarts: 10, window: 1h}}");
    GenericKubernetesResource current =
        client.genericKubernetesResources(KINDS.get(POLICY)).inNamespace(NAMESPACE).withName(name).get();
    current.setAdditionalProperty("status", Map.of("observedGeneration", 1, "instances", 0,
        "conditions", List.of(Map.of("type", "Accepted", "status", "True", "reason", "Valid", "message", "",
            "lastTransitionTime", Instant.now().truncatedTo(ChronoUnit.SECONDS).toString()))));
    client.genericKubernetesResources(KINDS.get(POLICY)).inNamespace(NAMESPACE).resource(current).updateStatus();

    JsonNode table = table("agentrestartpolicies");
    assertThat(columnNames(table)).containsExactly(
        "NAME", "TYPE", "MAX-RETRIES", "INITIAL", "MAX-DELAY", "THRESHOLD", "ACCEPTED", "AGE");
    Map<String, JsonNode> row = row(table, name);
    SoftAssertions soft = new SoftAssertions();
    soft.assertThat(row.get("TYPE").asText()).as("TYPE").isEqualTo("Exponential");
    soft.assertThat(row.get("MAX-RETRIES").asInt(-1)).as("MAX-RETRIES").isEqualTo(3);
    soft.assertThat(row.get("INITIAL").asText()).as("INITIAL").isEqualTo("2s");
    soft.assertThat(row.get("MAX-DELAY").asText()).as("MAX-DELAY").isEqualTo("120s");
    soft.assertThat(row.get("THRESHOLD").asInt(-1)).as("THRESHOLD").isEqualTo(5);
    soft.assertThat(row.get("ACCEPTED").asText()).as("ACCEPTED").isEqualTo("True");
    soft.assertThat(row.get("AGE").asText()).as("AGE").isNotBlank().doesNotContain("<");
    soft.assertAll();
  }

  @Test
  void instanceTable() throws Exception {
    String name = uniqueName("table");
    create(INSTANCE, name, "{" + MINIMAL_TEMPLATE + "}");
    Instant next = Instant.now().plus(Duration.ofMinutes(5)).truncatedTo(ChronoUnit.SECONDS);
    GenericKubernetesResource current =
        client.genericKubernetesResources(KINDS.get(INSTANCE)).inNamespace(NAMESPACE).withName(name).get();
    ObjectNode status = JSON.createObjectNode();
    status.put("phase", "Backoff").put("run", 4).put("restarts", 3).put("attempt", 2)
        .put("nextRestartAt", next.toString());
    status.putObject("circuitBreaker").put("state", "Closed").put("failureCount", 2);
    status.putObject("heartbeat").put("verdict", "Healthy");
    current.setAdditionalProperty("status", JSON.convertValue(status, Map.class));
    client.genericKubernetesResources(KINDS.get(INSTANCE)).inNamespace(NAMESPACE).resource(current).updateStatus();

    JsonNode table = table("agentinstances");
    assertThat(columnNames(table)).containsExactly(
        "NAME", "PHASE", "RESTARTS", "ATTEMPT", "CIRCUIT", "HEARTBEAT", "NEXT-RESTART", "AGE");
    Map<String, JsonNode> row = row(table, name);
    SoftAssertions soft = new SoftAssertions();
    soft.assertThat(row.get("PHASE").asText()).as("PHASE").isEqualTo("Backoff");
    soft.assertThat(row.get("RESTARTS").asInt(-1)).as("RESTARTS").isEqualTo(3);
    soft.assertThat(row.get("ATTEMPT").asInt(-1)).as("ATTEMPT").isEqualTo(2);
    soft.assertThat(row.get("CIRCUIT").asText()).as("CIRCUIT").isEqualTo("Closed");
    soft.assertThat(row.get("HEARTBEAT").asText()).as("HEARTBEAT").isEqualTo("Healthy");
    // A Backoff instance's next restart is in the future; the column must show it, not "<invalid>"
    // (what a "date" column shows for a future timestamp).
    soft.assertThat(row.get("NEXT-RESTART").asText())
        .as("NEXT-RESTART for nextRestartAt=%s (5 minutes from now): a printer column of type \"date\" shows the"
            + " time since a timestamp, \"<invalid>\" for a future one; the column needs another type (string)", next)
        .isNotBlank().doesNotContain("<invalid>").doesNotContain("<unknown>");
    soft.assertThat(row.get("AGE").asText()).as("AGE").isNotBlank().doesNotContain("<");
    soft.assertAll();
  }

  static JsonNode table(String plural) throws Exception {
    JsonNode table = httpGet("/apis/" + GROUP + "/" + VERSION + "/namespaces/" + NAMESPACE + "/" + plural
        + "?labelSelector=" + RUN_LABEL + "%3D" + run, TABLE);
    assertThat(table.path("kind").asText()).as("%s served as a Table", plural).isEqualTo("Table");
    return table;
  }

  static List<String> columnNames(JsonNode table) {
    return StreamSupport.stream(table.path("columnDefinitions").spliterator(), false)
        .map(c -> c.path("name").asText().toUpperCase(Locale.ROOT)).collect(Collectors.toList());
  }

  /** The row's cells by column name. */
  static Map<String, JsonNode> row(JsonNode table, String name) {
    List<String> columns = columnNames(table);
    for (JsonNode row : table.path("rows")) {
      if (name.equals(row.path("cells").path(0).asText())) {
        Map<String, JsonNode> cells = new LinkedHashMap<>();
        for (int i = 0; i < columns.size(); i++) {
          cells.put(columns.get(i), row.path("cells").path(i));
        }
        return cells;
      }
    }
    return fail("no row for %s in %s", name, table.path("rows"));
  }
}

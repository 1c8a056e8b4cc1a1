package dev.respawn.api.crd;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** What kubectl shows: printer columns in the contract's order, and a description on every property. */
class CrdPrinterColumnsAndDescriptionsTest extends CrdSchemaFixture {
  static Stream<Arguments> printerColumns() {
    return Stream.of(
        Arguments.of(POLICY, List.of(
            List.of("TYPE", ".spec.backoff.type", "string"),
            List.of("MAX-RETRIES", ".spec.maxRetries", "integer"),
            List.of("INITIAL", ".spec.backoff.initialDelay", "string"),
            List.of("MAX-DELAY", ".spec.backoff.maxDelay", "string"),
            List.of("THRESHOLD", ".spec.circuitBreaker.failureThreshold", "integer"),
            List.of("ACCEPTED", ".status.conditions[?(@.type==\"Accepted\")].status", "string"),
            List.of("AGE", ".metadata.creationTimestamp", "date"))),
        Arguments.of(INSTANCE, List.of(
            List.of("PHASE", ".status.phase", "string"),
            List.of("RESTARTS", ".status.restarts", "integer"),
            List.of("ATTEMPT", ".status.attempt", "integer"),
            List.of("CIRCUIT", ".status.circuitBreaker.state", "string"),
            List.of("HEARTBEAT", ".status.heartbeat.verdict", "string"),
            // nextRestartAt is normally in the future; a "date" column prints the time SINCE a
            // timestamp, which the API server renders as "<invalid>" for a future one.
            List.of("NEXT-RESTART", ".status.nextRestartAt", "string"),
            List.of("AGE", ".metadata.creationTimestamp", "date"))));
  }

  @ParameterizedTest(name = "{0}: printer columns")
  @MethodSource("printerColumns")
  void printerColumnsInContractOrder(String crd, List<List<String>> expected) {
    JsonNode columns = version(crd).path("additionalPrinterColumns");
    List<String> names = StreamSupport.stream(columns.spliterator(), false)
        .map(c -> c.path("name").asText()).collect(Collectors.toList());
    assertThat(names).as("%s printer column names, in order", crd)
        .containsExactlyElementsOf(expected.stream().map(c -> c.get(0)).collect(Collectors.toList()));
    SoftAssertions soft = new SoftAssertions();
    for (int i = 0; i < expected.size(); i++) {
      JsonNode column = columns.get(i);
      String name = expected.get(i).get(0);
      soft.assertThat(column.path("jsonPath").asText()).as("%s jsonPath", name).isEqualTo(expected.get(i).get(1));
      soft.assertThat(column.path("type").asText())
          .as("%s type%s", name, name.equals("NEXT-RESTART")
              ? " (a \"date\" column prints the time since the timestamp: the API server shows a future"
                + " nextRestartAt, the normal case in phase Backoff, as <invalid>)" : "")
          .isEqualTo(expected.get(i).get(2));
      soft.assertThat(column.path("priority").asInt(0)).as("%s priority (shown by default)", name).isZero();
      String jsonPath = column.path("jsonPath").asText();
      if (!jsonPath.startsWith(".metadata.")) {
        // .status.conditions[?(@.type=="Accepted")].status -> status.conditions[].status
        String path = jsonPath.substring(1).replaceAll("\\[\\?\\(.*?\\)\\]", "[]");
        JsonNode field = schema(crd, path);
        String columnType = column.path("type").asText();
        soft.assertThat(field.path("type").asText()).as("%s: schema type of %s", name, path)
            .isEqualTo(columnType.equals("date") ? "string" : columnType);
      }
    }
    soft.assertAll();
  }

  @ParameterizedTest(name = "{0}: every property has a description")
  @ValueSource(strings = {POLICY, INSTANCE})
  void everyPropertyHasADescription(String crd) {
    JsonNode root = root(crd);
    assertThat(root.path("description").asText("")).as("%s: root description", crd).isNotBlank();
    List<String> missing = new ArrayList<>();
    int[] seen = {0};
    root.path("properties").fields().forEachRemaining(e -> {
      if (e.getValue().path("description").asText("").isBlank()) {
        missing.add(e.getKey());
      }
      seen[0]++;
      walk(e.getValue(), e.getKey(), (path, schema) -> {
        seen[0]++;
        if (schema.path("description").asText("").isBlank()) {
          missing.add(path);
        }
      });
    });
    assertThat(seen[0]).as("%s: properties walked", crd).isGreaterThan(10);
    assertThat(missing).as("%s: properties without a description", crd).isEmpty();
  }

  @Test
  void templateIsAPodTemplateSpecWithADescription() {
    JsonNode template = schema(INSTANCE, "spec.template");
    assertThat(template.path("description").asText("")).isNotBlank();
    assertThat(template.path("type").asText()).isEqualTo("object");
    assertThat(fieldNames(template.path("properties"))).contains("metadata", "spec");
    assertThat(fieldNames(schema(INSTANCE, "spec.template.spec").path("properties")))
        .contains("containers", "restartPolicy", "volumes");
    assertThat(schema(INSTANCE, "spec.template.spec.containers[]").path("properties").has("image")).isTrue();
  }
}

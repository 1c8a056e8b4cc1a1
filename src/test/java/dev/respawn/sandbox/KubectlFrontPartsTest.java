package dev.respawn.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The pure parts of the sandbox's kubectl front: paths, JSONPath of printer columns, merge patches, ages. */
class KubectlFrontPartsTest {
  static JsonNode json(String text) {
    return Serialization.unmarshal(text, JsonNode.class);
  }

  @Test
  void pathsAreTakenApart() {
    assertThat(ResourcePath.parse("/api/v1/namespaces/agents/pods/coder-1/status")).contains(
        new ResourcePath("", "v1", "agents", "pods", "coder-1", "status"));
    assertThat(ResourcePath.parse("/apis/respawn.dev/v1alpha1/namespaces/agents/agentinstances")).contains(
        new ResourcePath("respawn.dev", "v1alpha1", "agents", "agentinstances", null, null));
    assertThat(ResourcePath.parse("/apis/respawn.dev/v1alpha1/agentinstances")).contains(
        new ResourcePath("respawn.dev", "v1alpha1", null, "agentinstances", null, null));
    assertThat(ResourcePath.parse("/api/v1/namespaces/agents")).contains(
        new ResourcePath("", "v1", null, "namespaces", "agents", null));
    assertThat(ResourcePath.parse("/version")).isEmpty();
    assertThat(ResourcePath.parse("/apis/respawn.dev")).isEmpty();
  }

  @Test
  void printerColumnPathsReadFieldsAndFilters() {
    JsonNode policy = json("{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\"},"
        + "{\"type\":\"Accepted\",\"status\":\"True\"}]},\"spec\":{\"backoff\":{\"type\":\"Linear\"}}}");
    assertThat(JsonPathLite.of(".spec.backoff.type").read(policy).asText()).isEqualTo("Linear");
    assertThat(JsonPathLite.of(".status.conditions[?(@.type==\"Accepted\")].status").read(policy).asText())
        .isEqualTo("True");
    assertThat(JsonPathLite.of("{.status.conditions[?(@.type=='Ready')].status}").read(policy).asText())
        .isEqualTo("False");
    assertThat(JsonPathLite.of(".status.conditions[?(@.type==\"Gone\")].status").read(policy).isMissingNode())
        .isTrue();
    assertThat(JsonPathLite.of(".spec.maxRetries").read(policy).isMissingNode()).isTrue();
    assertThat(JsonPathLite.of(".status.conditions[0].status").read(policy).isMissingNode())
        .as("what it does not understand reads as missing").isTrue();
  }

  @Test
  void mergePatchesFollowRfc7386() {
    JsonNode target = json("{\"metadata\":{\"annotations\":{\"a\":\"1\",\"b\":\"2\"},\"labels\":{\"x\":\"y\"}},"
        + "\"spec\":{\"list\":[1,2,3],\"keep\":true}}");
    JsonNode merged = MergePatch.merge(target, json("{\"metadata\":{\"annotations\":{\"a\":null,\"c\":\"3\"}},"
        + "\"spec\":{\"list\":[9],\"$patch\":\"replace\"}}"));
    assertThat(merged.path("metadata").path("annotations")).isEqualTo(json("{\"b\":\"2\",\"c\":\"3\"}"));
    assertThat(merged.path("metadata").path("labels")).isEqualTo(json("{\"x\":\"y\"}"));
    assertThat(merged.path("spec")).isEqualTo(json("{\"list\":[9],\"keep\":true}"));
    assertThat(MergePatch.merge(json("{\"a\":1}"), json("[1]"))).isEqualTo(json("[1]"));
    assertThat(MergePatch.handles("application/merge-patch+json")).isTrue();
    assertThat(MergePatch.handles("application/strategic-merge-patch+json")).isTrue();
    assertThat(MergePatch.handles("application/json-patch+json")).isFalse();
  }

  @Test
  void agesReadAsKubectlPrintsThem() {
    Instant now = Instant.parse("2026-11-24T12:00:00Z");
    TableView t = new TableView(new ApiDiscovery(List.of()), InstantSource.fixed(now));
    assertThat(List.of(45, 200, 900, 5 * 3600 + 180, 30 * 3600, 3 * 86400 + 7200, 40 * 86400).stream()
        .map(s -> t.age(now.minusSeconds(s).toString())).toList())
        .containsExactly("45s", "3m20s", "15m", "5h3m", "30h", "3d2h", "40d");
    assertThat(t.age("not a time")).isEqualTo("<unknown>");
  }
}

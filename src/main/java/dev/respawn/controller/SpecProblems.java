package dev.respawn.controller;

import com.fasterxml.jackson.databind.JsonNode;
import dev.respawn.policy.Violation;
import io.fabric8.kubernetes.api.model.HasMetadata;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * What {@link TolerantResources} had to leave out of an object to read it, by the object's uid and
 * resourceVersion (copies of the same version, such as JOSDK's clones, share it). An object with
 * problems is refused: it says so in status and Events and is not acted on.
 */
final class SpecProblems {
  private static final int MAX_ENTRIES = 10_000;
  private final Map<String, List<Violation>> byVersion = new LinkedHashMap<>(16, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, List<Violation>> eldest) {
      return size() > MAX_ENTRIES;
    }
  };

  /** The fields left out of this version of the object; empty when it was read whole. */
  synchronized List<Violation> of(HasMetadata object) {
    if (object == null || object.getMetadata() == null) {
      return List.of();
    }
    return byVersion.getOrDefault(key(object.getMetadata().getUid(), object.getMetadata().getResourceVersion()),
        List.of());
  }

  /** "field: rule; field: rule", or "" when there is none. */
  String describe(HasMetadata object) {
    return of(object).stream().map(Violation::toString).collect(Collectors.joining("; "));
  }

  synchronized void record(JsonNode object, List<Violation> found) {
    if (found.isEmpty()) {
      return;
    }
    JsonNode metadata = object.get("metadata");
    String uid = metadata == null ? null : metadata.path("uid").asText(null);
    String version = metadata == null ? null : metadata.path("resourceVersion").asText(null);
    if (uid != null) {
      byVersion.put(key(uid, version), List.copyOf(found));
    }
  }

  synchronized void forget(HasMetadata object) {
    byVersion.remove(key(object.getMetadata().getUid(), object.getMetadata().getResourceVersion()));
  }

  private static String key(String uid, String version) {
    return uid + "@" + version;
  }
}

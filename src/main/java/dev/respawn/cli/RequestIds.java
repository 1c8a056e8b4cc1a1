package dev.respawn.cli;

import dev.respawn.api.v1alpha1.AgentInstance;
import java.time.InstantSource;
import java.util.Map;

/** Request ids of the §6 annotations: {@code cli-<epoch millis>}, never the id the instance already carries. */
final class RequestIds {
  private RequestIds() {}

  static String next(InstantSource clock, AgentInstance instance, String annotation) {
    String id = "cli-" + clock.millis();
    Map<String, String> annotations = instance.getMetadata().getAnnotations();
    String current = annotations == null ? null : annotations.get(annotation);
    String candidate = id;
    for (int n = 2; candidate.equals(current); n++) {
      candidate = id + "-" + n;
    }
    return candidate;
  }
}

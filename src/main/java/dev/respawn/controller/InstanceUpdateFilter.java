package dev.respawn.controller;

import dev.respawn.api.v1alpha1.AgentInstance;
import io.javaoperatorsdk.operator.processing.event.source.filter.OnUpdateFilter;
import java.util.Map;
import java.util.Objects;

/**
 * Which AgentInstance updates trigger a reconcile: a spec change (generation), an operator-action
 * annotation, or a deletion. The operator's own status writes do not.
 */
public class InstanceUpdateFilter implements OnUpdateFilter<AgentInstance> {
  @Override
  public boolean accept(AgentInstance newer, AgentInstance older) {
    return !Objects.equals(newer.getMetadata().getGeneration(), older.getMetadata().getGeneration())
        || newer.getMetadata().getDeletionTimestamp() != null
        || !Objects.equals(action(newer), action(older));
  }

  private static String action(AgentInstance i) {
    Map<String, String> a = i.getMetadata().getAnnotations();
    return a == null ? "" : a.get(AgentInstance.RESTART_ANNOTATION) + "|" + a.get(AgentInstance.RESUME_ANNOTATION)
        + "|" + a.get(AgentInstance.RESTART_REASON_ANNOTATION);
  }
}

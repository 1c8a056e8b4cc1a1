package dev.respawn.controller;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.OperatorRequest;
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
    if (a == null) {
      return "";
    }
    StringBuilder key = new StringBuilder();
    for (OperatorRequest kind : OperatorRequest.values()) {
      key.append(a.get(kind.annotation())).append('|').append(kind.reasonAnnotation().map(a::get).orElse(""))
          .append('|');
    }
    return key.toString();
  }
}

package dev.respawn.sandbox;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.EventList;
import io.fabric8.kubernetes.api.model.EventListBuilder;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The core/v1 view of Events that {@code kubectl describe} and {@code kubectl get events} read. On a real
 * API server events.k8s.io/v1 and core/v1 are two views of one store; the mock keeps them apart, so the
 * operator's events.k8s.io/v1 Events are converted here, and the field selectors kubectl sends
 * ({@code involvedObject.name=...,involvedObject.uid=...}, {@code type}, {@code reason}) are applied, which
 * the mock does not do.
 */
final class CoreEvents {
  private final KubernetesClient mock;

  CoreEvents(KubernetesClient mock) {
    this.mock = mock;
  }

  EventList list(String namespace, String fieldSelector) {
    Map<String, String> wanted = new LinkedHashMap<>();
    Map<String, String> unwanted = new LinkedHashMap<>();
    if (fieldSelector != null && !fieldSelector.isBlank()) {
      for (String term : fieldSelector.split(",")) {
        boolean not = term.contains("!=");
        String[] kv = term.split(not ? "!=" : "==?", 2);
        if (kv.length == 2) {
          (not ? unwanted : wanted).put(kv[0].trim(), kv[1].trim());
        }
      }
    }
    List<Event> events = new ArrayList<>();
    var v1 = namespace == null ? mock.events().v1().events().inAnyNamespace() : mock.events().v1().events()
        .inNamespace(namespace);
    var core = namespace == null ? mock.v1().events().inAnyNamespace() : mock.v1().events().inNamespace(namespace);
    java.util.Set<String> seen = new java.util.HashSet<>();
    java.util.stream.Stream.concat(v1.list().getItems().stream().map(CoreEvents::core), core.list().getItems().stream())
        .filter(e -> seen.add(e.getMetadata().getNamespace() + "/" + e.getMetadata().getName())).forEach(events::add);
    List<Event> kept = events.stream().filter(e -> wanted.entrySet().stream().allMatch(w -> Objects.equals(
        field(e, w.getKey()), w.getValue())) && unwanted.entrySet().stream().noneMatch(u -> Objects.equals(
        field(e, u.getKey()), u.getValue()))).toList();
    return new EventListBuilder().withItems(kept).withNewMetadata().endMetadata().build();
  }

  private static String field(Event e, String name) {
    ObjectReference o = e.getInvolvedObject() == null ? new ObjectReference() : e.getInvolvedObject();
    return switch (name) {
      case "involvedObject.name" -> o.getName();
      case "involvedObject.namespace" -> o.getNamespace();
      case "involvedObject.kind" -> o.getKind();
      case "involvedObject.uid" -> o.getUid();
      case "involvedObject.apiVersion" -> o.getApiVersion();
      case "involvedObject.fieldPath" -> o.getFieldPath() == null ? "" : o.getFieldPath();
      case "involvedObject.resourceVersion" -> o.getResourceVersion();
      case "metadata.name" -> e.getMetadata().getName();
      case "metadata.namespace" -> e.getMetadata().getNamespace();
      case "type" -> e.getType();
      case "reason" -> e.getReason();
      case "source" -> e.getSource() == null ? null : e.getSource().getComponent();
      default -> null;
    };
  }

  /** An events.k8s.io/v1 Event as core/v1 shows it. */
  static Event core(io.fabric8.kubernetes.api.model.events.v1.Event e) {
    var r = e.getRegarding() == null ? new ObjectReference() : e.getRegarding();
    String first = e.getEventTime() == null ? e.getMetadata().getCreationTimestamp() : e.getEventTime().getTime();
    String last = e.getSeries() != null && e.getSeries().getLastObservedTime() != null
        ? e.getSeries().getLastObservedTime().getTime() : first;
    int count = e.getSeries() != null && e.getSeries().getCount() != null ? e.getSeries().getCount() : 1;
    return new EventBuilder().withNewMetadata().withName(e.getMetadata().getName())
        .withNamespace(e.getMetadata().getNamespace()).withUid(e.getMetadata().getUid())
        .withResourceVersion(e.getMetadata().getResourceVersion())
        .withCreationTimestamp(e.getMetadata().getCreationTimestamp()).endMetadata()
        .withInvolvedObject(r).withReason(e.getReason()).withMessage(e.getNote()).withType(e.getType())
        .withNewSource().withComponent(e.getReportingController()).endSource()
        .withFirstTimestamp(first).withLastTimestamp(last).withCount(count)
        .withReportingComponent(e.getReportingController()).withReportingInstance(e.getReportingInstance())
        .withAction(e.getAction()).build();
  }
}

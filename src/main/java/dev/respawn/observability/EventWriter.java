package dev.respawn.observability;

import dev.respawn.controller.PermanentRefusal;
import dev.respawn.policy.Bounds;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.MicroTime;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.api.model.events.v1.Event;
import io.fabric8.kubernetes.api.model.events.v1.EventBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes Events: events.k8s.io/v1 first; on a cluster that answers 404 for that API, core/v1 Events
 * from then on. Series updates are JSON merge patches (they work on every API server, the fabric8 mock
 * included; strategic merge and server-side apply do not work on the mock).
 */
final class EventWriter {
  private static final Logger LOG = LoggerFactory.getLogger(EventWriter.class);
  /** MicroTime: RFC 3339 with microseconds, UTC. */
  static final DateTimeFormatter MICRO_TIME =
      DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'").withZone(ZoneOffset.UTC);

  /** What to write for one new Event. */
  record Draft(String namespace, String name, ObjectReference regarding, ObjectReference related, String type,
      String reason, String action, String note, Instant at) {}

  private final KubernetesClient client;
  private final String reportingController;
  private final String reportingInstance;
  private final AtomicLong sequence = new AtomicLong();
  private volatile boolean coreV1;

  EventWriter(KubernetesClient client, String reportingController, String reportingInstance) {
    this.client = client;
    this.reportingController = reportingController;
    this.reportingInstance = reportingInstance;
  }

  /** True once the events.k8s.io/v1 API turned out to be missing and core/v1 Events are written instead. */
  boolean usesCoreV1() {
    return coreV1;
  }

  /** Creates the Event; returns true when it was written as a core/v1 Event. */
  boolean create(Draft d) {
    if (!coreV1) {
      try {
        client.events().v1().events().inNamespace(d.namespace()).resource(eventsV1(d)).create();
        return false;
      } catch (KubernetesClientException e) {
        if (e.getCode() != 404) {
          throw e;
        }
        client.v1().events().inNamespace(d.namespace()).resource(coreV1(d)).create();
        coreV1 = true;
        LOG.info("events.k8s.io/v1 is not served (404): writing core/v1 Events from now on");
        return true;
      }
    }
    client.v1().events().inNamespace(d.namespace()).resource(coreV1(d)).create();
    return true;
  }

  /** Sets the count and last-seen time of an existing Event (one PATCH, no read). */
  void updateSeries(String namespace, String name, boolean core, int count, Instant lastObserved) {
    Map<String, Object> series = new LinkedHashMap<>();
    series.put("count", count);
    series.put("lastObservedTime", MICRO_TIME.format(lastObserved));
    Map<String, Object> patch = new LinkedHashMap<>();
    PatchContext merge = PatchContext.of(PatchType.JSON_MERGE);
    if (core) {
      patch.put("count", count);
      patch.put("lastTimestamp", seconds(lastObserved));
      String json = client.getKubernetesSerialization().asJson(patch);
      client.v1().events().inNamespace(namespace).resource(coreRef(namespace, name)).patch(merge, json);
    } else {
      patch.put("series", series);
      String json = client.getKubernetesSerialization().asJson(patch);
      client.events().v1().events().inNamespace(namespace).resource(ref(namespace, name)).patch(merge, json);
    }
  }

  /** A new Event's name, {@code <regarding name>.<hex>}: the time in nanoseconds, made unique within this writer. */
  String name(String regardingName, Instant now) {
    long nanos = now.getEpochSecond() * 1_000_000_000L + now.getNano();
    long unique = sequence.updateAndGet(last -> Math.max(last + 1, nanos));
    String suffix = "." + Long.toHexString(unique);
    return Bounds.truncateUtf8(regardingName, KubeEventRecorder.NAME_BYTES - suffix.length()).replaceAll("[.-]+$", "") + suffix;
  }

  /**
   * No answer, or one that asks to come back (429 Too Many Requests, 5xx); a 4xx refusal stays refused (a create's
   * 409 is taken up before: the Event exists).
   */
  static boolean worthAnotherTry(RuntimeException e) {
    return e instanceof KubernetesClientException && !PermanentRefusal.is(e);
  }

  static ObjectReference reference(HasMetadata object) {
    return new ObjectReferenceBuilder().withApiVersion(object.getApiVersion()).withKind(object.getKind())
        .withNamespace(object.getMetadata().getNamespace()).withName(object.getMetadata().getName())
        .withUid(object.getMetadata().getUid()).build();
  }

  private Event eventsV1(Draft d) {
    return new EventBuilder().withNewMetadata().withName(d.name()).withNamespace(d.namespace()).endMetadata()
        .withEventTime(new MicroTime(MICRO_TIME.format(d.at())))
        .withReportingController(reportingController).withReportingInstance(reportingInstance)
        .withAction(d.action()).withReason(d.reason()).withType(d.type()).withNote(d.note())
        .withRegarding(d.regarding()).withRelated(d.related())
        .build();
  }

  private io.fabric8.kubernetes.api.model.Event coreV1(Draft d) {
    String at = seconds(d.at());
    return new io.fabric8.kubernetes.api.model.EventBuilder().withNewMetadata().withName(d.name())
        .withNamespace(d.namespace()).endMetadata()
        .withInvolvedObject(d.regarding()).withRelated(d.related())
        .withType(d.type()).withReason(d.reason()).withMessage(d.note()).withAction(d.action())
        .withNewSource().withComponent(reportingController).withHost(reportingInstance).endSource()
        .withReportingComponent(reportingController).withReportingInstance(reportingInstance)
        .withFirstTimestamp(at).withLastTimestamp(at).withCount(1)
        .build();
  }

  private static Event ref(String namespace, String name) {
    return new EventBuilder().withNewMetadata().withName(name).withNamespace(namespace).endMetadata().build();
  }

  private static io.fabric8.kubernetes.api.model.Event coreRef(String namespace, String name) {
    return new io.fabric8.kubernetes.api.model.EventBuilder().withNewMetadata().withName(name)
        .withNamespace(namespace).endMetadata().build();
  }

  private static String seconds(Instant at) {
    return at.truncatedTo(ChronoUnit.SECONDS).toString();
  }
}

package dev.respawn.observability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import dev.respawn.policy.Decision.Notice;
import dev.respawn.policy.EventReason;
import dev.respawn.testsupport.MockApi;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.events.v1.Event;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The rules of kube-apiserver's pkg/apis/core/validation/events.go (ValidateEventCreate for events.k8s.io/v1,
 * legacyValidateEvent with eventTime set, validateV1EventSeries on update), ported and applied to what
 * KubeEventRecorder stores for the worst inputs: a 253-character regarding name, a 5 kB multi-byte note, a
 * 300-character reportingInstance, and a repeat (series).
 */
class EventApiValidationTest {
  @RegisterExtension
  static final MockApi API = new MockApi();
  static final String DNS1123_SUBDOMAIN = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";

  static List<String> violations(Event e, String namespace) {
    List<String> v = new ArrayList<>();
    String name = e.getMetadata().getName();
    if (name.length() > 253 || !name.matches(DNS1123_SUBDOMAIN)) v.add("metadata.name " + name);
    if (e.getEventTime() == null) v.add("eventTime required");
    if (!List.of("Normal", "Warning").contains(e.getType())) v.add("type " + e.getType());
    if (e.getDeprecatedFirstTimestamp() != null || e.getDeprecatedLastTimestamp() != null
        || (e.getDeprecatedCount() != null && e.getDeprecatedCount() != 0) || e.getDeprecatedSource() != null
        && (e.getDeprecatedSource().getComponent() != null || e.getDeprecatedSource().getHost() != null)) {
      v.add("deprecated fields must be unset");
    }
    String rc = e.getReportingController();
    if (rc == null || !rc.matches("(" + DNS1123_SUBDOMAIN + "/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?")) {
      v.add("reportingController " + rc);
    }
    if (e.getReportingInstance() == null || e.getReportingInstance().isEmpty()
        || e.getReportingInstance().getBytes(StandardCharsets.UTF_8).length > 128) v.add("reportingInstance");
    if (e.getAction() == null || e.getAction().isEmpty() || e.getAction().length() > 128) v.add("action");
    if (e.getReason() == null || e.getReason().isEmpty() || e.getReason().length() > 128) v.add("reason");
    if (e.getNote() != null && e.getNote().getBytes(StandardCharsets.UTF_8).length > 1024) v.add("note bytes");
    if (e.getRegarding() == null || !namespace.equals(e.getRegarding().getNamespace())) v.add("regarding.namespace");
    if (e.getSeries() != null && (e.getSeries().getCount() < 2 || e.getSeries().getLastObservedTime() == null)) {
      v.add("series");
    }
    return v;
  }

  @Test
  void theWorstEventsTheRecorderWritesPassKubeApiserverValidation() {
    AgentRestartPolicy policy = new AgentRestartPolicy();
    ObjectMeta m = new ObjectMeta();
    m.setName("p" + ".a-b".repeat(63)); // 253 characters, a DNS subdomain
    m.setNamespace(MockApi.NAMESPACE);
    m.setUid("u-1");
    policy.setMetadata(m);
    assertThat(m.getName()).hasSize(253);
    KubeEventRecorder recorder = new KubeEventRecorder(API.client(), "r".repeat(300), InstantSource.system(),
        new KubeEventRecorder.Settings(Duration.ofMinutes(10), 100, 25, 10, Duration.ZERO));
    Notice n = Notice.warning(EventReason.DependencyCircuitChanged, "é€😀 termination message ".repeat(200));
    assertThat(recorder.record(policy, null, n, Instant.now())).isEqualTo(KubeEventRecorder.Outcome.CREATED);
    assertThat(recorder.record(policy, null, n, Instant.now())).isEqualTo(KubeEventRecorder.Outcome.SERIES_UPDATED);
    List<Event> events = API.client().events().v1().events().inNamespace(MockApi.NAMESPACE).list().getItems();
    assertThat(events).hasSize(1);
    assertThat(events.get(0).getSeries()).isNotNull();
    assertThat(violations(events.get(0), MockApi.NAMESPACE)).isEmpty();
  }
}

package dev.respawn.observability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import ch.qos.logback.classic.Level;
import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentInstanceSpec;
import dev.respawn.observability.KubeEventRecorder.Outcome;
import dev.respawn.observability.KubeEventRecorder.Settings;
import dev.respawn.policy.Decision.Notice;
import dev.respawn.testsupport.ManualClock;
import dev.respawn.testsupport.MockApi;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.api.model.events.v1.Event;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class KubeEventRecorderTest {
  @RegisterExtension
  static final MockApi API = new MockApi();
  static final AtomicInteger NAMESPACES = new AtomicInteger();
  static final Settings EVERY_REPEAT_WRITTEN = new Settings(Duration.ofMinutes(10), 4096, 10, Duration.ZERO);
  static final Notice FAILED = Notice.warning(dev.respawn.policy.EventReason.RestartFailed, "[RST] Restart failed for coder: exit code 1");

  final String ns = "events-" + NAMESPACES.incrementAndGet();
  final ManualClock clock = ManualClock.at("2026-11-21T10:00:00Z");
  AgentInstance coder;
  Pod pod;

  @BeforeEach
  void createObjects() {
    coder = createInstance("coder");
    pod = API.client().pods().inNamespace(ns).resource(new PodBuilder().withNewMetadata().withName("coder-3")
        .endMetadata().withNewSpec().addNewContainer().withName("agent").withImage("agent:1").endContainer()
        .endSpec().build()).create();
  }

  AgentInstance createInstance(String name) {
    return createInstance(API.client(), ns, name);
  }

  /** A minimal AgentInstance, created. */
  static AgentInstance createInstance(KubernetesClient client, String ns, String name) {
    AgentInstance ai = new AgentInstance();
    ai.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(ns).build());
    ai.setSpec(new AgentInstanceSpec());
    ai.getSpec().template = new PodTemplateSpecBuilder().withNewSpec().addNewContainer().withName("agent")
        .withImage("agent:1").endContainer().endSpec().build();
    return client.resource(ai).create();
  }

  KubeEventRecorder recorder(Settings settings) {
    return new KubeEventRecorder(API.client(), "respawn-operator-7d9f", clock, settings);
  }

  List<Event> events() {
    return API.client().events().v1().events().inNamespace(ns).list().getItems();
  }

  long eventWrites(String verb) {
    return API.requests().matching(r -> r.verb().equals(verb) && r.resource().equals("events.events.k8s.io")
        && r.path().contains("/namespaces/" + ns + "/")).size();
  }

  @Test
  void writesAnEventsV1EventRegardingTheInstanceRelatedToItsPod() {
    Outcome outcome = recorder(Settings.defaults()).record(coder, pod, FAILED);

    assertThat(outcome).isEqualTo(Outcome.CREATED);
    Event e = events().get(0);
    assertThat(events()).hasSize(1);
    assertThat(e.getMetadata().getName()).matches("coder\\.[0-9a-f]+");
    assertThat(e.getRegarding().getApiVersion()).isEqualTo("respawn.dev/v1alpha1");
    assertThat(e.getRegarding().getKind()).isEqualTo("AgentInstance");
    assertThat(e.getRegarding().getName()).isEqualTo("coder");
    assertThat(e.getRegarding().getNamespace()).isEqualTo(ns);
    assertThat(e.getRegarding().getUid()).isEqualTo(coder.getMetadata().getUid()).isNotNull();
    assertThat(e.getRelated().getKind()).isEqualTo("Pod");
    assertThat(e.getRelated().getApiVersion()).isEqualTo("v1");
    assertThat(e.getRelated().getName()).isEqualTo("coder-3");
    assertThat(e.getRelated().getUid()).isEqualTo(pod.getMetadata().getUid());
    assertThat(e.getReportingController()).isEqualTo("respawn.dev/operator");
    assertThat(e.getReportingInstance()).isEqualTo("respawn-operator-7d9f");
    assertThat(e.getAction()).isEqualTo("ObserveFailure");
    assertThat(e.getType()).isEqualTo("Warning");
    assertThat(e.getReason()).isEqualTo("RestartFailed");
    assertThat(e.getNote()).isEqualTo("[RST] Restart failed for coder: exit code 1");
    assertThat(e.getEventTime().getTime()).isEqualTo("2026-11-21T10:00:00.000000Z");
    assertThat(e.getSeries()).isNull();
  }

  @Test
  void aRepeatBumpsTheSeriesInsteadOfCreatingAnEvent() {
    KubeEventRecorder recorder = recorder(Settings.defaults());
    recorder.record(coder, pod, FAILED);
    String name = events().get(0).getMetadata().getName();

    clock.advance(Duration.ofSeconds(6));
    assertThat(recorder.record(coder, pod, FAILED)).isEqualTo(Outcome.SERIES_UPDATED);
    clock.advance(Duration.ofSeconds(6));
    assertThat(recorder.record(coder, pod, FAILED)).isEqualTo(Outcome.SERIES_UPDATED);

    assertThat(events()).singleElement().satisfies(e -> {
      assertThat(e.getMetadata().getName()).isEqualTo(name);
      assertThat(e.getSeries().getCount()).isEqualTo(3);
      assertThat(e.getSeries().getLastObservedTime().getTime()).isEqualTo("2026-11-21T10:00:12.000000Z");
      assertThat(e.getNote()).isEqualTo(FAILED.message());
    });
    assertThat(eventWrites("POST")).isEqualTo(1);
    assertThat(eventWrites("PATCH")).isEqualTo(2);
    // the series PATCH needs no read of the Event first
    assertThat(API.requests().matching(r -> r.verb().equals("GET") && r.path().endsWith("/events/" + name)))
        .isEmpty();
  }

  @Test
  void repeatsWithinTheSeriesIntervalAreCountedAndWrittenLater() {
    KubeEventRecorder recorder = recorder(Settings.defaults()); // one series PATCH per 5 s at most
    recorder.record(coder, pod, FAILED);

    assertThat(recorder.record(coder, pod, FAILED)).isEqualTo(Outcome.COALESCED);
    assertThat(recorder.record(coder, pod, FAILED)).isEqualTo(Outcome.COALESCED);
    assertThat(recorder.coalesced()).isEqualTo(2);
    assertThat(events().get(0).getSeries()).isNull();
    assertThat(eventWrites("PATCH")).isZero();

    assertThat(recorder.flush()).isEqualTo(1);
    assertThat(events().get(0).getSeries().getCount()).isEqualTo(3);
    assertThat(recorder.flush()).isZero();

    clock.advance(Duration.ofSeconds(5));
    assertThat(recorder.record(coder, pod, FAILED)).isEqualTo(Outcome.SERIES_UPDATED);
    assertThat(events()).singleElement().satisfies(e -> assertThat(e.getSeries().getCount()).isEqualTo(4));
  }

  @Test
  void aDifferentMessageReasonOrObjectIsANewEvent() {
    KubeEventRecorder recorder = recorder(EVERY_REPEAT_WRITTEN);
    AgentInstance other = createInstance("reviewer");

    assertThat(recorder.record(coder, pod, FAILED)).isEqualTo(Outcome.CREATED);
    assertThat(recorder.record(coder, pod, Notice.warning(dev.respawn.policy.EventReason.RestartFailed, "[RST] Restart failed for coder: exit 2")))
        .isEqualTo(Outcome.CREATED);
    assertThat(recorder.record(coder, pod, Notice.warning(dev.respawn.policy.EventReason.Escalated, FAILED.message()))).isEqualTo(Outcome.CREATED);
    assertThat(recorder.record(coder, pod, Notice.normal(dev.respawn.policy.EventReason.RestartFailed, FAILED.message())))
        .isEqualTo(Outcome.CREATED);
    assertThat(recorder.record(other, null, FAILED)).isEqualTo(Outcome.CREATED);

    assertThat(events()).hasSize(5);
    assertThat(events()).extracting(e -> e.getMetadata().getName()).doesNotHaveDuplicates();
    assertThat(events()).filteredOn(e -> e.getRegarding().getName().equals("reviewer")).singleElement()
        .satisfies(e -> assertThat(e.getRelated()).isNull());
    assertThat(eventWrites("PATCH")).isZero();
  }

  @Test
  void aRepeatAfterTheDedupWindowIsANewEvent() {
    KubeEventRecorder recorder = recorder(EVERY_REPEAT_WRITTEN);
    recorder.record(coder, pod, FAILED);

    clock.advance(Duration.ofMinutes(10));
    assertThat(recorder.record(coder, pod, FAILED)).isEqualTo(Outcome.SERIES_UPDATED);
    clock.advance(Duration.ofMinutes(10).plusSeconds(1));
    assertThat(recorder.record(coder, pod, FAILED)).isEqualTo(Outcome.CREATED);

    assertThat(events()).hasSize(2);
  }

  /**
   * api.md §8 "one Event per decision": the defaults tell a quick run of decisions (25 at once, as client-go's
   * recorder allows) and then 10 a minute, so a crash loop cannot flood the API server.
   */
  @Test
  void theDefaultsTellAQuickRunOfDecisionsAndThenTenAMinute() {
    KubeEventRecorder recorder = recorder(Settings.defaults());
    List<Outcome> outcomes = new java.util.ArrayList<>();
    for (int i = 1; i <= 26; i++) {
      outcomes.add(recorder.record(coder, pod, Notice.warning(dev.respawn.policy.EventReason.RestartFailed,
          "exit code " + i)));
    }
    assertThat(outcomes.subList(0, 25)).containsOnly(Outcome.CREATED);
    assertThat(outcomes.get(25)).isEqualTo(Outcome.DROPPED);
    clock.advance(Duration.ofSeconds(6));
    assertThat(recorder.record(coder, pod, Notice.warning(dev.respawn.policy.EventReason.RestartFailed, "after 6 s")))
        .isEqualTo(Outcome.CREATED);
    assertThat(recorder.record(coder, pod, Notice.warning(dev.respawn.policy.EventReason.RestartFailed, "at once")))
        .isEqualTo(Outcome.DROPPED);
  }

  @Test
  void newEventsBeyondThePerObjectRateAreDroppedAndCounted() {
    KubeEventRecorder recorder = recorder(new Settings(Duration.ofMinutes(10), 4096, 3, Duration.ZERO));
    AgentInstance other = createInstance("quiet");

    List<Outcome> outcomes = new java.util.ArrayList<>();
    for (int i = 1; i <= 5; i++) {
      outcomes.add(recorder.record(coder, pod, Notice.warning(dev.respawn.policy.EventReason.RestartFailed, "exit code " + i)));
    }

    assertThat(outcomes).containsExactly(Outcome.CREATED, Outcome.CREATED, Outcome.CREATED, Outcome.DROPPED,
        Outcome.DROPPED);
    assertThat(recorder.dropped()).isEqualTo(2);
    assertThat(events()).hasSize(3);
    // repeats of existing Events are not new Events: still counted
    assertThat(recorder.record(coder, pod, Notice.warning(dev.respawn.policy.EventReason.RestartFailed, "exit code 1")))
        .isEqualTo(Outcome.SERIES_UPDATED);
    // the limit is per object
    assertThat(recorder.record(other, null, FAILED)).isEqualTo(Outcome.CREATED);
    // 3 per minute: one more after 20 s
    clock.advance(Duration.ofSeconds(20));
    assertThat(recorder.record(coder, pod, Notice.warning(dev.respawn.policy.EventReason.RestartFailed, "exit code 6"))).isEqualTo(Outcome.CREATED);
    assertThat(recorder.record(coder, pod, Notice.warning(dev.respawn.policy.EventReason.RestartFailed, "exit code 7"))).isEqualTo(Outcome.DROPPED);
    assertThat(recorder.dropped()).isEqualTo(3);
    // the Escalated Event ends a lifecycle and carries what to do next: never dropped
    assertThat(recorder.record(coder, pod, Notice.warning(dev.respawn.policy.EventReason.Escalated,
        "Escalated (retries_exhausted)"))).isEqualTo(Outcome.CREATED);
    assertThat(recorder.dropped()).isEqualTo(3);
  }

  @Test
  void theDedupCacheIsBounded() {
    KubeEventRecorder recorder = recorder(new Settings(Duration.ofMinutes(10), 2, 100, Duration.ZERO));
    recorder.record(coder, pod, Notice.normal(dev.respawn.policy.EventReason.RestartScheduled, "a"));
    recorder.record(coder, pod, Notice.normal(dev.respawn.policy.EventReason.RestartScheduled, "b"));
    assertThat(recorder.record(coder, pod, Notice.normal(dev.respawn.policy.EventReason.RestartScheduled, "a"))).isEqualTo(Outcome.SERIES_UPDATED);

    recorder.record(coder, pod, Notice.normal(dev.respawn.policy.EventReason.RestartScheduled, "c")); // evicts b, the least recently used

    assertThat(recorder.record(coder, pod, Notice.normal(dev.respawn.policy.EventReason.RestartScheduled, "a"))).isEqualTo(Outcome.SERIES_UPDATED);
    assertThat(recorder.record(coder, pod, Notice.normal(dev.respawn.policy.EventReason.RestartScheduled, "b"))).isEqualTo(Outcome.CREATED);
  }

  @Test
  void cutsTheNoteAt1KiBOnACharacterBoundary() {
    String message = "a" + "é".repeat(600); // 1,201 bytes; byte 1,024 is the first half of an é

    recorder(Settings.defaults()).record(coder, pod, Notice.warning(dev.respawn.policy.EventReason.Escalated, message));

    String note = events().get(0).getNote();
    assertThat(note).isEqualTo("a" + "é".repeat(511));
    assertThat(note.getBytes(StandardCharsets.UTF_8)).hasSize(1023);
  }

  @Test
  void aSeriesOfAnEventDeletedOnTheServerStartsANewEvent() {
    KubeEventRecorder recorder = recorder(EVERY_REPEAT_WRITTEN);
    recorder.record(coder, pod, FAILED);
    API.client().events().v1().events().inNamespace(ns).delete();
    assertThat(events()).isEmpty();

    assertThat(recorder.record(coder, pod, FAILED)).isEqualTo(Outcome.CREATED);

    assertThat(events()).singleElement().satisfies(e -> assertThat(e.getSeries()).isNull());
  }

  @Test
  void anApiFailureIsLoggedAndCountedNeverThrown() {
    API.server().expect().post().withPath("/apis/events.k8s.io/v1/namespaces/" + ns + "/events")
        .andReturn(403, new StatusBuilder().withCode(403).withReason("Forbidden").withMessage("no RBAC").build())
        .always();
    KubeEventRecorder recorder = recorder(Settings.defaults());

    try (LogCapture log = new LogCapture(KubeEventRecorder.class.getName(), Level.WARN)) {
      assertThat(recorder.record(coder, pod, FAILED)).isEqualTo(Outcome.FAILED);
      assertThat(recorder.failures()).isEqualTo(1);
      // nothing was remembered: the next attempt tries to create again
      assertThat(recorder.record(coder, pod, FAILED)).isEqualTo(Outcome.FAILED);

      assertThat(log.events()).hasSize(2).allSatisfy(e -> {
        assertThat(e.getLevel()).isEqualTo(Level.WARN);
        assertThat(e.getFormattedMessage()).startsWith("Could not write Event RestartFailed about " + ns + "/coder")
            .contains("no RBAC");
      });
    }
    assertThat(eventWrites("POST")).isEqualTo(2);
    assertThat(eventWrites("PATCH")).isZero();
  }

  @Test
  void aFailedSeriesUpdateIsWrittenByTheNextFlush() {
    KubeEventRecorder recorder = recorder(EVERY_REPEAT_WRITTEN);
    recorder.record(coder, pod, FAILED);
    String name = events().get(0).getMetadata().getName();
    API.server().expect().patch().withPath("/apis/events.k8s.io/v1/namespaces/" + ns + "/events/" + name)
        .andReturn(403, new StatusBuilder().withCode(403).withReason("Forbidden").build()).once();

    try (LogCapture log = new LogCapture(KubeEventRecorder.class.getName(), Level.WARN)) {
      assertThat(recorder.record(coder, pod, FAILED)).isEqualTo(Outcome.FAILED);
      assertThat(log.events()).hasSize(1);
    }
    assertThat(events().get(0).getSeries()).isNull();

    assertThat(recorder.flush()).isEqualTo(1);
    assertThat(events()).singleElement().satisfies(e -> assertThat(e.getSeries().getCount()).isEqualTo(2));
  }

  @Test
  void anUnreachableApiServerIsAFailureNotAnException() {
    try (KubernetesClient unreachable = new KubernetesClientBuilder().withConfig(new ConfigBuilder()
        .withMasterUrl("http://127.0.0.1:1/").withRequestRetryBackoffLimit(0).withConnectionTimeout(2000)
        .build()).build()) {
      KubeEventRecorder recorder = new KubeEventRecorder(unreachable, "op", clock);

      try (LogCapture log = new LogCapture(KubeEventRecorder.class.getName(), Level.DEBUG)) {
        // worth another try, which is the caller's (EventQueue): told at debug level, not as a refusal
        assertThatCode(() -> assertThat(recorder.record(coder, pod, FAILED)).isEqualTo(Outcome.UNAVAILABLE))
            .doesNotThrowAnyException();
        assertThat(log.events()).singleElement().satisfies(e -> {
          assertThat(e.getLevel()).isEqualTo(Level.DEBUG);
          assertThat(e.getFormattedMessage()).contains("to be tried again").contains("ConnectException");
        });
      }
      assertThat(recorder.failures()).isEqualTo(1);
      assertThat(recorder.flush()).isZero();
    }
  }

  @Test
  void anApiServerAskingToComeBackLaterIsWorthAnotherTryAndNothingIsRemembered() {
    KubernetesClient once = API.newClient(b -> b.withRequestRetryBackoffLimit(0));
    KubeEventRecorder recorder = new KubeEventRecorder(once, "op", clock, Settings.defaults());
    for (int code : new int[] {429, 500, 503}) {
      API.server().expect().post().withPath("/apis/events.k8s.io/v1/namespaces/" + ns + "/events")
          .andReturn(code, new StatusBuilder().withCode(code).withMessage("come back later").build()).once();
      assertThat(recorder.record(coder, pod, FAILED)).as("answered %d", code).isEqualTo(Outcome.UNAVAILABLE);
    }
    assertThat(recorder.failures()).isEqualTo(3);
    assertThat(events()).isEmpty();

    assertThat(recorder.record(coder, pod, FAILED)).isEqualTo(Outcome.CREATED);
    assertThat(events()).singleElement().satisfies(e -> assertThat(e.getSeries()).isNull());
  }

  @Test
  void anEventThatExistsAlreadyWasCreatedByATryWhoseAnswerWasLost() {
    // the recorder names its first Event after the clock's nanoseconds: as if an earlier try had created it
    java.time.Instant now = clock.instant();
    String name = "coder." + Long.toHexString(now.getEpochSecond() * 1_000_000_000L + now.getNano());
    API.client().events().v1().events().inNamespace(ns).resource(new io.fabric8.kubernetes.api.model.events.v1
        .EventBuilder().withNewMetadata().withName(name).endMetadata().withReason("RestartFailed").build()).create();
    KubeEventRecorder recorder = recorder(EVERY_REPEAT_WRITTEN);

    assertThat(recorder.record(coder, pod, FAILED)).isEqualTo(Outcome.CREATED);
    assertThat(recorder.failures()).isZero();
    // remembered as written: a repeat updates its series, as after a plain create
    clock.advance(Duration.ofSeconds(1));
    assertThat(recorder.record(coder, pod, FAILED)).isEqualTo(Outcome.SERIES_UPDATED);
    assertThat(events()).singleElement().satisfies(e -> {
      assertThat(e.getMetadata().getName()).isEqualTo(name);
      assertThat(e.getSeries().getCount()).isEqualTo(2);
    });
    assertThat(eventWrites("POST")).as("the test's create and the recorder's").isEqualTo(2);
  }

  @Test
  void aNoticeRecordedLaterKeepsTheTimeItHappened() {
    java.time.Instant happened = clock.instant();
    clock.advance(Duration.ofSeconds(40));

    assertThat(recorder(Settings.defaults()).record(coder, pod, FAILED, happened)).isEqualTo(Outcome.CREATED);

    assertThat(events()).singleElement().satisfies(
        e -> assertThat(e.getEventTime().getTime()).isEqualTo("2026-11-21T10:00:00.000000Z"));
  }

  @Test
  void fallsBackToCoreV1EventsWhenEventsV1IsNotServed() {
    API.server().expect().post().withPath("/apis/events.k8s.io/v1/namespaces/" + ns + "/events")
        .andReturn(404, new StatusBuilder().withCode(404).withReason("NotFound").build()).always();
    KubeEventRecorder recorder = recorder(EVERY_REPEAT_WRITTEN);

    assertThat(recorder.record(coder, pod, FAILED)).isEqualTo(Outcome.CREATED);
    assertThat(recorder.usesCoreV1Events()).isTrue();
    clock.advance(Duration.ofSeconds(30));
    assertThat(recorder.record(coder, pod, FAILED)).isEqualTo(Outcome.SERIES_UPDATED);

    var core = API.client().v1().events().inNamespace(ns).list().getItems();
    assertThat(core).singleElement().satisfies(e -> {
      assertThat(e.getInvolvedObject().getKind()).isEqualTo("AgentInstance");
      assertThat(e.getInvolvedObject().getUid()).isEqualTo(coder.getMetadata().getUid());
      assertThat(e.getRelated().getName()).isEqualTo("coder-3");
      assertThat(e.getReason()).isEqualTo("RestartFailed");
      assertThat(e.getType()).isEqualTo("Warning");
      assertThat(e.getMessage()).isEqualTo(FAILED.message());
      assertThat(e.getSource().getComponent()).isEqualTo("respawn.dev/operator");
      assertThat(e.getReportingComponent()).isEqualTo("respawn.dev/operator");
      assertThat(e.getReportingInstance()).isEqualTo("respawn-operator-7d9f");
      assertThat(e.getFirstTimestamp()).isEqualTo("2026-11-21T10:00:00Z");
      assertThat(e.getLastTimestamp()).isEqualTo("2026-11-21T10:00:30Z");
      assertThat(e.getCount()).isEqualTo(2);
    });
    assertThat(events()).isEmpty();
  }

  @Test
  void namesTheActionAfterTheReason() {
    assertThat(dev.respawn.policy.EventReason.RestartScheduled.action()).isEqualTo("ScheduleRestart");
    assertThat(dev.respawn.policy.EventReason.RestartExhausted.action()).isEqualTo("Escalate");
    assertThat(dev.respawn.policy.EventReason.PolicyInvalid.action()).isEqualTo("ValidatePolicy");
  }

  @Test
  void aRepeatSoonAfterAFlushWaitsForTheSeriesIntervalFromThatWrite() {
    KubeEventRecorder recorder = recorder(Settings.defaults()); // one series PATCH per 5 s at most
    recorder.record(coder, pod, FAILED);
    clock.advance(Duration.ofSeconds(3));
    assertThat(recorder.record(coder, pod, FAILED)).isEqualTo(Outcome.COALESCED);
    assertThat(recorder.flush()).isEqualTo(1); // the PATCH of 10:00:03

    clock.advance(Duration.ofSeconds(3)); // 6 s after the Event, 3 s after its last PATCH

    assertThat(recorder.record(coder, pod, FAILED)).isEqualTo(Outcome.COALESCED);
    assertThat(eventWrites("PATCH")).isEqualTo(1);
  }

  @Test
  void forgettingADeletedInstanceKeepsTheSeriesOfTheOthers() {
    KubeEventRecorder recorder = recorder(EVERY_REPEAT_WRITTEN);
    AgentInstance reviewer = createInstance("reviewer");
    recorder.record(coder, pod, FAILED);
    recorder.record(reviewer, null, FAILED);

    recorder.forget(coder);

    assertThat(recorder.record(reviewer, null, FAILED)).isEqualTo(Outcome.SERIES_UPDATED);
    assertThat(events()).filteredOn(e -> e.getRegarding().getName().equals("reviewer")).singleElement()
        .satisfies(e -> assertThat(e.getSeries().getCount()).isEqualTo(2));
  }

  @Test
  void anEventAboutAnInstanceWithALongNameHasANameKubernetesAccepts() {
    String longName = "agent-" + "x".repeat(247); // 253 characters, the longest name of an AgentInstance
    AgentInstance agent = createInstance(longName);

    assertThat(recorder(Settings.defaults()).record(agent, null, FAILED)).isEqualTo(Outcome.CREATED);

    assertThat(events()).singleElement().satisfies(e -> {
      assertThat(e.getRegarding().getName()).isEqualTo(longName);
      assertThat(e.getMetadata().getName()).hasSizeLessThanOrEqualTo(253).startsWith("agent-xxx")
          .matches("[a-z0-9]([-a-z0-9.]*[a-z0-9])?");
    });
  }
}

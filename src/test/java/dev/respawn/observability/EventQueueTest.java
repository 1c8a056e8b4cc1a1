package dev.respawn.observability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.policy.Decision.Notice;
import dev.respawn.policy.EventReason;
import dev.respawn.testsupport.ApiFaults;
import dev.respawn.testsupport.ManualClock;
import dev.respawn.testsupport.MockApi;
import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.api.model.events.v1.Event;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class EventQueueTest {
  @RegisterExtension
  static final MockApi API = new MockApi();
  static final AtomicInteger NAMESPACES = new AtomicInteger();
  static final KubeEventRecorder.Settings EVERY_REPEAT = new KubeEventRecorder.Settings(Duration.ofMinutes(10),
      4096, 1000, Duration.ZERO);

  final String ns = "queued-" + NAMESPACES.incrementAndGet();
  final ManualClock clock = ManualClock.at("2026-11-25T10:00:00Z");

  AgentInstance instance(String name) {
    return KubeEventRecorderTest.createInstance(API.client(), ns, name);
  }

  List<Event> events() {
    return API.client().events().v1().events().inNamespace(ns).list().getItems();
  }

  static Notice notice(EventReason reason, int n) {
    return Notice.normal(reason, "[RST] notice " + n);
  }

  /** A stopping operator writes the counts of the repeats it folded, as a flush would have. */
  @Test
  void closeWritesTheSeriesOfFoldedRepeats() {
    AgentInstance coder = instance("coder");
    EventQueue queue = new EventQueue(new KubeEventRecorder(API.client(), "op", clock,
        KubeEventRecorder.Settings.defaults()));
    Notice failed = Notice.warning(EventReason.RestartFailed, "[RST] Restart failed for coder: exit code 1");
    for (int n = 0; n < 3; n++) {
      queue.record(coder, null, failed);
    }
    queue.close();
    assertThat(events()).singleElement().satisfies(e -> assertThat(e.getSeries()).as("the repeats' series")
        .isNotNull().satisfies(series -> assertThat(series.getCount()).isGreaterThanOrEqualTo(2)));
  }

  @Test
  void writesTheEventsInTheOrderTheyWereToldAndCloseWritesWhatWaits() {
    AgentInstance coder = instance("coder");
    KubeEventRecorder recorder = new KubeEventRecorder(API.client(), "op", clock, EVERY_REPEAT);
    EventQueue queue = new EventQueue(recorder);
    List<EventReason> told = List.of(EventReason.RestartFailed, EventReason.RestartScheduled,
        EventReason.RestartStarted, EventReason.RestartSucceeded);
    for (int n = 0; n < told.size(); n++) {
      clock.advance(Duration.ofMillis(1));
      queue.record(coder, null, notice(told.get(n), n));
    }
    queue.close(Duration.ofSeconds(30)); // returns once every queued Event is written
    List<Event> written = new ArrayList<>(events());
    written.sort(Comparator.comparing(e -> e.getEventTime().getTime()));
    assertThat(written).extracting(Event::getReason).containsExactlyElementsOf(told.stream().map(Enum::name).toList());
    assertThat(queue.dropped()).isZero();
  }

  @Test
  void forgettingAnObjectWaitsForItsQueuedEvents() {
    AgentInstance coder = instance("coder");
    KubeEventRecorder recorder = new KubeEventRecorder(API.client(), "op", clock, EVERY_REPEAT);
    try (EventQueue queue = new EventQueue(recorder)) {
      for (int n = 0; n < 20; n++) {
        queue.record(coder, null, notice(EventReason.RestartFailed, n));
      }
      queue.forget(coder);
      await().atMost(Duration.ofSeconds(30)).until(() -> queue.waiting() == 0);
      assertThat(events()).hasSize(20);
      // remembered while written, forgotten after: nothing of the object stays in the recorder
      assertThat(recorder.remembered()).isZero();
    }
  }

  /** Pauses by moving the test's clock, and remembers each pause. */
  final List<Duration> pauses = new CopyOnWriteArrayList<>();
  final EventQueue.Pause onTheClock = d -> {
    pauses.add(d);
    clock.advance(d);
  };

  void answerEventCreates(int code, int times) {
    API.server().expect().post().withPath("/apis/events.k8s.io/v1/namespaces/" + ns + "/events")
        .andReturn(code, new StatusBuilder().withCode(code).withMessage("not now").build()).times(times);
  }

  /** A queue whose client tries each write once (the retries counted are the queue's) and pauses on the clock. */
  EventQueue pausingOnTheClock() {
    KubernetesClient once = API.newClient(b -> b.withRequestRetryBackoffLimit(0));
    return new EventQueue(new KubeEventRecorder(once, "op", clock, EVERY_REPEAT), 10, onTheClock);
  }

  long eventCreates() {
    return API.requests().matching(r -> r.verb().equals("POST") && r.resource().equals("events.events.k8s.io")
        && r.path().contains("/namespaces/" + ns + "/")).size();
  }

  /** An API server down for a few seconds loses no Event, the Escalated one api.md §3 requires included. */
  @Test
  void anEventTheApiServerCouldNotTakeIsTriedAgainUntilItIsWritten() {
    AgentInstance coder = instance("coder");
    EventQueue queue = pausingOnTheClock();
    answerEventCreates(503, 3);

    try (LogCapture log = new LogCapture(EventQueue.class.getName(), Level.INFO)) {
      queue.record(coder, null, Notice.warning(EventReason.Escalated, "[RST] Escalated coder"));
      queue.record(coder, null, notice(EventReason.RestartFailed, 1));
      queue.close(Duration.ofSeconds(30));
      assertThat(log.events()).extracting(ILoggingEvent::getFormattedMessage).containsExactly(
          "Event Escalated about " + ns + "/coder not written yet: the API server did not take it; trying again"
              + " for up to 120s",
          "Event Escalated about " + ns + "/coder written at try 4");
    }

    assertThat(pauses).containsExactly(Duration.ofMillis(500), Duration.ofSeconds(1), Duration.ofSeconds(2));
    assertThat(events()).extracting(Event::getReason).containsExactlyInAnyOrder("Escalated", "RestartFailed");
    assertThat(events()).filteredOn(e -> e.getReason().equals("Escalated")).singleElement().satisfies(e ->
        assertThat(e.getEventTime().getTime()).as("when it was told, not when written")
            .isEqualTo("2026-11-25T10:00:00.000000Z"));
    assertThat(eventCreates()).isEqualTo(5);
    assertThat(queue.lost()).isZero();
  }

  @Test
  void anEventTheApiServerNeverTakesIsGivenUpTwoMinutesAfterItWasTold() {
    AgentInstance coder = instance("coder");
    EventQueue queue = pausingOnTheClock();
    answerEventCreates(500, 1000);

    queue.record(coder, null, Notice.warning(EventReason.Escalated, "[RST] Escalated coder"));
    queue.close(Duration.ofSeconds(30));

    // 0.5 s doubling up to 10 s apart, while the next try comes within two minutes of the telling
    assertThat(pauses).startsWith(Duration.ofMillis(500), Duration.ofSeconds(1), Duration.ofSeconds(2),
        Duration.ofSeconds(4), Duration.ofSeconds(8), Duration.ofSeconds(10)).hasSize(15);
    assertThat(pauses.stream().reduce(Duration.ZERO, Duration::plus)).isEqualTo(Duration.ofMillis(115_500));
    assertThat(eventCreates()).isEqualTo(16);
    assertThat(queue.lost()).isEqualTo(1);
    assertThat(events()).isEmpty();
  }

  /** A create the API server applied but whose answer was lost (a 503 after all) is met by a 409 when tried again. */
  @Test
  void anEventWhoseCreateLandedThoughItsAnswerWasLostIsWrittenOnce() {
    AgentInstance coder = instance("coder");
    EventQueue queue = pausingOnTheClock();
    AtomicInteger answersLost = new AtomicInteger();
    API.faults(new ApiFaults() {
      @Override
      public MockResponse after(RecordedRequest request, MockResponse handled) {
        boolean create = "POST".equals(request.getMethod()) && request.getPath().contains("/namespaces/" + ns + "/events");
        return create && answersLost.getAndIncrement() == 0 ? ApiFaults.status(503, "ServiceUnavailable", "lost") : handled;
      }
    });
    try {
      queue.record(coder, null, Notice.warning(EventReason.Escalated, "[RST] Escalated coder"));
      queue.close(Duration.ofSeconds(30));
    } finally {
      API.faults(ApiFaults.NONE);
    }

    assertThat(eventCreates()).as("the first create, and its try again answered 409").isEqualTo(2);
    assertThat(events()).extracting(Event::getReason).containsExactly("Escalated");
    assertThat(queue.lost()).isZero();
  }

  /** A try again is the same Event: it takes no second token of its instance's rate limit. */
  @Test
  void anEventTriedAgainTakesNoSecondRateLimitToken() {
    AgentInstance coder = instance("coder");
    KubernetesClient once = API.newClient(b -> b.withRequestRetryBackoffLimit(0));
    KubeEventRecorder oneAMinute = new KubeEventRecorder(once, "op", clock,
        new KubeEventRecorder.Settings(Duration.ofMinutes(10), 4096, 1, 1, Duration.ZERO));
    EventQueue queue = new EventQueue(oneAMinute, 10, onTheClock);
    answerEventCreates(503, 2);

    queue.record(coder, null, notice(EventReason.RestartFailed, 0));
    queue.close(Duration.ofSeconds(30));

    assertThat(events()).extracting(Event::getReason).containsExactly("RestartFailed");
    assertThat(oneAMinute.dropped()).isZero();
    assertThat(eventCreates()).isEqualTo(3);
  }

  /** A repeat whose series update the API server could not take counts once when tried again. */
  @Test
  void aSeriesUpdateTriedAgainCountsTheRepeatOnce() {
    AgentInstance coder = instance("coder");
    EventQueue queue = pausingOnTheClock();
    Notice failed = notice(EventReason.RestartFailed, 0);
    queue.record(coder, null, failed);
    await().atMost(Duration.ofSeconds(30)).until(() -> events().size() == 1);
    String name = events().get(0).getMetadata().getName();
    API.server().expect().patch().withPath("/apis/events.k8s.io/v1/namespaces/" + ns + "/events/" + name)
        .andReturn(503, new StatusBuilder().withCode(503).withMessage("not now").build()).once();

    clock.advance(Duration.ofSeconds(1));
    queue.record(coder, null, failed);
    queue.close(Duration.ofSeconds(30));

    assertThat(pauses).containsExactly(Duration.ofMillis(500));
    assertThat(events()).singleElement().satisfies(e -> assertThat(e.getSeries().getCount()).isEqualTo(2));
  }

  @Test
  void anEventTheApiServerRefusesIsNotTriedAgain() {
    AgentInstance coder = instance("coder");
    EventQueue queue = pausingOnTheClock();
    answerEventCreates(403, 1);

    queue.record(coder, null, notice(EventReason.RestartFailed, 0));
    queue.close(Duration.ofSeconds(30));

    assertThat(pauses).isEmpty();
    assertThat(eventCreates()).isEqualTo(1);
    assertThat(queue.lost()).isZero();
  }

  @Test
  void anApiServerThatDoesNotAnswerNeverHoldsTheCallerAndTheExcessIsDropped() throws IOException {
    try (Silent silent = new Silent()) {
      KubernetesClient hung = new KubernetesClientBuilder().withConfig(new ConfigBuilder()
          .withMasterUrl("http://127.0.0.1:" + silent.port()).withRequestTimeout(60_000)
          .withRequestRetryBackoffLimit(0).build()).build();
      AgentInstance coder = instance("coder");
      EventQueue queue = new EventQueue(new KubeEventRecorder(hung, "op", clock, EVERY_REPEAT), 3, EventQueue.Pause.SLEEP);
      // the first is taken by the writer (and hangs), three wait, the other six are dropped
      queue.record(coder, null, notice(EventReason.RestartFailed, 0));
      await().atMost(Duration.ofSeconds(30)).until(() -> silent.connections() >= 1);
      for (int n = 1; n < 10; n++) {
        queue.record(coder, null, notice(EventReason.RestartFailed, n));
      }
      assertThat(queue.dropped()).isEqualTo(6);
      assertThat(queue.waiting()).isEqualTo(4);
      queue.close(Duration.ofMillis(200));
      // the three still waiting are lost (and the one being written, once the stop interrupts its call)
      assertThat(queue.lost()).isBetween(3L, 4L);
      hung.close();
    }
  }

  /** Accepts connections and never answers. */
  static final class Silent implements AutoCloseable {
    private final ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    private final List<Socket> held = new CopyOnWriteArrayList<>();
    private final Thread acceptor;

    Silent() throws IOException {
      acceptor = new Thread(() -> {
        try {
          while (!server.isClosed()) {
            held.add(server.accept());
          }
        } catch (IOException closed) {
          // the test is over
        }
      }, "silent-api-server");
      acceptor.setDaemon(true);
      acceptor.start();
    }

    int port() {
      return server.getLocalPort();
    }

    int connections() {
      return held.size();
    }

    @Override
    public void close() throws IOException {
      server.close();
      for (Socket s : held) {
        s.close();
      }
    }
  }
}

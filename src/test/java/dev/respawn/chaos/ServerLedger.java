package dev.respawn.chaos;

import com.fasterxml.jackson.databind.JsonNode;
import dev.respawn.testsupport.ApiFaults;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The API server's side of the chaos test. It records, in the server's own order and clock (the mock
 * runs in the test's JVM), every pod the server created and every AgentInstance status it stored; and
 * it makes the operator's requests (recognised by their User-Agent) fail as the current {@link Faults}
 * say: 500 or 429 before the server handles a write, or 500 after the server applied it.
 */
final class ServerLedger implements ApiFaults {
  static final String OPERATOR_AGENT = "respawn-chaos-operator";

  /** What to do to the operator's requests. Rates are fractions 0..1. */
  record Faults(double writeBefore, double writeAfter, double reads) {
    static final Faults NONE = new Faults(0, 0, 0);

    @Override
    public String toString() {
      return String.format("faults[write-before %.2f, write-after %.2f, reads %.2f]", writeBefore, writeAfter, reads);
    }
  }

  /** A pod the server created: at (arrival of the request), name, instance, run. */
  record PodCreated(long seq, Instant at, String pod, String instance, int run) {}

  /** An AgentInstance status the server stored (as the write's response shows it); at = arrival of the write. */
  record StatusStored(long seq, Instant at, String instance, int run, String phase, Instant nextRestartAt,
      Integer attempt) {}

  private final Random random;
  private final AtomicLong seq = new AtomicLong();
  private final ThreadLocal<Instant> arrival = new ThreadLocal<>();
  private final List<PodCreated> pods = new ArrayList<>();
  private final List<StatusStored> statuses = new ArrayList<>();
  private final List<String> injected = new ArrayList<>();
  private final List<String> podWrites = new ArrayList<>();
  private final Map<String, AtomicInteger> byAgent = new ConcurrentHashMap<>();
  private volatile Faults faults = Faults.NONE;

  ServerLedger(long seed) {
    this.random = new Random(seed);
  }

  void faults(Faults f) {
    this.faults = f;
  }

  @Override
  public MockResponse before(RecordedRequest request) {
    arrival.set(Instant.now());
    String agent = request.getHeader("User-Agent");
    byAgent.computeIfAbsent((agent == null ? "?" : agent) + (isWatch(request) ? " watch" : isWrite(request) ? " write"
        : " read"), k -> new AtomicInteger()).incrementAndGet();
    if (!fromOperator(request)) {
      return null;
    }
    Faults f = faults;
    boolean write = isWrite(request);
    if (isWatch(request)) {
      return null;
    }
    double rate = write ? f.writeBefore() : f.reads();
    if (rate > 0 && chance(rate)) {
      int code = chance(0.5) ? 500 : 429;
      note("before " + code + " " + request.getMethod() + " " + request.getPath());
      return code == 500 ? ApiFaults.status(500, "InternalError", "chaos: the server failed before the write")
          : ApiFaults.status(429, "TooManyRequests", "chaos: slow down");
    }
    return null;
  }

  @Override
  public MockResponse after(RecordedRequest request, MockResponse handled) {
    Instant at = arrival.get();
    arrival.remove();
    record(request, handled, at == null ? Instant.now() : at);
    if (fromOperator(request) && isWrite(request) && handled.code() < 300 && faults.writeAfter() > 0
        && chance(faults.writeAfter())) {
      note("after 500 " + request.getMethod() + " " + request.getPath());
      return ApiFaults.status(500, "InternalError", "chaos: the write was applied, but the answer is lost");
    }
    return handled;
  }

  private void record(RecordedRequest request, MockResponse handled, Instant at) {
    String path = request.getPath() == null ? "" : request.getPath();
    int query = path.indexOf('?');
    String bare = query >= 0 ? path.substring(0, query) : path;
    try {
      if ("POST".equalsIgnoreCase(request.getMethod()) && bare.endsWith("/pods") && handled.code() == 201) {
        JsonNode pod = Serialization.jsonMapper().readTree(handled.getBody().getBytes());
        JsonNode labels = pod.path("metadata").path("labels");
        synchronized (this) {
          pods.add(new PodCreated(seq.incrementAndGet(), at, pod.path("metadata").path("name").asText(),
              labels.path("respawn.dev/instance").asText(null), labels.path("respawn.dev/run").asInt(-1)));
        }
      } else if (isWrite(request) && bare.contains("/pods/") && handled.code() < 300) {
        String phase = "-";
        if (!"DELETE".equalsIgnoreCase(request.getMethod())) {
          JsonNode pod = Serialization.jsonMapper().readTree(handled.getBody().getBytes());
          phase = pod.path("status").path("phase").asText("-");
        }
        synchronized (this) {
          podWrites.add(at + " " + request.getMethod() + " " + bare.substring(bare.indexOf("/pods/") + 6) + " -> "
              + phase + " by " + request.getHeader("User-Agent"));
        }
      } else if (isWrite(request) && bare.contains("/agentinstances/") && bare.endsWith("/status")
          && handled.code() < 300) {
        JsonNode i = Serialization.jsonMapper().readTree(handled.getBody().getBytes());
        JsonNode st = i.path("status");
        String next = st.path("nextRestartAt").asText(null);
        synchronized (this) {
          statuses.add(new StatusStored(seq.incrementAndGet(), at, i.path("metadata").path("name").asText(),
              st.path("run").asInt(0), st.path("phase").asText(null), next == null ? null : Instant.parse(next),
              st.has("attempt") ? st.path("attempt").asInt() : null));
        }
      }
    } catch (IOException | RuntimeException e) {
      synchronized (this) {
        injected.add("ledger could not read " + request.getMethod() + " " + path + ": " + e);
      }
    }
  }

  /** Requests so far by User-Agent and kind (read, write, watch). */
  Map<String, Integer> requestsByAgent() {
    Map<String, Integer> m = new TreeMap<>();
    byAgent.forEach((k, v) -> m.put(k, v.get()));
    return m;
  }

  synchronized List<PodCreated> pods() {
    return List.copyOf(pods);
  }

  synchronized List<StatusStored> statuses() {
    return List.copyOf(statuses);
  }

  /** Writes to pods (not creates) with the phase they left, one line each, for diagnostics. */
  synchronized List<String> podWrites(String instance) {
    return podWrites.stream().filter(l -> l.contains(" " + instance + "-")).toList();
  }

  /** The faults injected so far, one line each. */
  synchronized List<String> injected() {
    return List.copyOf(injected);
  }

  private synchronized void note(String what) {
    injected.add(what);
  }

  private boolean chance(double p) {
    return random.nextDouble() < p;
  }

  static boolean fromOperator(RecordedRequest r) {
    String agent = r.getHeader("User-Agent");
    return agent != null && agent.startsWith(OPERATOR_AGENT);
  }

  static boolean isWatch(RecordedRequest r) {
    return r.getPath() != null && r.getPath().contains("watch=true");
  }

  static boolean isWrite(RecordedRequest r) {
    String m = r.getMethod() == null ? "" : r.getMethod().toUpperCase(Locale.ROOT);
    return m.equals("POST") || m.equals("PUT") || m.equals("PATCH") || m.equals("DELETE");
  }
}

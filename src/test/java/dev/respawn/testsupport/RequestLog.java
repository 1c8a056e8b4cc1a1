package dev.respawn.testsupport;

import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * Every request the mock API server answered, in arrival order: verb, path, the resource it addressed
 * ({@code pods}, {@code agentinstances.respawn.dev/status}, {@code events.events.k8s.io}, ...) and the
 * response code. Benchmarks use it for "writes per restart".
 *
 * <p>It sits in front of the real dispatcher. It also drains the request queue the fabric8 MockWebServer
 * keeps for {@code takeRequest()} (one entry per request, never emptied), so long runs do not grow
 * without bound; use this log instead of {@code takeRequest()}.
 */
public final class RequestLog {
  static final Set<String> WRITE_VERBS = Set.of("POST", "PUT", "PATCH", "DELETE");

  /**
   * One answered request. resource is {@code plural[.group][/subresource]}, "" for non-resource paths;
   * userAgent is the client's User-Agent header ("" when absent: set one per client with
   * {@code api.newClient(b -> b.withUserAgent("operator"))} to tell clients apart); startNanos is
   * {@link System#nanoTime()} when the dispatcher took the request and durationNanos how long it took to
   * answer (waiting for the mock's global lock included).
   */
  public record Request(String verb, String path, String resource, int code, String userAgent, long startNanos,
      long durationNanos) {
    public Request(String verb, String path, String resource, int code) {
      this(verb, path, resource, code, "", 0, 0);
    }

    public boolean isWrite() {
      return WRITE_VERBS.contains(verb);
    }

    /** "VERB resource", the key of {@link RequestLog#writesByResource()}. */
    public String key() {
      return verb + " " + resource;
    }
  }

  private final ConcurrentLinkedQueue<Request> requests = new ConcurrentLinkedQueue<>();

  RequestLog() {}

  /** Wraps the dispatcher that answers; drains {@code server}'s own request queue as it goes. */
  Dispatcher recording(Dispatcher delegate, MockWebServer server) {
    return new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        long start = System.nanoTime();
        MockResponse response = delegate.dispatch(request);
        long took = System.nanoTime() - start;
        String verb = request.getMethod().toUpperCase(Locale.ROOT);
        String agent = request.getHeader("User-Agent");
        requests.add(new Request(verb, request.getPath(), resourceOf(request.getPath()), response.code(),
            agent == null ? "" : agent, start, took));
        forgetOne(server);
        return response;
      }

      @Override
      public void shutdown() {
        delegate.shutdown();
      }
    };
  }

  private static void forgetOne(MockWebServer server) {
    try {
      server.takeRequest(0, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Every request so far (reads, watches and writes). */
  public List<Request> all() {
    return List.copyOf(requests);
  }

  /** The POST, PUT, PATCH and DELETE requests so far. */
  public List<Request> writes() {
    return matching(Request::isWrite);
  }

  public List<Request> matching(Predicate<Request> filter) {
    return requests.stream().filter(filter).collect(Collectors.toUnmodifiableList());
  }

  public long writeCount() {
    return requests.stream().filter(Request::isWrite).count();
  }

  /** The writes of the client with this User-Agent, grouped by "VERB resource", sorted. */
  public Map<String, Long> writesByResource(String userAgent) {
    return requests.stream().filter(r -> r.isWrite() && r.userAgent().equals(userAgent))
        .collect(Collectors.groupingBy(Request::key, TreeMap::new, Collectors.counting()));
  }

  /** How many writes the client with this User-Agent made so far. */
  public long writeCount(String userAgent) {
    return requests.stream().filter(r -> r.isWrite() && r.userAgent().equals(userAgent)).count();
  }

  /** How many requests with this verb addressed this resource, e.g. {@code count("POST", "pods")}. */
  public long count(String verb, String resource) {
    return requests.stream().filter(r -> r.verb().equals(verb) && r.resource().equals(resource)).count();
  }

  /** Writes grouped by "VERB resource", e.g. {@code {"PATCH pods/status"=3, "POST pods"=3}}, sorted. */
  public Map<String, Long> writesByResource() {
    return requests.stream().filter(Request::isWrite)
        .collect(Collectors.groupingBy(Request::key, TreeMap::new, Collectors.counting()));
  }

  /** Forgets everything recorded so far. */
  public void clear() {
    requests.clear();
  }

  /**
   * The resource a Kubernetes API path addresses: {@code /api/v1/namespaces/a/pods/p/status} ->
   * {@code pods/status}; {@code /apis/respawn.dev/v1alpha1/namespaces/a/agentinstances} ->
   * {@code agentinstances.respawn.dev}. The query string is ignored.
   */
  static String resourceOf(String rawPath) {
    String path = rawPath == null ? "" : rawPath;
    int query = path.indexOf('?');
    if (query >= 0) {
      path = path.substring(0, query);
    }
    String[] parts = path.replaceAll("^/+", "").split("/");
    int rest;
    String group;
    if (parts.length >= 3 && parts[0].equals("api")) {
      group = "";
      rest = 2;
    } else if (parts.length >= 4 && parts[0].equals("apis")) {
      group = parts[1];
      rest = 3;
    } else {
      return "";
    }
    if (parts.length > rest + 1 && parts[rest].equals("namespaces")) {
      rest += 2;
      if (parts.length == rest) {
        return "namespaces";
      }
    }
    if (parts.length <= rest) {
      return "";
    }
    String resource = parts[rest] + (group.isEmpty() ? "" : "." + group);
    return parts.length > rest + 2 ? resource + "/" + parts[rest + 2] : resource;
  }
}

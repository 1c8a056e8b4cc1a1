package dev.respawn.sandbox;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.InstantSource;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * What stands between kubectl and the sandbox's mock API server, so that the first commands a
 * Kubernetes user types work: discovery ({@link ApiDiscovery}), server-side printing ({@link TableView}),
 * watches as a chunked HTTP stream ({@link WatchStream}: the mock serves them only over WebSocket), the
 * core/v1 Events that {@code kubectl describe} reads ({@link CoreEvents}), OpenAPI v3 for {@code explain}
 * and {@code apply} ({@link OpenApiDocs}), and JSON merge patches applied as RFC 7386 says ({@link MergePatch}:
 * the mock keeps keys set to null; strategic merge patches of built-in kinds are taken as merge patches).
 * Everything else is passed to the mock as it is.
 */
final class KubectlFront implements AutoCloseable {
  private static final ObjectMapper MAPPER = Serialization.jsonMapper();

  private final HttpServer server;
  private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "kubectl-front");
    t.setDaemon(true);
    return t;
  });
  private final URI mock;
  private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private final ApiDiscovery discovery;
  private final TableView tables;
  private final CoreEvents events;
  private final OpenApiDocs openApi;
  private final WatchStream watches;
  private final MergePatch patches;

  KubectlFront(int port, String mockUrl, KubernetesClient mockClient, List<CustomResourceDefinition> crds) {
    this.mock = URI.create(mockUrl.endsWith("/") ? mockUrl.substring(0, mockUrl.length() - 1) : mockUrl);
    this.discovery = new ApiDiscovery(crds);
    this.tables = new TableView(discovery, InstantSource.system());
    this.events = new CoreEvents(mockClient);
    this.openApi = new OpenApiDocs(discovery);
    this.watches = new WatchStream(mockClient, discovery, tables);
    this.patches = new MergePatch(mockClient, discovery);
    try {
      server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 64);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot listen on port " + port, e);
    }
    server.setExecutor(threads);
    server.createContext("/", this::handle);
    server.start();
  }

  String url() {
    return "http://" + server.getAddress().getHostString() + ":" + server.getAddress().getPort() + "/";
  }

  private void handle(HttpExchange x) throws IOException {
    try (x) {
      String path = x.getRequestURI().getRawPath();
      Map<String, String> query = query(x.getRequestURI().getRawQuery());
      String method = x.getRequestMethod();
      Optional<ResourcePath> resource = ResourcePath.parse(path);
      if (path.equals("/version")) {
        send(x, 200, "application/json", MAPPER.createObjectNode().put("major", "1").put("minor", "32")
            .put("gitVersion", ApiDiscovery.VERSION + "-respawn-sandbox").put("platform", "linux/amd64"));
      } else if (path.equals("/api") || path.equals("/api/")) {
        send(x, 200, "application/json", discovery.coreVersions(server.getAddress().getHostString() + ":"
            + server.getAddress().getPort()));
      } else if (path.equals("/apis") || path.equals("/apis/")) {
        send(x, 200, "application/json", discovery.groups());
      } else if (isGroupVersion(path)) {
        String gv = path.startsWith("/api/") ? path.substring(5) : path.substring(6);
        Optional<?> list = discovery.resources(gv.replaceAll("/$", ""));
        if (list.isPresent()) {
          send(x, 200, "application/json", list.get());
        } else {
          notFound(x, path);
        }
      } else if (path.equals("/openapi/v3")) {
        send(x, 200, "application/json", openApi.index());
      } else if (path.startsWith("/openapi/v3/")) {
        Optional<?> doc = openApi.document(path.substring("/openapi/v3/".length()));
        if (doc.isPresent()) {
          send(x, 200, "application/json", doc.get());
        } else {
          notFound(x, path);
        }
      } else if (resource.isPresent() && method.equals("GET") && isWatch(query) && isWebSocket(x)) {
        // watches are served as a chunked HTTP stream only: a WebSocket handshake is answered at once with a plain
        // 200 (no 101 switch: fabric8 then watches over HTTP; a 503 it would retry); streamed to, its handshake
        // waited for good and the watch never saw an event
        send(x, 200, "application/json", status(200, "WebSocketNotServed",
            "this sandbox serves watches over HTTP streaming, not WebSocket"));
      } else if (resource.isPresent() && method.equals("GET") && isWatch(query)) {
        watches.stream(x, resource.get(), query, TableView.wanted(x.getRequestHeaders().getFirst("Accept")));
      } else if (resource.isPresent() && method.equals("GET") && resource.get().resource().equals("events")
          && resource.get().group().isEmpty() && resource.get().name() == null) {
        JsonNode list = MAPPER.valueToTree(events.list(resource.get().namespace(), query.get("fieldSelector")));
        respond(x, resource.get(), list);
      } else if (resource.isPresent() && method.equals("PATCH") && MergePatch.handles(contentType(x))) {
        MergePatch.Result r = patches.apply(resource.get(), x.getRequestBody().readAllBytes());
        send(x, r.code(), "application/json", r.body());
      } else {
        proxy(x, resource);
      }
    } catch (RuntimeException e) {
      send(x, 500, "application/json", status(500, "InternalError", String.valueOf(e)));
    }
  }

  /** A GET answered here: as a Table when kubectl asks for one. */
  private void respond(HttpExchange x, ResourcePath path, JsonNode body) throws IOException {
    if (TableView.wanted(x.getRequestHeaders().getFirst("Accept"))) {
      send(x, 200, TableView.MEDIA_TYPE, tables.table(path, body, true));
    } else {
      send(x, 200, "application/json", body);
    }
  }

  private void proxy(HttpExchange x, Optional<ResourcePath> resource) throws IOException {
    boolean table = TableView.wanted(x.getRequestHeaders().getFirst("Accept"));
    String query = x.getRequestURI().getRawQuery();
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(mock + x.getRequestURI().getRawPath()
        + (query == null ? "" : "?" + query)));
    byte[] body = x.getRequestBody().readAllBytes();
    b.method(x.getRequestMethod(), body.length == 0 ? HttpRequest.BodyPublishers.noBody()
        : HttpRequest.BodyPublishers.ofByteArray(body));
    Optional.ofNullable(contentType(x)).ifPresent(c -> b.header("Content-Type", c));
    b.header("Accept", "application/json");
    HttpResponse<byte[]> r;
    try {
      r = http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException(e);
    }
    if (table && r.statusCode() == 200 && resource.isPresent() && resource.get().subresource() == null
        && x.getRequestMethod().equals("GET")) {
      send(x, 200, TableView.MEDIA_TYPE, tables.table(resource.get(), MAPPER.readTree(r.body()), true));
      return;
    }
    x.getResponseHeaders().set("Content-Type", r.headers().firstValue("Content-Type").orElse("application/json"));
    x.sendResponseHeaders(r.statusCode(), r.body().length == 0 ? -1 : r.body().length);
    if (r.body().length > 0) {
      try (OutputStream out = x.getResponseBody()) {
        out.write(r.body());
      }
    }
  }

  private static boolean isGroupVersion(String path) {
    String p = path.replaceAll("/$", "");
    return p.matches("/api/v1") || p.matches("/apis/[^/]+/[^/]+");
  }

  private static boolean isWatch(Map<String, String> query) {
    String w = query.get("watch");
    return w != null && (w.equals("true") || w.equals("1"));
  }

  private static boolean isWebSocket(HttpExchange x) {
    return "websocket".equalsIgnoreCase(x.getRequestHeaders().getFirst("Upgrade"));
  }

  private static String contentType(HttpExchange x) {
    return x.getRequestHeaders().getFirst("Content-Type");
  }

  static Map<String, String> query(String raw) {
    Map<String, String> q = new HashMap<>();
    if (raw != null) {
      for (String pair : raw.split("&")) {
        int eq = pair.indexOf('=');
        String k = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
        q.put(k, eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
      }
    }
    return q;
  }

  static JsonNode status(int code, String reason, String message) {
    return MAPPER.createObjectNode().put("kind", "Status").put("apiVersion", "v1").put("status", "Failure")
        .put("message", message).put("reason", reason).put("code", code);
  }

  private static void notFound(HttpExchange x, String path) throws IOException {
    send(x, 404, "application/json", status(404, "NotFound", "the server could not find the requested resource "
        + path));
  }

  static void send(HttpExchange x, int code, String contentType, Object body) throws IOException {
    byte[] bytes = MAPPER.writeValueAsBytes(body);
    x.getResponseHeaders().set("Content-Type", contentType);
    x.sendResponseHeaders(code, bytes.length);
    try (OutputStream out = x.getResponseBody()) {
      out.write(bytes);
    }
  }

  @Override
  public void close() {
    watches.close();
    server.stop(0);
    threads.shutdownNow();
  }
}

package dev.respawn.sandbox;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.dsl.FilterWatchListDeletable;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A watch as kubectl (and fabric8, after its WebSocket attempt is answered with 200) reads it: one chunked
 * HTTP response, a JSON watch event per line, Table rows when Table was asked for. Fed by a watch of its
 * own on the mock; objects the client has already seen (resourceVersion at or below the one it asked
 * to watch from) are not sent again.
 */
final class WatchStream implements AutoCloseable {
  private static final String END = "";
  private static final long KEEPALIVE_SECONDS = 5;

  private final KubernetesClient mock;
  private final ApiDiscovery discovery;
  private final TableView tables;
  private final Set<Watch> open = ConcurrentHashMap.newKeySet();

  WatchStream(KubernetesClient mock, ApiDiscovery discovery, TableView tables) {
    this.mock = mock;
    this.discovery = discovery;
    this.tables = tables;
  }

  void stream(HttpExchange x, ResourcePath path, Map<String, String> query, boolean table) throws IOException {
    String kind = discovery.kind(path.apiVersion(), path.resource()).orElse(null);
    if (kind == null) {
      KubectlFront.send(x, 404, "application/json", KubectlFront.status(404, "NotFound", "no such resource " + path));
      return;
    }
    String name = path.name() != null ? path.name() : nameFrom(query.get("fieldSelector"));
    long since = number(query.get("resourceVersion"));
    long timeout = query.containsKey("timeoutSeconds") ? number(query.get("timeoutSeconds")) : 1800;
    BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    boolean[] first = {true};
    Watcher<GenericKubernetesResource> watcher = new Watcher<>() {
      @Override
      public void eventReceived(Action action, GenericKubernetesResource resource) {
        JsonNode object = Serialization.jsonMapper().valueToTree(resource);
        if (action == Action.ADDED && number(resource.getMetadata().getResourceVersion()) <= since) {
          return;
        }
        synchronized (first) {
          ObjectNode event = Serialization.jsonMapper().createObjectNode().put("type", action.name());
          event.set("object", table ? tables.table(path, object, first[0]) : object);
          first[0] = false;
          lines.add(TableView.json(Serialization.jsonMapper(), event));
        }
      }

      @Override
      public void onClose(WatcherException cause) {
        lines.add(END);
      }
    };
    var all = mock.genericKubernetesResources(path.apiVersion(), kind);
    FilterWatchListDeletable<GenericKubernetesResource, ?, Resource<GenericKubernetesResource>> scoped =
        path.namespace() == null ? all.inAnyNamespace() : all.inNamespace(path.namespace());
    String labels = query.get("labelSelector");
    if (labels != null && !labels.isBlank()) {
      scoped = scoped.withLabelSelector(labels);
    }
    Watch watch = name != null ? scoped.withField("metadata.name", name).watch(watcher) : scoped.watch(watcher);
    open.add(watch);
    x.getResponseHeaders().set("Content-Type", table ? TableView.MEDIA_TYPE : "application/json");
    x.sendResponseHeaders(200, 0);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeout);
    try (OutputStream out = x.getResponseBody()) {
      while (System.nanoTime() < deadline) {
        String line = lines.poll(KEEPALIVE_SECONDS, TimeUnit.SECONDS);
        if (END.equals(line)) {
          break;
        }
        // a blank line keeps nothing from the reader's JSON decoder and finds a client that has gone
        out.write(((line == null ? "" : line) + "\n").getBytes(StandardCharsets.UTF_8));
        out.flush();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (IOException gone) {
      // the client stopped watching
    } finally {
      watch.close();
      open.remove(watch);
    }
  }

  private static String nameFrom(String fieldSelector) {
    if (fieldSelector == null) {
      return null;
    }
    for (String term : fieldSelector.split(",")) {
      if (term.startsWith("metadata.name=")) {
        return term.substring("metadata.name=".length()).replaceFirst("^=", "");
      }
    }
    return null;
  }

  private static long number(String s) {
    try {
      return s == null || s.isBlank() ? 0 : Long.parseLong(s.trim());
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  @Override
  public void close() {
    open.forEach(Watch::close);
  }
}

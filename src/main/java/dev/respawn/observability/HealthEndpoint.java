package dev.respawn.observability;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;
import java.util.function.BooleanSupplier;

/**
 * One port for {@code /metrics} (Prometheus text), {@code /healthz} (the process serves) and
 * {@code /readyz} (the operator started and every informer is healthy).
 */
public final class HealthEndpoint implements AutoCloseable {
  private final HttpServer server;

  public HealthEndpoint(int port, PrometheusMeterRegistry registry, BooleanSupplier ready) throws IOException {
    server = HttpServer.create(new InetSocketAddress(port), 16);
    server.setExecutor(Executors.newFixedThreadPool(2, r -> {
      Thread t = new Thread(r, "respawn-http");
      t.setDaemon(true);
      return t;
    }));
    server.createContext("/metrics", ex -> reply(ex, 200, "text/plain; version=0.0.4; charset=utf-8",
        registry.scrape()));
    server.createContext("/healthz", ex -> reply(ex, 200, "text/plain", "ok\n"));
    server.createContext("/readyz", ex -> {
      boolean ok = ready.getAsBoolean();
      reply(ex, ok ? 200 : 503, "text/plain", ok ? "ready\n" : "not ready\n");
    });
    server.start();
  }

  public int port() {
    return server.getAddress().getPort();
  }

  private static void reply(HttpExchange ex, int code, String type, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().set("Content-Type", type);
    ex.sendResponseHeaders(code, bytes.length);
    try (OutputStream out = ex.getResponseBody()) {
      out.write(bytes);
    }
  }

  @Override
  public void close() {
    server.stop(0);
  }
}

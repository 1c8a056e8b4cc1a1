package dev.respawn.observability;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

class HealthEndpointTest {
  @Test
  void servesMetricsHealthAndReadinessOnOnePort() throws Exception {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    new RestartMetrics(registry);
    AtomicBoolean ready = new AtomicBoolean(false);
    try (HealthEndpoint endpoint = new HealthEndpoint(0, registry, ready::get)) {
      HttpClient http = HttpClient.newHttpClient();
      String base = "http://127.0.0.1:" + endpoint.port();
      assertThat(get(http, base + "/healthz").statusCode()).isEqualTo(200);
      assertThat(get(http, base + "/readyz").statusCode()).isEqualTo(503);
      ready.set(true);
      assertThat(get(http, base + "/readyz").statusCode()).isEqualTo(200);
      HttpResponse<String> metrics = get(http, base + "/metrics");
      assertThat(metrics.statusCode()).isEqualTo(200);
      assertThat(metrics.body()).contains("respawn_circuit_breakers{state=\"Open\"}", "respawn_restart_exhausted_total",
          "respawn_circuit_trips_total", "respawn_heartbeat_stale_total", "respawn_decision_duration_seconds",
          "respawn_restart_delay_seconds");
    }
  }

  private static HttpResponse<String> get(HttpClient http, String url) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString());
  }
}

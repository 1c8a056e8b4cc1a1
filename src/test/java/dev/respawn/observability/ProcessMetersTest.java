package dev.respawn.observability;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.Test;

/** The operator process's memory, threads and CPU are on /metrics (a churn of instances must leave heap flat). */
class ProcessMetersTest {
  @Test
  void theProcessHeapThreadsAndCpuAreScraped() {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    try (ProcessMeters meters = new ProcessMeters(registry)) {
      String scraped = registry.scrape();
      assertThat(scraped).contains("jvm_memory_used_bytes{area=\"heap\"", "jvm_memory_max_bytes",
          "jvm_threads_live_threads", "jvm_classes_loaded_classes", "process_cpu_usage", "process_uptime_seconds");
    }
  }
}

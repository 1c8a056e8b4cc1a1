package dev.respawn.observability;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;

/**
 * The operator process's own meters on /metrics, Micrometer's standard ones: heap and other memory
 * ({@code jvm_memory_used_bytes{area,id}}), garbage collection, threads, classes, CPU and uptime. What a platform
 * team watches to tell that the operator's memory stays flat as instances come and go (issue 11's churn figure).
 */
public final class ProcessMeters implements AutoCloseable {
  private final JvmGcMetrics gc = new JvmGcMetrics();

  /** Binds the meters to {@code registry}; {@link #close()} stops listening for garbage collections. */
  public ProcessMeters(MeterRegistry registry) {
    new JvmMemoryMetrics().bindTo(registry);
    gc.bindTo(registry);
    new JvmThreadMetrics().bindTo(registry);
    new ClassLoaderMetrics().bindTo(registry);
    new ProcessorMetrics().bindTo(registry);
    new UptimeMetrics().bindTo(registry);
  }

  @Override
  public void close() {
    gc.close();
  }
}

package dev.respawn.controller;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.OperatorException;
import io.javaoperatorsdk.operator.api.monitoring.Metrics;
import io.javaoperatorsdk.operator.api.reconciler.RetryInfo;
import io.javaoperatorsdk.operator.processing.Controller;
import io.javaoperatorsdk.operator.processing.event.Event;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.util.Map;

/**
 * JOSDK's reconcile metrics ({@code delegate}: its Micrometer ones), but a reconcile's {@link KubernetesClientException}
 * reaches JOSDK as it was thrown. JOSDK's Micrometer timer wraps it in an {@link OperatorException}, and JOSDK then
 * logs a conflict (409: the object changed since it was read, decided again at once) as an uncaught error with its
 * stack trace, where it logs a bare one as the conflict it is, one line at INFO.
 */
final class ReconcileMetrics implements Metrics {
  private final Metrics delegate;

  ReconcileMetrics(Metrics delegate) {
    this.delegate = delegate;
  }

  @Override
  public <T> T timeControllerExecution(ControllerExecution<T> execution) throws Exception {
    try {
      return delegate.timeControllerExecution(execution);
    } catch (OperatorException e) {
      if (e.getCause() instanceof KubernetesClientException thrown) {
        throw thrown;
      }
      throw e;
    }
  }

  @Override
  public void controllerRegistered(Controller<? extends HasMetadata> controller) {
    delegate.controllerRegistered(controller);
  }

  @Override
  public void eventReceived(Event event, Map<String, Object> metadata) {
    delegate.eventReceived(event, metadata);
  }

  @Override
  public void reconciliationSubmitted(HasMetadata resource, RetryInfo retryInfo, Map<String, Object> metadata) {
    delegate.reconciliationSubmitted(resource, retryInfo, metadata);
  }

  @Override
  public void reconciliationStarted(HasMetadata resource, Map<String, Object> metadata) {
    delegate.reconciliationStarted(resource, metadata);
  }

  @Override
  public void reconciliationFailed(HasMetadata resource, RetryInfo retryInfo, Exception exception,
      Map<String, Object> metadata) {
    delegate.reconciliationFailed(resource, retryInfo, exception, metadata);
  }

  @Override
  public void reconciliationSucceeded(HasMetadata resource, Map<String, Object> metadata) {
    delegate.reconciliationSucceeded(resource, metadata);
  }

  @Override
  public void reconciliationFinished(HasMetadata resource, RetryInfo retryInfo, Map<String, Object> metadata) {
    delegate.reconciliationFinished(resource, retryInfo, metadata);
  }

  @Override
  public void cleanupDone(ResourceID resourceID, Map<String, Object> metadata) {
    delegate.cleanupDone(resourceID, metadata);
  }
}

package dev.respawn.cli;

import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.net.http.HttpTimeoutException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.UnresolvedAddressException;
import javax.net.ssl.SSLException;

/** One-line, stack-trace-free descriptions of what went wrong talking to the API server. */
final class ApiErrors {
  private ApiErrors() {}

  static String describe(Throwable error, String apiUrl) {
    Throwable cause = networkCause(error);
    if (cause != null) {
      return "cannot reach the Kubernetes API at " + apiUrl + ": " + networkDetail(cause);
    }
    if (error instanceof KubernetesClientException k && k.getCode() > 0) {
      String message = k.getStatus() != null && k.getStatus().getMessage() != null ? k.getStatus().getMessage()
          : k.getMessage();
      return switch (k.getCode()) {
        case 401 -> "unauthorized (401) by the Kubernetes API at " + apiUrl + ": check the credentials of your "
            + "kubeconfig";
        case 403 -> "forbidden (403): " + message;
        case 404 -> "the Kubernetes API at " + apiUrl + " answered 404 (" + message + "): is the Respawn CRD "
            + "(agentinstances.respawn.dev) installed?";
        default -> "the Kubernetes API answered " + k.getCode() + ": " + message;
      };
    }
    return detail(error);
  }

  /** The network failure behind an error (refused, timed out, unknown host), if that is what it is. */
  private static Throwable networkCause(Throwable error) {
    for (Throwable t = error; t != null; t = t.getCause()) {
      if (t instanceof ConnectException || t instanceof UnknownHostException || t instanceof InterruptedIOException
          || t instanceof UnresolvedAddressException
          || (t instanceof IOException && !(t.getCause() instanceof KubernetesClientException))) {
        return t;
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return null;
  }

  /** What a person can act on: unknown host, TLS, timed out, refused; never an exception class name. */
  private static String networkDetail(Throwable cause) {
    for (Throwable t = cause; t != null && t.getCause() != t; t = t.getCause()) {
      if (t instanceof UnknownHostException || t instanceof UnresolvedAddressException) {
        return "unknown host" + (t.getMessage() == null || t.getMessage().isBlank() ? "" : " " + t.getMessage());
      }
      if (t instanceof SSLException) {
        return "TLS failed: " + orElse(t.getMessage(), "handshake error");
      }
      if (t instanceof HttpTimeoutException || t instanceof SocketTimeoutException) {
        return "timed out";
      }
    }
    for (Throwable t = cause; t != null && t.getCause() != t; t = t.getCause()) {
      if (t instanceof ConnectException || t instanceof ClosedChannelException) {
        return orElse(t.getMessage(), "connection refused");
      }
    }
    for (Throwable t = cause; t != null && t.getCause() != t; t = t.getCause()) {
      if (t.getMessage() != null && !t.getMessage().isBlank()) {
        return t.getMessage();
      }
    }
    return "connection failed";
  }

  private static String orElse(String text, String fallback) {
    return text == null || text.isBlank() ? fallback : text;
  }

  private static String detail(Throwable t) {
    Throwable root = t;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String message = root.getMessage();
    if (message == null || message.isBlank()) {
      message = t.getMessage();
    }
    String name = root.getClass().getSimpleName();
    return message == null || message.isBlank() ? name : message;
  }
}

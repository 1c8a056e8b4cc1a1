package dev.respawn.testsupport;

import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;

/**
 * Fault injection on the mock API server ({@link MockApi#faults(ApiFaults)}): a hook that sees every
 * request before the server handles it and every response after. Called concurrently, from the
 * server's threads: implementations must be thread-safe and quick, and must not call the server.
 */
public interface ApiFaults {
  /** No faults. */
  ApiFaults NONE = new ApiFaults() {};

  /**
   * A response to give instead of handling the request (the store is left unchanged), or null to
   * let the server handle it.
   */
  default MockResponse before(RecordedRequest request) {
    return null;
  }

  /**
   * What the client gets after the server handled the request ({@code handled}, or another response:
   * e.g. a 500 for a write that was applied all the same). The response of a watch is its WebSocket
   * upgrade.
   */
  default MockResponse after(RecordedRequest request, MockResponse handled) {
    return handled;
  }

  /** Every status write of the AgentInstance {@code instance} is refused with {@code code}; {@code count} counts them. */
  static ApiFaults refuseStatusWrites(String instance, int code, String reason, String message,
      java.util.concurrent.atomic.AtomicInteger count) {
    return new ApiFaults() {
      @Override
      public MockResponse before(RecordedRequest request) {
        if (isStatusWrite(request, instance)) {
          count.incrementAndGet();
          return status(code, reason, message);
        }
        return null;
      }
    };
  }

  /** Whether the request writes the status of the AgentInstance {@code instance}. */
  static boolean isStatusWrite(RecordedRequest request, String instance) {
    return "PATCH".equals(request.getMethod()) && request.getPath().contains("/agentinstances/" + instance + "/status");
  }

  /** A response with this status code and a Kubernetes Status body, as an API server sends it. */
  static MockResponse status(int code, String reason, String message) {
    String body = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":"
        + io.fabric8.kubernetes.client.utils.Serialization.asJson(message) + ",\"reason\":\"" + reason
        + "\",\"code\":" + code + "}";
    return new MockResponse().setResponseCode(code).setHeader("Content-Type", "application/json").setBody(body);
  }
}

package dev.respawn.testsupport;

import io.fabric8.mockwebserver.http.ByteString;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.fabric8.mockwebserver.http.Response;
import io.fabric8.mockwebserver.http.WebSocket;
import io.fabric8.mockwebserver.http.WebSocketListener;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;

/**
 * Sits in front of the mock's dispatcher: asks the {@link ApiFaults} hook before and after each
 * request, and keeps the open watch connections so a test can drop them ({@link MockApi#dropWatches}).
 */
final class FaultingDispatcher extends Dispatcher {
  private final Dispatcher delegate;
  private final Map<WebSocket, RecordedRequest> openWatches = new ConcurrentHashMap<>();
  private volatile ApiFaults faults = ApiFaults.NONE;

  FaultingDispatcher(Dispatcher delegate) {
    this.delegate = delegate;
  }

  void faults(ApiFaults hook) {
    this.faults = Objects.requireNonNull(hook);
  }

  @Override
  public MockResponse dispatch(RecordedRequest request) {
    ApiFaults hook = faults;
    MockResponse early = hook.before(request);
    if (early != null) {
      return early;
    }
    MockResponse handled = delegate.dispatch(request);
    if (handled.getWebSocketListener() != null) {
      handled.withWebSocketUpgrade(new Tracked(handled.getWebSocketListener(), request));
    }
    return hook.after(request, handled);
  }

  /** Closes (server side, code 1000) the open watches whose request matches; returns how many. */
  int dropWatches(Predicate<RecordedRequest> which) {
    int dropped = 0;
    for (Map.Entry<WebSocket, RecordedRequest> e : openWatches.entrySet()) {
      if (which.test(e.getValue()) && openWatches.remove(e.getKey()) != null) {
        e.getKey().close(1000, "dropped by the test");
        dropped++;
      }
    }
    return dropped;
  }

  @Override
  public void shutdown() {
    delegate.shutdown();
  }

  /** Delegates everything; remembers the socket while it is open. */
  private final class Tracked extends WebSocketListener {
    private final WebSocketListener inner;
    private final RecordedRequest request;

    Tracked(WebSocketListener inner, RecordedRequest request) {
      this.inner = inner;
      this.request = request;
    }

    @Override
    public void onBeforeAccept(WebSocket webSocket, Response response) {
      inner.onBeforeAccept(webSocket, response);
    }

    @Override
    public void onOpen(WebSocket webSocket, Response response) {
      openWatches.put(webSocket, request);
      inner.onOpen(webSocket, response);
    }

    @Override
    public void onMessage(WebSocket webSocket, String text) {
      inner.onMessage(webSocket, text);
    }

    @Override
    public void onMessage(WebSocket webSocket, ByteString bytes) {
      inner.onMessage(webSocket, bytes);
    }

    @Override
    public void onMessage(WebSocket webSocket, byte[] bytes) {
      inner.onMessage(webSocket, bytes);
    }

    @Override
    public void onClosing(WebSocket webSocket, int code, String reason) {
      openWatches.remove(webSocket);
      inner.onClosing(webSocket, code, reason);
    }

    @Override
    public void onClosed(WebSocket webSocket, int code, String reason) {
      openWatches.remove(webSocket);
      inner.onClosed(webSocket, code, reason);
    }

    @Override
    public void onFailure(WebSocket webSocket, Throwable t, Response response) {
      openWatches.remove(webSocket);
      inner.onFailure(webSocket, t, response);
    }
  }
}

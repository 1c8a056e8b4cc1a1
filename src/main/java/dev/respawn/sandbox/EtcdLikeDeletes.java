package dev.respawn.sandbox;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import io.fabric8.mockwebserver.crud.AttributeSet;
import io.fabric8.mockwebserver.dsl.HttpMethod;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.fabric8.mockwebserver.internal.MockDispatcher;
import io.fabric8.mockwebserver.internal.SimpleRequest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.Queue;

/**
 * fabric8's CRUD mock, with a deletion's watch event at a resourceVersion of its own, as a real API server sends
 * it (etcd gives a delete its own revision). The mock sends the deleted object as it was stored, at its older
 * resourceVersion; an informer then takes that as the latest version it synced, which goes backwards, and JOSDK's
 * cache of recently created objects (kept until the informer is past their version) may go on preferring a pod as
 * the operator created it to the informer's newer copy of it: a running pod read as one not started, for good.
 * A slow-API-server probe found an instance left Starting that way (20 pods deleted while 20 were created).
 * The sandbox and the tests' mock servers use it.
 */
public final class EtcdLikeDeletes extends KubernetesCrudDispatcher {
  /**
   * fabric8's mixed mode with it: a request with an expectation queued ({@code server.expect()}) is answered by
   * that, any other by the CRUD store.
   */
  public static Dispatcher mixed(Map<ServerRequest, Queue<ServerResponse>> responses) {
    MockDispatcher expectations = new MockDispatcher(responses);
    EtcdLikeDeletes crud = new EtcdLikeDeletes();
    return new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        Queue<ServerResponse> queued = responses.get(new SimpleRequest(HttpMethod.valueOf(request.getMethod()),
            request.getPath()));
        return queued != null && !queued.isEmpty() ? expectations.dispatch(request) : crud.dispatch(request);
      }
    };
  }

  @Override
  public void processEvent(String path, AttributeSet pathAttributes, AttributeSet oldAttributes,
      GenericKubernetesResource resource, String newState) {
    // called under the dispatcher's write lock; a removal (no new state) first gets the delete's own version
    if (newState == null && oldAttributes != null) {
      synchronized (map) {
        String stored = map.get(oldAttributes);
        if (stored != null) {
          map.put(oldAttributes, atVersion(stored, requestResourceVersion()));
        }
      }
    }
    super.processEvent(path, pathAttributes, oldAttributes, resource, newState);
  }

  private static String atVersion(String json, long version) {
    try {
      ObjectNode object = (ObjectNode) Serialization.jsonMapper().readTree(json);
      if (object.get("metadata") instanceof ObjectNode metadata) {
        metadata.put("resourceVersion", String.valueOf(version));
      }
      return Serialization.jsonMapper().writeValueAsString(object);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}

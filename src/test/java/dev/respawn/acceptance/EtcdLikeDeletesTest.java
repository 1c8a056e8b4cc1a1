package dev.respawn.acceptance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.respawn.sandbox.EtcdLikeDeletes;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import java.net.InetAddress;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The acceptance cluster's deletions come at a resourceVersion of their own, later than any before (as etcd's);
 * fabric8's own mock sends the deleted object at the version it was stored with.
 */
class EtcdLikeDeletesTest {
  @ParameterizedTest(name = "etcd-like: {0}")
  @ValueSource(booleans = {true, false})
  void aDeletionIsWatchedAtAVersionLaterThanEveryEarlierEvent(boolean etcdLike) throws Exception {
    KubernetesCrudDispatcher crud = etcdLike ? new EtcdLikeDeletes() : new KubernetesCrudDispatcher();
    KubernetesMockServer server = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(), crud,
        false);
    server.init(InetAddress.getLoopbackAddress(), 0);
    List<String> seen = new CopyOnWriteArrayList<>();
    try (KubernetesClient client = server.createClient();
        Watch watch = client.pods().inNamespace("ns").watch(new Watcher<>() {
          @Override
          public void eventReceived(Action action, Pod pod) {
            seen.add(action + "@" + pod.getMetadata().getResourceVersion());
          }

          @Override
          public void onClose(WatcherException cause) {}
        })) {
      client.pods().inNamespace("ns").resource(new PodBuilder().withNewMetadata().withName("a").endMetadata()
          .build()).create();
      client.pods().inNamespace("ns").resource(new PodBuilder().withNewMetadata().withName("b").endMetadata()
          .build()).create();
      client.pods().inNamespace("ns").withName("a").delete();
      await().atMost(Duration.ofSeconds(10)).until(() -> seen.size() == 3);
    } finally {
      server.destroy();
    }
    long created = version(seen.get(1));
    assertThat(seen.get(2)).startsWith("DELETED@");
    if (etcdLike) {
      assertThat(version(seen.get(2))).as("%s", seen).isGreaterThan(created);
    } else {
      assertThat(version(seen.get(2))).as("fabric8's mock as it is: %s", seen).isLessThan(created);
    }
  }

  private static long version(String event) {
    return Long.parseLong(event.substring(event.indexOf('@') + 1));
  }
}

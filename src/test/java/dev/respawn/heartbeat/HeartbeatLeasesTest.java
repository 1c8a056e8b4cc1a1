package dev.respawn.heartbeat;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.policy.LeaseView;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

class HeartbeatLeasesTest {
  static Lease lease(Map<String, String> annotations) {
    return new LeaseBuilder().withNewMetadata().withName("coder").withAnnotations(annotations).endMetadata()
        .withNewSpec().withHolderIdentity("coder-1").endSpec().build();
  }

  @Test
  void theAgentsWordsAreCutToTheirBoundsButACheckpointIsNeverCut() {
    String fits = "é".repeat(128); // 256 bytes
    String tooLong = fits + "x";
    LeaseView view = HeartbeatLeases.view(lease(Map.of(HeartbeatLeases.CHECKPOINT, fits,
        "respawn.dev/detail", "d".repeat(600))), Instant.EPOCH);
    assertThat(view.checkpoint()).isEqualTo(fits);
    assertThat(view.detail()).hasSize(512);
    LeaseView refused = HeartbeatLeases.view(lease(Map.of(HeartbeatLeases.CHECKPOINT, tooLong)), Instant.EPOCH);
    assertThat(refused.checkpoint()).as("a name longer than 256 bytes names no checkpoint the agent has").isNull();
  }
}

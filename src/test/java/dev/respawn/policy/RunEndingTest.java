package dev.respawn.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class RunEndingTest {

  /**
   * §9 bounds: a termination message is kept to what a kubelet reports (4 KiB), so that a pod status written by hand
   * with 64 KiB of it cannot make failure rules' matching slow (black-box tester: 64 rules x 32 substrings against
   * 64 KiB took more than 45 s); a message within it is kept whole.
   */
  @Test
  void keepsTheTerminationMessageToWhatAKubeletReports() {
    String huge = "é" + "a".repeat(65_536);
    RunEnding e = new RunEnding("p-1", "uid", EndingKind.TERMINATED, 1, "Error", huge, Instant.EPOCH);
    assertThat(e.message().getBytes(StandardCharsets.UTF_8)).hasSize(Bounds.TERMINATION_MESSAGE_BYTES);
    assertThat(e.message()).startsWith("éaaa");

    String usual = "network_timeout: upstream model API returned HTTP 503";
    assertThat(new RunEnding("p-1", "uid", EndingKind.TERMINATED, 1, "Error", usual, Instant.EPOCH).message())
        .isSameAs(usual);
    assertThat(new RunEnding("p-1", "uid", EndingKind.TERMINATED, 1, null, null, Instant.EPOCH).message()).isNull();
  }
}

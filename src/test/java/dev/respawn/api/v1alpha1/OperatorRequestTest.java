package dev.respawn.api.v1alpha1;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * api.md §6 and README: the annotations a user sets on an AgentInstance, and their keys in
 * status.handledRequests {restart, resume}.
 */
class OperatorRequestTest {

  @Test
  void restartIsRequestedByItsAnnotationWithAnOptionalReason() {
    assertThat(OperatorRequest.RESTART.annotation()).isEqualTo("respawn.dev/restart");
    assertThat(OperatorRequest.RESTART.reasonAnnotation()).contains("respawn.dev/restart-reason");
    assertThat(OperatorRequest.RESTART.statusKey()).isEqualTo("restart");
  }

  @Test
  void resumeIsRequestedByItsAnnotationWithoutAReason() {
    assertThat(OperatorRequest.RESUME.annotation()).isEqualTo("respawn.dev/resume");
    assertThat(OperatorRequest.RESUME.reasonAnnotation()).isEmpty();
    assertThat(OperatorRequest.RESUME.statusKey()).isEqualTo("resume");
  }
}

package dev.respawn.policy;

import dev.respawn.api.v1alpha1.BackoffType;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.api.v1alpha1.TerminalReason;
import dev.respawn.policy.Decision.Notice;
import java.time.Duration;

/**
 * api.md §4, last paragraph: a pod the API server refuses to create. Quota or admission refusals
 * are retried with the backoff ({@code spawn_failed}); a template the server rejects as invalid
 * is not ({@code invalid_template}, phase Failed). Neither counts as a failure of the agent.
 */
final class SpawnFailure {

  private SpawnFailure() {}

  static void apply(DecisionDraft d, boolean invalidTemplate, String message) {
    String why = Bounds.truncateUtf8(message, Bounds.MESSAGE_BYTES);
    if (invalidTemplate) {
      d.decided(DecisionAction.Fail, ReasonCode.INVALID_TEMPLATE, 0, Duration.ZERO, null, null, 0, "system");
      d.explain(why);
      d.stop(Phase.Failed, TerminalReason.UnrecoverableError, ReasonCode.INVALID_TEMPLATE);
      return;
    }
    int attempt = Math.max(1, d.state.attempt);
    Duration delay = d.policy.backoff().type() == BackoffType.None ? d.policy.backoff().initialDelay()
        : Backoff.jitter(Backoff.delay(d.policy.backoff(), attempt), d.policy.backoff().jitter(), d.random);
    d.state.phase = Phase.Backoff;
    d.state.nextRestartAt = d.now.plus(delay);
    d.decided(DecisionAction.Restart, ReasonCode.SPAWN_FAILED, 0, delay, null, null, 0, "system");
    d.explain(why);
    d.notice(Notice.warning(EventReason.RestartFailed, "[RST] Restart failed for " + d.instance() + ": spawn_failed: " + why));
    d.wakeAt(d.state.nextRestartAt);
  }
}

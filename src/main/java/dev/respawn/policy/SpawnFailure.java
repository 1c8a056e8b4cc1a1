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
    // the API server's words (an admission webhook's may run over lines), on one line within status's bound
    String why = Bounds.oneLine(message, Bounds.MESSAGE_BYTES);
    if (invalidTemplate) {
      d.decided(DecisionAction.Fail, ReasonCode.INVALID_TEMPLATE, d.sequenceMaxAttempts(), Duration.ZERO, null, null, 0,
          "system");
      d.explain(why);
      d.stop(Phase.Failed, TerminalReason.UnrecoverableError, ReasonCode.INVALID_TEMPLATE);
      return;
    }
    Duration delay = retryDelay(d);
    if (d.state.phase != Phase.CircuitOpen) {
      d.state.phase = Phase.Backoff; // a refused trial or probe stays a wait for its circuit (DependencyWait)
    }
    d.state.nextRestartAt = d.now.plus(delay);
    d.decided(DecisionAction.Restart, ReasonCode.SPAWN_FAILED, d.sequenceMaxAttempts(), delay, null, null, 0, "system");
    d.explain(why);
    d.notice(Notice.warning(EventReason.RestartFailed, "[RST] Restart failed for " + d.instance() + ": spawn_failed: " + why));
    d.wakeAt(d.state.nextRestartAt);
  }

  /**
   * The wait before the next try: the backoff's delay for the current attempt, at least {@link #FIRST_RETRY};
   * doubled (at least {@link #FIRST_RETRY} too) on each refusal in a row (a quota or a foreign pod that stays), up to the larger of maxDelay and
   * {@link #LONGEST_RETRY}. Never zero: an Immediate backoff would otherwise retry without a wake-up.
   */
  static Duration retryDelay(DecisionDraft d) {
    InstanceState.DecisionInfo last = d.state.lastDecision;
    Duration cap = d.policy.backoff().maxDelay().compareTo(LONGEST_RETRY) > 0 ? d.policy.backoff().maxDelay()
        : LONGEST_RETRY;
    if (last != null && last.reasonCode() == ReasonCode.SPAWN_FAILED && last.delaySeconds() > 0) {
      // a retry made early (the spec edited, the pod in the way gone) waited less than its delay: never below 1 s
      Duration doubled = Duration.ofMillis(Math.max((long) (last.delaySeconds() * 2000), FIRST_RETRY.toMillis()));
      return doubled.compareTo(cap) > 0 ? cap : doubled;
    }
    int attempt = Math.max(1, d.state.attempt);
    Duration delay = d.policy.backoff().type() == BackoffType.None ? d.policy.backoff().initialDelay()
        : Backoff.jitter(Backoff.delay(d.policy.backoff(), attempt), d.policy.backoff().jitter(), d.random);
    return delay.compareTo(FIRST_RETRY) < 0 ? FIRST_RETRY : delay;
  }

  static final Duration FIRST_RETRY = Duration.ofSeconds(1);
  static final Duration LONGEST_RETRY = Duration.ofMinutes(5);
}

package dev.respawn.controller;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.policy.InstanceState;
import dev.respawn.policy.ReasonCode;
import io.fabric8.kubernetes.api.model.Pod;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;

/**
 * A run whose pod the API server refused (spawn_failed: a quota, an admission policy, a webhook) waits for its
 * retry, which doubles with each refusal in a row up to minutes. When the spec was edited since status was written
 * (the template fixed for the PodSecurity level, the resources lowered under the quota), the retry is due at once:
 * the user changed what was refused and should not wait out a delay meant for a cluster that did not change. Once
 * per edit: the start that follows writes status, with the new generation. Likewise when the pod that held the
 * start's name is gone.
 */
final class RefusedStart {
  private RefusedStart() {}

  /** Makes a refused start's retry due now when the instance's spec changed since its status was written. */
  static void retryAfterEdit(InstanceState state, AgentInstance instance, Instant now) {
    Long written = instance.getStatus() == null ? null : instance.getStatus().observedGeneration;
    boolean edited = written != null && !Objects.equals(written, instance.getMetadata().getGeneration());
    if (edited && waitsAfterRefusal(state, now)) {
      retryNow(state, now);
    }
  }

  /**
   * Makes a refused start's retry due now when the pod that held its name (not this instance's: a predecessor's
   * that the garbage collector removes, a restored one, someone else's) is gone, as a StatefulSet makes its pod
   * again once the old one is gone. Such a pod carries the instance label, so its deletion wakes the instance; one
   * read confirms what the cache says. A pod the cache does not show (no instance label) keeps the doubling retry.
   */
  static void retryOnceFreed(InstanceState state, AgentInstance instance, Function<String, Optional<Pod>> cached,
      Function<String, Pod> directGet, Instant now) {
    if (!waitsAfterRefusal(state, now)) {
      return;
    }
    String name = ReleaseQueue.nextRunPod(instance).getName();
    if (PodActions.heldUpBy(state.lastDecision.message(), name) && cached.apply(name).isEmpty()
        && directGet.apply(name) == null) {
      retryNow(state, now);
    }
  }

  private static boolean waitsAfterRefusal(InstanceState state, Instant now) {
    InstanceState.DecisionInfo last = state.lastDecision;
    return state.phase == Phase.Backoff && last != null && last.reasonCode() == ReasonCode.SPAWN_FAILED
        && last.at() != null && state.nextRestartAt != null && state.nextRestartAt.isAfter(now);
  }

  private static void retryNow(InstanceState state, Instant now) {
    InstanceState.DecisionInfo last = state.lastDecision;
    state.nextRestartAt = now;
    // the retry the core keeps to (lastDecision's time and delay) ends now too
    double waited = Math.max(0, Duration.between(last.at(), now).toMillis()) / 1000d;
    state.lastDecision = new InstanceState.DecisionInfo(last.action(), last.reasonCode(), last.attempt(),
        last.maxAttempts(), last.finalAttempt(), waited, last.at(), last.message());
  }
}

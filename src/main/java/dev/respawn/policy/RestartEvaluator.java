package dev.respawn.policy;

import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.policy.Decision.Notice;
import dev.respawn.policy.Decision.PodStart;
import dev.respawn.policy.LivenessGate.Judgement;
import dev.respawn.policy.spi.CustomEvaluator;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.random.RandomGenerator;

/**
 * The one entry point of the decision core: given the policy, the instance's current state, what
 * was observed and the time, it returns the decision and the new state, following api.md §3 in
 * order. Pure: no I/O, time from the caller, randomness (jitter) from the caller's generator; the
 * same inputs always give the same decision, and the given state is never changed.
 */
public final class RestartEvaluator {
  private final List<CustomEvaluator> evaluators;

  public RestartEvaluator(List<CustomEvaluator> evaluators) {
    this.evaluators = List.copyOf(evaluators);
  }

  /** An evaluator with the built-in rules only. */
  public static RestartEvaluator builtIn() {
    return new RestartEvaluator(List.of());
  }

  /** An evaluator with the class path's custom evaluators when the tier allows them. */
  public static RestartEvaluator forTier(Tier tier) {
    if (!tier.allowsCustomEvaluators()) {
      return builtIn();
    }
    return new RestartEvaluator(ServiceLoader.load(CustomEvaluator.class).stream()
        .map(ServiceLoader.Provider::get).toList());
  }

  public List<CustomEvaluator> evaluators() {
    return evaluators;
  }

  /** Decides at the clock's current instant. */
  public Decision decide(RestartPolicy policy, InstanceState current, Observation obs, InstantSource clock,
      RandomGenerator random) {
    return decide(policy, current, obs, clock.instant(), random);
  }

  /** Decides at {@code now}. */
  public Decision decide(RestartPolicy policy, InstanceState current, Observation obs, Instant now,
      RandomGenerator random) {
    DecisionDraft d = new DecisionDraft(policy, current.copy(), obs, now, random);
    InstanceState s = d.state;
    Optional<PodView> pod = obs.pod().filter(p -> p.name().equals(s.currentPod));
    if (pod.isPresent() && pod.get().isLive()) {
      s.heartbeat = LivenessGate.track(s.heartbeat, obs.lease().orElse(null), now);
    }
    if (obs.suspend()) {
      OperatorActions.suspend(d);
      return d.build();
    }
    if (s.phase == Phase.Suspended) {
      OperatorActions.unsuspend(d);
    }
    Optional<Request> resume = obs.resumeRequest().filter(r -> !r.id().equals(s.handledResumeRequest));
    Optional<Request> restart = obs.restartRequest().filter(r -> !r.id().equals(s.handledRestartRequest));
    if (resume.isPresent()) {
      OperatorActions.resume(d, resume.get());
      restart.ifPresent(r -> s.handledRestartRequest = r.id()); // a resume restarts anyway
    } else if (restart.isPresent()) {
      OperatorActions.restart(d, restart.get());
    }
    if (!d.deletePod) {
      Optional<RunEnding> ending = obs.ending()
          .filter(e -> e.pod().equals(s.currentPod) && !s.hasRecorded(e.podUid()));
      if (ending.isPresent() && !s.phase.isTerminal()) {
        FailureSteps.runEnded(d, ending.get(), evaluators);
      } else if (pod.isPresent() && pod.get().isLive() && !s.phase.isTerminal()) {
        progress(d, pod.get());
      }
    }
    maybeStart(d);
    if (s.phase == Phase.Backoff || s.phase == Phase.CircuitOpen) {
      d.wakeAt(s.nextRestartAt);
    }
    return d.build();
  }

  /**
   * The pod a decision asked for could not be created. {@code previous} is the state before that
   * decision (the run it counted never started).
   */
  public Decision spawnFailed(RestartPolicy policy, InstanceState previous, Observation obs, boolean invalidTemplate,
      String message, Instant now, RandomGenerator random) {
    DecisionDraft d = new DecisionDraft(policy, previous.copy(), obs, now, random);
    SpawnFailure.apply(d, invalidTemplate, message);
    return d.build();
  }

  /** A live current run: Starting -> Running, liveness, HalfOpen bound, end of the failure sequence. */
  private void progress(DecisionDraft d, PodView pod) {
    InstanceState s = d.state;
    RestartPolicy p = d.policy;
    if (pod.stage() == PodView.Stage.RUNNING && s.phase != Phase.Running) {
      s.phase = Phase.Running;
      // when this operator saw it running: pod times have whole-second precision, and a run must not
      // look healthy for resetAfter before it was seen at all
      s.runStartedAt = d.now;
    }
    Judgement j = LivenessGate.judge(p, s.heartbeat, pod, d.now);
    d.liveness = j.liveness();
    j.nextCheck().ifPresent(d::wakeAt);
    Optional<EndingKind> end = j.endRun();
    if (end.isEmpty() && s.circuit.state() == CircuitState.HalfOpen && s.circuit.halfOpenAt() != null
        && !j.liveness().ready()) {
      Instant deadline = CircuitBreaker.trialDeadline(s.circuit, p.circuitBreaker());
      if (!d.now.isBefore(deadline)) {
        end = Optional.of(EndingKind.TRIAL_EXPIRED);
      } else {
        d.wakeAt(deadline);
      }
    }
    if (end.isPresent()) {
      if (end.get() == EndingKind.HEARTBEAT_STALE) {
        d.notice(Notice.warning("HeartbeatStale", "Heartbeat of " + d.instance() + " is stale: "
            + j.liveness().message()));
      }
      d.deletePod = true;
      FailureSteps.runEnded(d, new RunEnding(pod.name(), pod.uid(), end.get(), null, null,
          j.liveness().message(), d.now), evaluators);
      return;
    }
    boolean sequenceOpen = s.attempt > 0 || s.circuit.state() != CircuitState.Closed || s.resume.attempts() > 0;
    if (s.phase == Phase.Running && sequenceOpen && s.runStartedAt != null) {
      Instant healthyAt = s.runStartedAt.plus(p.resetAfter());
      // with heartbeats, "healthy for resetAfter" needs a heartbeat seen after that point too: an agent
      // that renewed once and hung must not end its failure sequence just because resetAfter <= timeout
      boolean heardSince = p.heartbeat().timeout().isEmpty() || (s.heartbeat != null
          && s.heartbeat.observedAt() != null && !s.heartbeat.observedAt().isBefore(healthyAt));
      if (!d.now.isBefore(healthyAt) && j.liveness().ready() && heardSince) {
        endSequence(d);
      } else {
        d.wakeAt(healthyAt.isAfter(d.now) ? healthyAt : j.nextCheck().orElse(null));
      }
    }
  }

  /** A run healthy for resetAfter: attempt 0, circuit Closed, RestartSucceeded. */
  private static void endSequence(DecisionDraft d) {
    InstanceState s = d.state;
    CircuitState before = s.circuit.state();
    d.notice(Notice.normal("RestartSucceeded", "[RST] Restart succeeded for " + d.instance() + " on attempt "
        + s.attempt));
    s.attempt = 0;
    s.firstFailureAt = null;
    s.circuit = CircuitBreaker.recordSuccess(s.circuit, d.now);
    s.resume = s.resume.withAttempts(0);
    if (before != CircuitState.Closed) {
      d.notice(Notice.normal("CircuitBreakerStateChanged", "Circuit breaker closed for " + d.instance() + " ("
          + before + " -> Closed)"));
    }
  }

  /** §3 step 5: create the next pod when one is due and no pod of the instance is live. */
  private static void maybeStart(DecisionDraft d) {
    InstanceState s = d.state;
    boolean waiting = s.phase == Phase.Pending || s.phase == Phase.Backoff || s.phase == Phase.CircuitOpen;
    boolean due = s.nextRestartAt == null || !d.now.isBefore(s.nextRestartAt);
    if (!waiting || !due || d.obs.podLive()) {
      return;
    }
    boolean trial = s.phase == Phase.CircuitOpen;
    if (trial) {
      s.circuit = CircuitBreaker.startTrial(s.circuit, d.now);
      d.notice(Notice.normal("CircuitBreakerStateChanged", "Circuit breaker of " + d.instance()
          + " half-open: trial run (Open -> HalfOpen)"));
    }
    s.run += 1;
    String podName = d.instance() + "-" + s.run;
    String previous = s.currentPod;
    s.currentPod = podName;
    s.phase = Phase.Starting;
    s.nextRestartAt = null;
    s.runStartedAt = null;
    s.heartbeat = null;
    Optional<String> checkpoint = Optional.empty();
    if (s.run > 1) {
      s.restarts += 1;
      s.recentRestarts = new java.util.ArrayList<>(RestartWindow.record(s.recentRestarts,
          d.policy.restartLimit(), d.now));
      if (s.lastRestart != null) {
        s.lastRestart = s.lastRestart.started(podName, d.now);
        checkpoint = Optional.ofNullable(s.lastRestart.resumeCheckpoint());
      }
      if (checkpoint.isPresent()) {
        s.resume = s.resume.withAttempts(s.resume.attempts() + 1);
      }
      d.notice(Notice.normal("RestartStarted", "Restart started for " + d.instance() + ": pod " + podName
          + " replaces " + previous + " (attempt " + s.attempt + ")"));
    }
    d.start = new PodStart(s.run, podName, s.attempt, checkpoint,
        checkpoint.isPresent() ? Optional.ofNullable(s.lastRestart.interruptionClass()) : Optional.empty());
  }
}

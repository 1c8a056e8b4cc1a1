package dev.respawn.policy;

import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.policy.Decision.Notice;
import dev.respawn.policy.Decision.PodStart;
import dev.respawn.policy.LivenessGate.Judgement;
import dev.respawn.policy.spi.CustomEvaluator;
import java.time.Duration;
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
  public Decision decide(RestartPolicy policy, InstanceState current, Sighting seen, InstantSource clock,
      RandomGenerator random) {
    return decide(policy, current, seen, clock.instant(), random);
  }

  /** Observes ({@link RunObserver}) and decides at {@code now}. */
  public Decision decide(RestartPolicy policy, InstanceState current, Sighting seen, Instant now,
      RandomGenerator random) {
    return decide(policy, current, seen, now, random, true).build();
  }

  private DecisionDraft decide(RestartPolicy policy, InstanceState current, Sighting seen, Instant now,
      RandomGenerator random, boolean mayStartRun) {
    RunObserver.Observed o = RunObserver.observe(current, seen, now, policy.restartLimit());
    DecisionDraft d = new DecisionDraft(policy, o.state(), o.observation(), now, random);
    InstanceState s = d.state;
    Optional<PodView> pod = d.currentPod();
    if (d.obs.suspend()) {
      OperatorActions.suspend(d);
      return d;
    }
    // as it was: cleared suspend and a resume may come in one edit. An instance's first decision starts a new
    // lifecycle anyway: a resume asked for before it (or the last id of a manifest that GitOps re-creates, which
    // keeps it) is that start, as a restart asked for before it is
    boolean resumable = s.phase.isTerminal() || s.beforeFirstDecision();
    if (s.phase == Phase.Suspended) {
      OperatorActions.unsuspend(d);
    }
    // the run's ending first, then the requests: a restart request that arrives with a failure skips the wait
    // the failure decided (api.md §6: restart now), rather than being used up by a run that had ended already
    observeRun(d, pod);
    boolean takenUp = false;
    boolean nextRunLive = d.obs.nextRun().map(p -> p.ending().isEmpty() && p.view().isLive()).orElse(false);
    if (mayStartRun && nextRunLive && OperatorActions.restartPending(d) && RunStart.startIfDue(d)) {
      // a start made before (its status write deferred) is taken up before a restart request is acted on: the
      // request ends the run that is live now (api.md §6), it is not the restart that started it (one that has
      // ended already is taken up below, its ending decided before the request as ever)
      DependencyWait.started(d);
      d.switchToNextRun(seen);
      observeRun(d, d.currentPod());
      takenUp = true;
    }
    OperatorActions.requests(d, resumable);
    // a start already made (its pod exists, its status write was deferred) happened when it was let: it is
    // taken up whatever a shared dependency says since, or its pod would run on unaccounted for
    boolean mayStart = d.obs.nextRun().isPresent() || DependencyWait.mayStart(d);
    // what status says (the draft's state is the observed copy of it): a start that changes nothing else
    boolean unchanged = s.equals(current) && d.notices.isEmpty();
    if (!takenUp && mayStart && mayStartRun && RunStart.startIfDue(d)) {
      DependencyWait.started(d);
      Instant made = d.now;
      if (d.startsExisting) {
        d.switchToNextRun(seen);
        observeRun(d, d.currentPod());
        made = d.currentPod().map(PodView::createdAt).orElse(d.now);
      } else {
        lookAgainUnseen(d);
      }
      d.deferStatus = unchanged && s.run > 1 && d.reasonCode == null && QuietStart.awaitingFirstSign(d, made);
    } else if (d.notices.isEmpty() && d.reasonCode == null && QuietStart.onlyNowRunning(current, s)) {
      d.deferStatus = d.currentPod().map(p -> QuietStart.awaitingFirstSign(d, p.createdAt())).orElse(false);
    }
    if (s.phase == Phase.Backoff || s.phase == Phase.CircuitOpen) {
      d.wakeAt(s.nextRestartAt);
      if ((takenUp || d.startsExisting) && s.nextRestartAt != null && !s.nextRestartAt.isAfter(d.now)) {
        // this decision's start was one made before (its status write deferred), whose run has ended already and
        // asked for a restart due now (exit 42, Ignore, a request): the next look makes it, at once
        d.wakeAt(d.now.plusMillis(1));
      }
    }
    return d;
  }

  /**
   * The pod a decision asked for could not be created: the same decision again from the same inputs
   * ({@code current}, {@code seen}, {@code now}, a generator seeded alike) but without the start, so what
   * it recorded stays recorded (a run's ending, a request it acted on, a resume out of a terminal phase)
   * and only the run that never started is not counted; then the refusal itself (api.md §4).
   */
  public Decision spawnFailed(RestartPolicy policy, InstanceState current, Sighting seen, boolean invalidTemplate,
      String message, Instant now, RandomGenerator random) {
    DecisionDraft d = decide(policy, current, seen, now, random, false);
    SpawnFailure.apply(d, invalidTemplate, message);
    return d.build();
  }

  /**
   * A pod just asked for may never change again where nothing runs it (no node takes it, a bare API
   * server): the deadlines its run is judged by must come as wake-ups of their own, not only with the
   * pod's next change. The end of startupGrace (its creation has whole seconds: a second later at most)
   * and the bound of a circuit's HalfOpen trial.
   */
  private static void lookAgainUnseen(DecisionDraft d) {
    d.policy.heartbeat().startupGrace().ifPresent(g -> d.wakeAt(d.now.plus(g).plusSeconds(1)));
    if (d.state.circuit.state() == CircuitState.HalfOpen && d.state.circuit.halfOpenAt() != null) {
      d.wakeAt(CircuitBreaker.trialDeadline(d.state.circuit, d.policy.circuitBreaker()));
    }
  }

  /** The current run: its ending, or its progress while it lives. */
  private void observeRun(DecisionDraft d, Optional<PodView> pod) {
    InstanceState s = d.state;
    if (pod.isPresent() && decidedButLive(d, pod.get())) {
      d.endRun = true; // its ending was recorded, its pod not deleted yet: the operator stopped in between
      return;
    }
    if (pod.isPresent() && pod.get().isLive()) {
      s.heartbeat = LivenessGate.track(s.heartbeat, d.obs.lease().orElse(null), d.now);
    }
    Optional<RunEnding> ending = d.obs.ending()
        .filter(e -> e.pod().equals(s.currentPod) && !s.hasRecorded(e.podUid()));
    // a run that ended (recorded already) while its pod lives on, sidecars running, is no live run: a resume
    // out of a terminal phase that kept it for logs waits for it to go, it does not make it Running again
    boolean ended = pod.isPresent() && d.obs.ending().filter(e -> e.pod().equals(pod.get().name())).isPresent();
    if (ending.isPresent() && !s.phase.isTerminal()) {
      FailureSteps.runEnded(d, ending.get(), evaluators);
    } else if (pod.isPresent() && pod.get().isLive() && !s.phase.isTerminal() && !ended) {
      progress(d, pod.get());
    }
  }

  /**
   * A run whose end a decision recorded (its pod's uid is in history) while its agent still runs and its pod is not
   * being deleted: the decision that ended it (a stall, a restart request, ...) writes status before it deletes the
   * pod, and the operator stopped in between. Its pod is deleted now; the run is not observed again (it would be
   * taken for a live run, or, once gone, for a pod someone else deleted).
   */
  static boolean decidedButLive(DecisionDraft d, PodView pod) {
    boolean agentEnded = d.obs.ending().filter(e -> e.pod().equals(pod.name())).isPresent();
    return pod.isLive() && pod.stage() != PodView.Stage.TERMINATING && !agentEnded && d.state.hasRecorded(pod.uid());
  }

  /** A live current run: Starting -> Running, liveness, HalfOpen bound, end of the failure sequence. */
  private void progress(DecisionDraft d, PodView pod) {
    InstanceState s = d.state;
    RestartPolicy p = d.policy;
    if (pod.stage() == PodView.Stage.RUNNING && s.phase != Phase.Running) {
      s.phase = Phase.Running;
      s.runStartedAt = QuietStart.runningSince(d, pod);
    }
    LeaseView lease = d.obs.lease().orElse(null);
    Judgement j = LivenessGate.judge(p, lease, pod, s.runStartedAt, d.now);
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
        s.heartbeat = LivenessGate.stale(j.liveness(), d.now);
        d.notice(Notice.warning(EventReason.HeartbeatStale, "Heartbeat of " + d.instance() + " is stale: "
            + j.liveness().message()));
      }
      d.endRun = true;
      // a pod that never started keeps why (ErrImagePull, Unschedulable, ...): what a rule's reasons match, and
      // lastFailure.reason shows
      String reason = end.get() == EndingKind.NEVER_STARTED ? pod.waitingReason() : null;
      String message = end.get() == EndingKind.TRIAL_EXPIRED ? "HalfOpen trial neither healthy nor ended within "
          + "openDuration (" + GoDuration.format(p.circuitBreaker().openDuration()) + "): " + j.liveness().message()
          : j.liveness().message();
      FailureSteps.runEnded(d, new RunEnding(pod.name(), pod.uid(), end.get(), null, reason, message, d.now),
          evaluators);
      return;
    }
    // a probe of a shared dependency proves it healthy the same way (api.md §11)
    boolean sequenceOpen = s.attempt > 0 || s.circuit.state() != CircuitState.Closed || s.resume.attempts() > 0
        || s.waitingFor != null;
    if (s.phase == Phase.Running && sequenceOpen && s.runStartedAt != null) {
      // healthy for resetAfter: counted from when the run became Ready (status shows since when), not from its
      // start; a run Ready only now starts counting now (its Ready=True is written by this decision)
      Instant healthySince = s.runStartedAt;
      if (j.liveness().ready()) {
        healthySince = s.readySince == null ? d.now
            : s.readySince.isAfter(s.runStartedAt) ? s.readySince : s.runStartedAt;
      }
      Instant healthyAt = healthySince.plus(p.resetAfter());
      // with heartbeats, "healthy for resetAfter" needs a heartbeat seen after that point too: an agent
      // that renewed once and hung must not end its failure sequence just because resetAfter <= timeout
      // a renewal the agent made before this process first looked: a restarted operator grants every live run a
      // full timeout from that look (api.md §12), which keeps a run fresh but proves nothing about when the agent
      // was last heard; its renewTime is the agent's clock. Only a renewal this process sees change counts.
      Instant heard = lease != null && lease.firstSight() ? null : LivenessGate.lastSeen(lease);
      boolean heardSince = p.heartbeat().timeout().isEmpty() || (heard != null && !heard.isBefore(healthyAt));
      if (!d.now.isBefore(healthyAt) && j.liveness().ready() && heardSince) {
        RunStart.endSequence(d);
      } else if (healthyAt.isAfter(d.now)) {
        d.wakeAt(healthyAt);
      } else {
        // a renewal alone wakes nothing (api.md §12): look again when the next one is due, an agent renewing at
        // a third of the timeout as documented, not only at the expiry check a whole timeout after the last
        p.heartbeat().timeout().ifPresent(t -> d.wakeAt(d.now.plus(t.dividedBy(3))));
        j.nextCheck().ifPresent(d::wakeAt);
      }
    }
  }
}

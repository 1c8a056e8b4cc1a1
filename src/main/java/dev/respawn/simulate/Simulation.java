package dev.respawn.simulate;

import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.api.v1alpha1.HealthVerdict;
import dev.respawn.api.v1alpha1.InterruptionClass;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.policy.Decision;
import dev.respawn.policy.EndingKind;
import dev.respawn.policy.EventReason;
import dev.respawn.policy.GoDuration;
import dev.respawn.policy.InstanceState;
import dev.respawn.policy.LeaseView;
import dev.respawn.policy.PodView;
import dev.respawn.policy.PolicyCompiler;
import dev.respawn.policy.PolicyInvalidException;
import dev.respawn.policy.ReasonCode;
import dev.respawn.policy.RestartEvaluator;
import dev.respawn.policy.RestartPolicy;
import dev.respawn.policy.RunEnding;
import dev.respawn.policy.Tier;
import dev.respawn.simulate.SimulationReport.Event;
import dev.respawn.simulate.SimulationReport.PolicyInfo;
import dev.respawn.simulate.SimulationReport.Row;
import dev.respawn.simulate.SimulationReport.Summary;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Plays a story through the real decision core ({@link RestartEvaluator#decide}) the way the controller
 * drives it, over virtual time: it keeps the status, the current pod and the heartbeat Lease, reconciles
 * when a run starts, runs and ends, and at every deadline the core asks to be woken at (a Backoff wait,
 * a heartbeat deadline, resetAfter, a HalfOpen trial). Reconciles happen exactly at those deadlines, pods
 * start and stop at once: the simulation shows the policy's timing, not the cluster's latency.
 *
 * <p>Jitter comes from one {@link SplittableRandom} seeded with the given seed, so a seed reproduces a
 * simulation exactly; a policy without jitter gives the same result for every seed.
 */
public final class Simulation {
  /** Virtual t=0: the first run starts here. Event messages print instants, so epoch + t reads as t. */
  public static final Instant T0 = Instant.EPOCH;
  static final String INSTANCE = "agent";
  private static final int MAX_WAKEUPS = 1_000_000;

  private final RestartPolicy policy;
  private final RestartEvaluator evaluator;
  private final SplittableRandom random;
  private final String namespace;

  private InstanceState state = new InstanceState();
  private Instant now = T0;
  private final SimulatedPods pods;
  private PodView pod;
  private LeaseView lease;
  private StoryStep.LeaseNotes annotations = StoryStep.LeaseNotes.NONE;
  private Decision last;
  private int uidSeq;
  private Instant runStart;

  private final List<Event> events = new ArrayList<>();
  private final List<String> notes = new ArrayList<>();

  /**
   * @param policy the compiled policy (after the tier's gate)
   * @param evaluator the decision core, as the operator builds it for its tier
   * @param seed the jitter seed
   * @param namespace the namespace shown in event messages
   */
  public Simulation(RestartPolicy policy, RestartEvaluator evaluator, long seed, String namespace) {
    this.policy = policy;
    this.evaluator = evaluator;
    this.random = new SplittableRandom(seed);
    this.namespace = namespace;
    this.pods = new SimulatedPods(namespace, INSTANCE);
  }

  /**
   * Compiles a policy with the operator's rules, applies the tier's soft gate and plays the story with
   * the tier's decision core.
   *
   * @param seed the jitter seed; null: a random one when the policy has jitter (shown in the report)
   * @throws PolicyInvalidException the operator would refuse the policy (field and rule in the message)
   */
  public static SimulationReport simulate(PolicyFile.Loaded loaded, Story story, Tier tier, Long seed)
      throws PolicyInvalidException {
    RestartPolicy compiled = PolicyCompiler.compile(loaded.spec());
    Tier.Gated gated = tier.gate(compiled);
    RestartPolicy served = gated.policy();
    boolean jitter = served.backoff().jitter() > 0;
    long used = seed != null ? seed : jitter ? ThreadLocalRandom.current().nextLong(1, 1_000_000) : 0L;
    String ns = loaded.namespace() != null ? loaded.namespace() : "default";
    PolicyInfo info = new PolicyInfo(loaded.name(), loaded.namespace(), loaded.source(), tier.name(),
        gated.restriction().orElse(null), PolicySummary.describe(served));
    return new Simulation(served, RestartEvaluator.forTier(tier), used, ns).run(story, info,
        seed != null || jitter ? used : null);
  }

  /**
   * Plays the story once. A Simulation is used for one story only.
   *
   * @param seedShown the seed to print in the report, or null
   */
  public SimulationReport run(Story story, PolicyInfo info, Long seedShown) {
    if (last != null) {
      throw new IllegalStateException("a Simulation plays one story only");
    }
    List<Row> rows = new ArrayList<>();
    List<String> notReached = new ArrayList<>();
    String stop = null;
    Stuck stuck = null;
    Instant endedAt = T0;
    for (int i = 0; i < story.steps().size(); i++) {
      StoryStep step = story.steps().get(i);
      if (stop != null) {
        rows.add(Row.notReached(i + 1, step.token(), stop));
        notReached.add(step.token());
        continue;
      }
      events.clear();
      notes.clear();
      Played played = play(step);
      rows.add(new SimulationRows(policy, state, now, notes, events).row(i + 1, step, played));
      endedAt = played.at;
      if (played.stuck != null) {
        stuck = played.stuck;
        stop = "not reached: run " + played.run + " never ends";
      } else if (state.phase.isTerminal()) {
        stop = "not reached: the instance is " + state.phase;
      }
    }
    return new SimulationReport(info, seedShown, story.text(), rows, summary(stuck, endedAt, notReached));
  }

  /** What playing one step did. */
  record Played(int run, String pod, Instant started, Instant at, boolean ended, Stuck stuck) {}

  /** A run the operator cannot see ending: when its trouble began and why it is not seen. */
  record Stuck(Instant since, String why) {}

  private Played play(StoryStep step) {
    boolean neverStarts = step.type() == EndingType.NEVER_STARTED;
    startRunIfNeeded(neverStarts);
    annotations = step.lease();
    String uid = pod.uid();
    int run = state.run;
    String podName = pod.name();
    Instant started = runStart != null ? runStart : now;
    Duration after = step.after() != null ? step.after() : Duration.ZERO;
    switch (step.type()) {
      case OK -> {
        Duration healthy = step.after() != null ? step.after() : policy.resetAfter();
        boolean up = healthyUntil(now.plus(healthy), uid);
        if (up) {
          reconcile();
        }
        boolean ended = state.hasRecorded(uid);
        if (ended) {
          notes.add("the operator ended the run during the healthy period");
        } else if (state.attempt > 0 && Duration.between(started, now).compareTo(policy.resetAfter()) < 0) {
          notes.add("up " + GoDuration.format(Duration.between(started, now)) + ", less than resetAfter "
              + GoDuration.format(policy.resetAfter()) + ": the failure sequence goes on");
        }
        return new Played(run, podName, started, now, ended, null);
      }
      case HEARTBEAT_STALL -> {
        if (!healthyUntil(now.plus(after), uid)) {
          return endedEarly(run, podName, started);
        }
        Instant since = now;
        String why = policy.heartbeat().timeout().isEmpty()
            ? "a stalled agent is not seen without spec.heartbeat.timeout; its pod keeps running" : null;
        return awaitOperator(uid, run, podName, started, since, why);
      }
      case STALLED, CRASHED -> {
        if (!healthyUntil(now.plus(after), uid)) {
          return endedEarly(run, podName, started);
        }
        Instant since = now;
        HealthVerdict verdict = step.type() == EndingType.STALLED ? HealthVerdict.Stalled : HealthVerdict.Crashed;
        lease = new LeaseView(now, now, verdict, step.message(), annotations.checkpoint(),
            annotations.checkpointStatus(), annotations.stepIdempotent(), annotations.artifactsReady());
        pods.lease(lease, pod.name());
        reconcile();
        String why = policy.heartbeat().timeout().isEmpty() ? "the agent's " + verdict + " verdict is not acted on "
            + "without spec.heartbeat.timeout; its pod keeps running" : null;
        return awaitOperator(uid, run, podName, started, since, why);
      }
      case NEVER_STARTED -> {
        String why = policy.heartbeat().startupGrace().isEmpty() ? "a pod that never starts waits forever without "
            + "spec.heartbeat.startupGrace (or spec.heartbeat.timeout)" : null;
        return awaitOperator(uid, run, podName, started, now, why);
      }
      default -> {
        if (!healthyUntil(now.plus(after), uid)) {
          return endedEarly(run, podName, started);
        }
        endByKubernetes(step);
        return new Played(run, podName, started, now, true, null);
      }
    }
  }

  private Played endedEarly(int run, String podName, Instant started) {
    notes.add("the operator ended the run before the story's ending");
    return new Played(run, podName, started, now, true, null);
  }

  /** The operator's own deadlines end the run (heartbeat, startup grace, HalfOpen trial), or nothing does. */
  private Played awaitOperator(String uid, int run, String podName, Instant started, Instant since, String why) {
    int wakeups = 0;
    while (!state.hasRecorded(uid)) {
      Optional<Instant> wake = last.wakeAt();
      if (wake.isEmpty()) {
        Stuck stuck = new Stuck(since, why != null ? why : "the operator never ends this run");
        notes.add("not seen: " + stuck.why);
        return new Played(run, podName, started, since, false, stuck);
      }
      now = wake.get();
      reconcile();
      guard(++wakeups);
    }
    return new Played(run, podName, started, now, true, null);
  }

  /** The run stays up and healthy until {@code until} (the agent renews its Lease); false if it ended. */
  private boolean healthyUntil(Instant until, String uid) {
    int wakeups = 0;
    while (true) {
      Optional<Instant> wake = last.wakeAt();
      if (wake.isEmpty() || wake.get().isAfter(until)) {
        break;
      }
      now = wake.get();
      renew();
      reconcile();
      if (state.hasRecorded(uid)) {
        return false;
      }
      guard(++wakeups);
    }
    now = until;
    renew();
    return true;
  }

  /** Starts the next run when none is live: at nextRestartAt (Backoff, CircuitOpen), or now. */
  private void startRunIfNeeded(boolean neverStarts) {
    if (pod == null || !pod.isLive()) {
      if (state.nextRestartAt != null && state.nextRestartAt.isAfter(now)) {
        now = state.nextRestartAt;
      }
      reconcile();
      if (last.start().isEmpty()) {
        throw new IllegalStateException("the decision core started no run at " + rel(now) + " (phase "
            + state.phase + ", next restart " + state.nextRestartAt + ")");
      }
    }
    if (neverStarts) {
      pod = new PodView(pod.name(), pod.uid(), PodView.Stage.PENDING, pod.createdAt(), null, "ImagePullBackOff",
          "Back-off pulling image (simulated)", false);
      pods.update(pod, null);
      reconcile(); // the pod's status update
    } else if (pod.stage() == PodView.Stage.PENDING) {
      pod = new PodView(pod.name(), pod.uid(), PodView.Stage.RUNNING, pod.createdAt(), now, null, null, true);
      pods.update(pod, null);
      runStart = now;
      renew();
      reconcile();
    }
  }

  /** The agent renews its Lease now (when the policy asks for heartbeats or it writes annotations). */
  private void renew() {
    if (pod == null || pod.stage() != PodView.Stage.RUNNING) {
      return;
    }
    if (policy.heartbeat().timeout().isPresent() || !annotations.isEmpty()) {
      lease = new LeaseView(now, now, null, null, annotations.checkpoint(), annotations.checkpointStatus(),
          annotations.stepIdempotent(), annotations.artifactsReady());
      pods.lease(lease, pod.name());
    }
  }

  /** Kubernetes reports the run's end: the container terminated, the pod was evicted, deleted, lost. */
  private void endByKubernetes(StoryStep step) {
    PodView p = pod;
    pod = new PodView(p.name(), p.uid(), PodView.Stage.FINISHED, p.createdAt(), p.startedAt(), null, null, false);
    EndingKind kind = switch (step.type()) {
      case EVICTED -> EndingKind.DISRUPTED;
      case DELETED -> EndingKind.DELETED;
      case NODE_LOST -> EndingKind.NODE_LOST;
      case NO_STATE -> EndingKind.NO_STATE;
      default -> EndingKind.TERMINATED;
    };
    String message = step.message() != null ? step.message()
        : step.type() == EndingType.DELETED ? "pod deleted by someone else" : null;
    pods.update(pod, new RunEnding(p.name(), p.uid(), kind, step.effectiveExitCode(), step.effectiveReason(),
        message, now));
    reconcile();
  }

  /** One reconcile, as the controller does it: observe, decide, apply. */
  private void reconcile() {
    CircuitState before = state.circuit.state();
    last = evaluator.decide(policy, state, pods.sighting(false, null, null), now, random);
    state = last.state();
    pods.apply(last, now);
    for (Decision.Notice n : last.notices()) {
      events.add(new Event(n.type().name(), n.reason().name(), n.message()));
      if (n.reason() == EventReason.RestartSucceeded) {
        notes.add("healthy for " + GoDuration.format(policy.resetAfter()) + ": failure sequence ends");
      }
    }
    CircuitState after = state.circuit.state();
    if (before != after) {
      notes.add(before == CircuitState.Open && after == CircuitState.HalfOpen ? "trial run: circuit Open -> HalfOpen"
          : "circuit " + before + " -> " + after);
    }
    pod = state.currentPod == null ? null : pods.pod(state.currentPod).orElse(null);
    if (last.start().isPresent()) {
      lease = null; // the Lease counts only once the new pod holds it
      runStart = null;
    }
  }

  private static void guard(int wakeups) {
    if (wakeups > MAX_WAKEUPS) {
      throw new IllegalStateException("the simulation did not settle after " + MAX_WAKEUPS + " wake-ups");
    }
  }

  private Summary summary(Stuck stuck, Instant endedAt, List<String> notReached) {
    String outcome;
    Instant at;
    String note;
    if (state.phase.isTerminal()) {
      outcome = state.phase.name();
      at = endedAt;
      note = switch (state.phase) {
        case Succeeded -> "the agent exited cleanly";
        case Failed -> "the policy does not restart this failure; only an operator's resume continues";
        default -> "only an operator action continues: kubectl respawn resume NAME --force";
      };
    } else if (stuck != null) {
      outcome = "Stuck";
      at = stuck.since;
      note = stuck.why;
    } else if (pod == null || !pod.isLive() || pod.stage() == PodView.Stage.PENDING) {
      startRunIfNeeded(false);
      outcome = "Running";
      at = now;
      note = "run " + state.run + " started at " + rel(now) + "; the story ends before it proves healthy (add ok)";
    } else if (!Duration.between(runStart, now).minus(policy.resetAfter()).isNegative()) {
      outcome = "Healthy";
      at = runStart.plus(policy.resetAfter());
      note = "run " + state.run + " stayed healthy for resetAfter (" + GoDuration.format(policy.resetAfter()) + ")";
    } else {
      outcome = "Running";
      at = now;
      note = "run " + state.run + " is up; it counts as healthy at " + rel(runStart.plus(policy.resetAfter()));
    }
    InstanceState.DecisionInfo d = state.lastDecision;
    return new Summary(outcome, rel(at), seconds(at), state.restarts, state.run, state.phase.name(),
        state.terminalReason == null ? null : state.terminalReason.name(), d == null || d.reasonCode() == null ? null : d.reasonCode().code(),
        state.attempt, state.circuit.state().name(), state.circuit.trips(), List.copyOf(notReached), note);
  }

  /** A time relative to t=0: {@code +0s}, {@code +2s}, {@code +1m30.5s}. */
  static String rel(Instant t) {
    return "+" + GoDuration.format(Duration.between(T0, t));
  }

  static double seconds(Instant t) {
    return Duration.between(T0, t).toMillis() / 1000.0;
  }

  static String name(InterruptionClass c) {
    return c == null ? null : c.name();
  }
}

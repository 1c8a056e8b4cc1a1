package dev.respawn.simulate;

import dev.respawn.api.v1alpha1.HealthVerdict;
import dev.respawn.api.v1alpha1.InterruptionClass;
import dev.respawn.policy.GoDuration;
import dev.respawn.policy.InstanceState;
import dev.respawn.policy.PodView;
import dev.respawn.policy.PolicyCompiler;
import dev.respawn.policy.PolicyInvalidException;
import dev.respawn.policy.RestartEvaluator;
import dev.respawn.policy.RestartPolicy;
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

  private final VirtualInstance w;

  /**
   * @param policy the compiled policy (after the tier's gate)
   * @param evaluator the decision core, as the operator builds it for its tier
   * @param seed the jitter seed
   * @param namespace the namespace shown in event messages
   */
  public Simulation(RestartPolicy policy, RestartEvaluator evaluator, long seed, String namespace) {
    this.policy = policy;
    this.w = new VirtualInstance(policy, evaluator, new SplittableRandom(seed), namespace, INSTANCE, T0);
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
    if (w.last != null) {
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
      w.events.clear();
      w.notes.clear();
      Played played = play(step);
      rows.add(new SimulationRows(policy, w.state, w.now, w.notes, w.events).row(i + 1, step, played));
      endedAt = played.at;
      if (played.stuck != null) {
        stuck = played.stuck;
        stop = "not reached: run " + played.run + " never ends";
      } else if (w.state.phase.isTerminal()) {
        stop = "not reached: the instance is " + w.state.phase;
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
    w.startRunIfNeeded(neverStarts);
    w.annotations = step.lease();
    String uid = w.pod.uid();
    int run = w.state.run;
    String podName = w.pod.name();
    Instant started = w.runStart != null ? w.runStart : w.now;
    Duration after = step.after() != null ? step.after() : Duration.ZERO;
    switch (step.type()) {
      case OK -> {
        Duration healthy = step.after() != null ? step.after() : policy.resetAfter();
        boolean up = healthyUntil(w.now.plus(healthy), uid);
        if (up) {
          w.reconcile();
        }
        boolean ended = w.state.hasRecorded(uid);
        if (ended) {
          w.notes.add("the operator ended the run during the healthy period");
        } else if (w.state.attempt > 0 && Duration.between(started, w.now).compareTo(policy.resetAfter()) < 0) {
          w.notes.add("up " + GoDuration.formatMillis(Duration.between(started, w.now)) + ", less than resetAfter "
              + GoDuration.format(policy.resetAfter()) + ": the failure sequence goes on");
        }
        return new Played(run, podName, started, w.now, ended, null);
      }
      case HEARTBEAT_STALL -> {
        if (!healthyUntil(w.now.plus(after), uid)) {
          return endedEarly(run, podName, started);
        }
        Instant since = w.now;
        String why = policy.heartbeat().timeout().isEmpty()
            ? "a stalled agent is not seen without spec.heartbeat.timeout; its pod keeps running" : null;
        return awaitOperator(uid, run, podName, started, since, why);
      }
      case STALLED, CRASHED -> {
        if (!healthyUntil(w.now.plus(after), uid)) {
          return endedEarly(run, podName, started);
        }
        Instant since = w.now;
        HealthVerdict verdict = step.type() == EndingType.STALLED ? HealthVerdict.Stalled : HealthVerdict.Crashed;
        w.verdict(verdict, step.message());
        String why = policy.heartbeat().timeout().isEmpty() ? "the agent's " + verdict + " verdict is not acted on "
            + "without spec.heartbeat.timeout; its pod keeps running" : null;
        return awaitOperator(uid, run, podName, started, since, why);
      }
      case NEVER_STARTED -> {
        String why = policy.heartbeat().startupGrace().isEmpty() ? "a pod that never starts waits forever without "
            + "spec.heartbeat.startupGrace (or spec.heartbeat.timeout)" : null;
        return awaitOperator(uid, run, podName, started, w.now, why);
      }
      default -> {
        if (!healthyUntil(w.now.plus(after), uid)) {
          return endedEarly(run, podName, started);
        }
        w.endByKubernetes(step);
        return new Played(run, podName, started, w.now, true, null);
      }
    }
  }

  private Played endedEarly(int run, String podName, Instant started) {
    w.notes.add("the operator ended the run before the story's ending");
    return new Played(run, podName, started, w.now, true, null);
  }

  /** The operator's own deadlines end the run (heartbeat, startup grace, HalfOpen trial), or nothing does. */
  private Played awaitOperator(String uid, int run, String podName, Instant started, Instant since, String why) {
    int wakeups = 0;
    while (!w.state.hasRecorded(uid)) {
      Optional<Instant> wake = w.last.wakeAt();
      if (wake.isEmpty()) {
        Stuck stuck = new Stuck(since, why != null ? why : "the operator never ends this run");
        w.notes.add("not seen: " + stuck.why);
        return new Played(run, podName, started, since, false, stuck);
      }
      w.now = wake.get();
      w.reconcile();
      guard(++wakeups);
    }
    return new Played(run, podName, started, w.now, true, null);
  }

  /** The run stays up and healthy until {@code until} (the agent renews its Lease); false if it ended. */
  private boolean healthyUntil(Instant until, String uid) {
    int wakeups = 0;
    while (true) {
      Optional<Instant> wake = w.last.wakeAt();
      if (wake.isEmpty() || wake.get().isAfter(until)) {
        break;
      }
      w.now = wake.get();
      w.renew();
      w.reconcile();
      if (w.state.hasRecorded(uid)) {
        return false;
      }
      guard(++wakeups);
    }
    w.now = until;
    w.renew();
    return true;
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
    if (w.state.phase.isTerminal()) {
      outcome = w.state.phase.name();
      at = endedAt;
      note = switch (w.state.phase) {
        case Succeeded -> "the agent exited cleanly";
        case Failed -> "the policy does not restart this failure; only an operator's resume continues";
        default -> "only an operator action continues: kubectl respawn resume NAME --force";
      };
    } else if (stuck != null) {
      outcome = "Stuck";
      at = stuck.since;
      note = stuck.why;
    } else if (w.pod == null || !w.pod.isLive() || w.pod.stage() == PodView.Stage.PENDING) {
      w.startRunIfNeeded(false);
      outcome = "Running";
      at = w.now;
      note = "run " + w.state.run + " started at " + rel(w.now) + "; the story ends before it proves healthy (add ok)";
    } else if (!Duration.between(w.runStart, w.now).minus(policy.resetAfter()).isNegative()) {
      outcome = "Healthy";
      at = w.runStart.plus(policy.resetAfter());
      note = "run " + w.state.run + " stayed healthy for resetAfter (" + GoDuration.format(policy.resetAfter()) + ")";
    } else {
      outcome = "Running";
      at = w.now;
      note = "run " + w.state.run + " is up; it counts as healthy at " + rel(w.runStart.plus(policy.resetAfter()));
    }
    InstanceState.DecisionInfo d = w.state.lastDecision;
    return new Summary(outcome, rel(at), seconds(at), w.state.restarts, w.state.run, w.state.phase.name(),
        w.state.terminalReason == null ? null : w.state.terminalReason.name(), d == null || d.reasonCode() == null ? null : d.reasonCode().code(),
        w.state.attempt, w.state.circuit.state().name(), w.state.circuit.trips(), List.copyOf(notReached), note);
  }

  /** A time relative to t=0: {@code +0s}, {@code +2s}, {@code +1m30.5s}. */
  static String rel(Instant t) {
    return "+" + GoDuration.formatMillis(Duration.between(T0, t));
  }

  static double seconds(Instant t) {
    return Duration.between(T0, t).toMillis() / 1000.0;
  }

  static String name(InterruptionClass c) {
    return c == null ? null : c.name();
  }
}

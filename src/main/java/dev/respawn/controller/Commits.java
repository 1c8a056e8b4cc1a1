package dev.respawn.controller;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.policy.Decision;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Commit first, then tell: a decision's status is written, and only then is it told (Event, audit line, metrics).
 * A start whose status write waits ({@link Decision#deferStatus()}) is told with the write that shows it
 * ({@link UnwrittenStarts}).
 *
 * <p>A decision that made or deleted pods and whose status write then failed (the API server refused it, timed out,
 * was away) is owed to status: decided anew on the status from before, its own deed would look like someone
 * else's (the pod its failure's Immediate restart made was taken up with nothing told; a decision that deletes the
 * current run's pod and starts none writes before it deletes, so it is owed only if it landed). The next reconcile of
 * the instance writes it first (or finds that it landed after all), tells it, and decides again on it; the status it
 * writes says the generation the decision saw. A write the server refuses for good (422, 403, ...), or that fails again {@value #SETTLE_ATTEMPTS}
 * times, gives it up (the instance is decided anew, as if nothing were owed): such a status must not hold up every
 * later decision. A decision that touched no pod is owed only its telling: when its write failed but landed after
 * all (the answer lost to a timeout or to 5xx answers on every retry), the next reconcile finds it in status and
 * tells it, once; when it did not land, the instance is decided anew. Nothing of it survives an operator restart.
 */
final class Commits {
  /**
   * A decision, whether its pod actions follow its write ({@code actsAfter}: none was made yet), the spec generation
   * it was taken on, its status write (true when written) and its telling (its Event, audit line and metrics, and a
   * refusal first shown with it).
   */
  record Commit(Decision decision, boolean actsAfter, Long generation, Predicate<InstanceStatusWriter> write,
      Runnable tell) {}

  private static final Logger LOG = LoggerFactory.getLogger(Commits.class);

  private final DecisionSink sink;
  private final UnwrittenStarts unwritten;
  /** How often an owed commit's write may fail again before it is given up. */
  static final int SETTLE_ATTEMPTS = 2;

  /**
   * An owed commit and how often writing it failed again; {@code onlyIfLanded}: a decision that touched no pod, owed
   * only its telling, and only if its write landed after all (the answer lost: a timeout, a 5xx on every retry).
   */
  private record Owed(Commit commit, int failures, boolean onlyIfLanded) {}

  private final Map<String, Owed> owed = new ConcurrentHashMap<>();

  Commits(DecisionSink sink, UnwrittenStarts unwritten) {
    this.sink = sink;
    this.unwritten = unwritten;
  }

  /** Writes the commit's status (unless it waits), then tells it; false when the instance is gone. */
  boolean commitThenTell(AgentInstance instance, Commit commit, InstanceStatusWriter writer) {
    String uid = instance.getMetadata().getUid();
    boolean written;
    try {
      written = commit.decision().deferStatus() || commit.write().test(writer);
    } catch (RuntimeException e) {
      Decision d = commit.decision();
      // its pods were made or deleted: the next reconcile writes it first; else it is told then if status shows it
      owed.put(uid, new Owed(commit, 0, commit.actsAfter()
          || (d.deletions().isEmpty() && (d.start().isEmpty() || d.startsExisting()))));
      throw e;
    }
    if (!written) {
      return false;
    }
    if (commit.decision().deferStatus()) {
      unwritten.holdTelling(uid, commit.tell());
    } else {
      unwritten.tellHeld(uid);
      commit.tell().run();
    }
    return true;
  }

  /**
   * The instance's owed commit, written (or found landed) and told; empty when none is owed. Its wake-up: at once,
   * to decide again on the status it wrote (none when the instance is gone).
   */
  Optional<Optional<Duration>> settle(AgentInstance instance, InstanceStatusWriter writer) {
    String uid = instance.getMetadata().getUid();
    Owed entry = owed.remove(uid);
    if (entry == null) {
      return Optional.empty();
    }
    Commit due = entry.commit();
    boolean landed = StatusMapper.toState(instance.getStatus()).equals(due.decision().state());
    if (entry.onlyIfLanded() && !landed) {
      return Optional.empty(); // it never landed: nothing was done, the instance is decided anew
    }
    boolean written;
    try {
      written = landed || due.write().test(writer.observing(due.generation()));
    } catch (RuntimeException e) {
      if (PermanentRefusal.is(e) || entry.failures() + 1 >= SETTLE_ATTEMPTS) {
        LOG.warn("The status of a decision of {}/{} could not be written again ({}); it is decided anew",
            instance.getMetadata().getNamespace(), instance.getMetadata().getName(), e.getMessage());
      } else {
        owed.put(uid, new Owed(due, entry.failures() + 1, false)); // the server is away or busy: owed still
      }
      throw e;
    }
    if (written) {
      unwritten.tellHeld(uid);
      due.tell().run();
    }
    return Optional.of(written ? Optional.of(Duration.ZERO) : Optional.empty());
  }

  /** The instance is gone. */
  void forget(String instanceUid) {
    owed.remove(instanceUid);
  }

  /** How many commits are owed (tests: nothing stays). */
  int owedCount() {
    return owed.size();
  }
}

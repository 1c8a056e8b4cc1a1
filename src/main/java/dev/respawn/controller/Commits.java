package dev.respawn.controller;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.policy.Decision;
import io.fabric8.kubernetes.api.model.Pod;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Commit first, then tell: a decision's status is written, and only then is it told (Event, audit line, metrics).
 * A start whose status write waits ({@link Decision#deferStatus()}) is told with the write that shows it
 * ({@link UnwrittenStarts}).
 *
 * <p>A decision that made or deleted pods and whose status write then failed (the API server refused it, timed out,
 * was away) is owed to status: decided anew on the status from before, its own deed would look like someone
 * else's (the pod its restart request deleted "vanished": a ContextReset failure, counted; the pod its failure's
 * Immediate restart made was taken up with nothing told). The next reconcile of the instance writes it first (or
 * finds that it landed after all), tells it, and decides again on it. Nothing of it survives an operator restart.
 */
final class Commits {
  /** A decision, what it tells (its notices, maybe one more), and its status write (true when written). */
  record Commit(Decision decision, Decision told, Predicate<InstanceStatusWriter> write) {}

  private final DecisionSink sink;
  private final UnwrittenStarts unwritten;
  private final Map<String, Commit> owed = new ConcurrentHashMap<>();

  Commits(DecisionSink sink, UnwrittenStarts unwritten) {
    this.sink = sink;
    this.unwritten = unwritten;
  }

  /** Writes the commit's status (unless it waits), then tells it; false when the instance is gone. */
  boolean commitThenTell(AgentInstance instance, Commit commit, InstanceStatusWriter writer, Pod pod) {
    String uid = instance.getMetadata().getUid();
    boolean written;
    try {
      written = commit.decision().deferStatus() || commit.write().test(writer);
    } catch (RuntimeException e) {
      Decision d = commit.decision();
      if (!d.deletions().isEmpty() || (d.start().isPresent() && !d.startsExisting())) {
        owed.put(uid, commit); // its pods were made or deleted: the next reconcile writes it first
      }
      throw e;
    }
    if (!written) {
      return false;
    }
    if (commit.decision().deferStatus()) {
      unwritten.holdTelling(uid, () -> sink.decided(instance, commit.told(), pod));
    } else {
      unwritten.tellHeld(uid);
      sink.decided(instance, commit.told(), pod);
    }
    return true;
  }

  /**
   * The instance's owed commit, written (or found landed) and told; empty when none is owed. Its wake-up: at once,
   * to decide again on the status it wrote (none when the instance is gone).
   */
  Optional<Optional<Duration>> settle(AgentInstance instance, InstanceStatusWriter writer,
      Function<Decision, Pod> podOf) {
    String uid = instance.getMetadata().getUid();
    Commit due = owed.remove(uid);
    if (due == null) {
      return Optional.empty();
    }
    boolean landed = StatusMapper.toState(instance.getStatus()).equals(due.decision().state());
    boolean written;
    try {
      written = landed || due.write().test(writer);
    } catch (RuntimeException e) {
      owed.put(uid, due);
      throw e;
    }
    if (written) {
      unwritten.tellHeld(uid);
      sink.decided(instance, due.told(), podOf.apply(due.decision()));
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

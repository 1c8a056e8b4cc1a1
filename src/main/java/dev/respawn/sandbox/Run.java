package dev.respawn.sandbox;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * What the {@link SimulatedKubelet} does with one pod of a scripted instance: how long the pod stays
 * Pending, whether and how long it runs, how it ends, and whether it renews its heartbeat Lease while it
 * runs. Immutable; the withers return a copy.
 *
 * <pre>
 * kubelet.script("coder", Run.exit(1), Run.oomKilled().after(Duration.ofMillis(200)),
 *     Run.runForever().heartbeat(Duration.ofMillis(100), "respawn.dev/checkpoint", "ckpt-3"));
 * </pre>
 */
public final class Run {
  /** How a run ends. */
  public enum Ending {
    /** Keeps running until someone deletes the pod or a manual command ends it. */
    NEVER,
    /** The containers terminate with {@link #exitCode()}, {@link #reason()}, {@link #message()}. */
    EXIT,
    /** Evicted by the kubelet: phase Failed, reason Evicted, a DisruptionTarget condition. */
    EVICTED,
    /** Never leaves Pending: a waiting reason (ErrImagePull, ...) or Unschedulable. */
    STUCK_PENDING,
    /** Someone else deletes the running pod. */
    DELETED
  }

  private final Ending ending;
  private final int exitCode;
  private final String reason;
  private final String message;
  private final Duration startAfter;
  private final Duration after;
  private final Duration heartbeatPeriod;
  private final List<String> heartbeatAnnotations;

  private Run(Ending ending, int exitCode, String reason, String message, Duration startAfter, Duration after,
      Duration heartbeatPeriod, List<String> heartbeatAnnotations) {
    this.ending = ending;
    this.exitCode = exitCode;
    this.reason = reason;
    this.message = message;
    this.startAfter = startAfter;
    this.after = after;
    this.heartbeatPeriod = heartbeatPeriod;
    this.heartbeatAnnotations = heartbeatAnnotations;
  }

  private static Run of(Ending ending, int exitCode, String reason, String message) {
    return new Run(ending, exitCode, reason, message, Duration.ZERO, Duration.ZERO, null, List.of());
  }

  /** Starts running and keeps running. */
  public static Run runForever() {
    return of(Ending.NEVER, 0, null, null);
  }

  /** Runs, then every container exits with this code (reason Completed for 0, Error otherwise). */
  public static Run exit(int exitCode) {
    return exit(exitCode, exitCode == 0 ? "Completed" : "Error", "");
  }

  /** Runs, then every container exits with this code, termination reason and termination message. */
  public static Run exit(int exitCode, String reason, String message) {
    return of(Ending.EXIT, exitCode, Objects.requireNonNull(reason), message == null ? "" : message);
  }

  /** Runs, then is OOM-killed (exit code 137, reason OOMKilled). */
  public static Run oomKilled() {
    return exit(137, "OOMKilled", "");
  }

  /** Runs, then is killed at its active deadline (exit code 137, reason DeadlineExceeded). */
  public static Run deadlineExceeded() {
    return exit(137, "DeadlineExceeded", "");
  }

  /** Runs, then is evicted by the kubelet. */
  public static Run evicted() {
    return of(Ending.EVICTED, 137, "Evicted", "The node was low on resource: memory.");
  }

  /** Stays Pending: {@code waitingReason} ErrImagePull, ImagePullBackOff, CreateContainerConfigError, Unschedulable. */
  public static Run stuckPending(String waitingReason, String message) {
    return of(Ending.STUCK_PENDING, 0, Objects.requireNonNull(waitingReason), message == null ? "" : message);
  }

  /** Runs, then someone other than the operator deletes the pod. */
  public static Run deletedBySomeoneElse() {
    return of(Ending.DELETED, 0, null, null);
  }

  /** Stays Pending this long before it starts running (default: at once). */
  public Run startAfter(Duration delay) {
    return new Run(ending, exitCode, reason, message, nonNegative(delay), after, heartbeatPeriod,
        heartbeatAnnotations);
  }

  /** Runs this long before it ends (default: it ends right after it started). */
  public Run after(Duration runTime) {
    return new Run(ending, exitCode, reason, message, startAfter, nonNegative(runTime), heartbeatPeriod,
        heartbeatAnnotations);
  }

  /**
   * While running, renews the pod's Lease (env RESPAWN_LEASE_NAME of the pod, else the instance name)
   * every {@code period} with verdict Healthy and these annotations (key, value pairs), and once at once.
   */
  public Run heartbeat(Duration period, String... annotations) {
    if (annotations.length % 2 != 0) {
      throw new IllegalArgumentException("annotations come in key, value pairs");
    }
    return new Run(ending, exitCode, reason, message, startAfter, after, SimulatedKubelet.checkPeriod(period),
        List.copyOf(Arrays.asList(annotations)));
  }

  private static Duration nonNegative(Duration d) {
    if (d.isNegative()) {
      throw new IllegalArgumentException("negative duration " + d);
    }
    return d;
  }

  public Ending ending() {
    return ending;
  }

  public int exitCode() {
    return exitCode;
  }

  public String reason() {
    return reason;
  }

  public String message() {
    return message;
  }

  public Duration startDelay() {
    return startAfter;
  }

  public Duration runTime() {
    return after;
  }

  /** The heartbeat period, null when this run does not renew its Lease. */
  public Duration heartbeatPeriod() {
    return heartbeatPeriod;
  }

  public List<String> heartbeatAnnotations() {
    return heartbeatAnnotations;
  }

  @Override
  public String toString() {
    return "Run[" + ending + (ending == Ending.EXIT ? " " + exitCode + " " + reason : "")
        + (after.isZero() ? "" : " after " + after) + "]";
  }
}

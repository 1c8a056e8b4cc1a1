package dev.respawn.simulate;

import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;

/**
 * How one step of a story ends the current run. The first group is what Kubernetes reports (the
 * controller turns it into a {@link dev.respawn.policy.RunEnding}); the second group is only seen by
 * the decision core itself (heartbeats, a pod that never starts); {@link #OK} does not end the run.
 */
public enum EndingType {
  EXIT("exit", "exit:N[:MESSAGE]", "the agent container exits with code N (0..255); MESSAGE is its termination "
      + "message (no commas in the compact form)"),
  OOM("oom", "oom", "killed for memory: exit 137, reason OOMKilled"),
  DEADLINE("deadline", "deadline", "the pod's activeDeadlineSeconds ran out: reason DeadlineExceeded"),
  EVICTED("evicted", "evicted", "the pod is evicted (reason Evicted, DisruptionTarget)"),
  DELETED("deleted", "deleted", "someone else deletes the pod"),
  NODE_LOST("node-lost", "node-lost", "the pod's node is lost"),
  NO_STATE("no-state", "no-state", "the pod fails without any termination state (class Unknown)"),
  HEARTBEAT_STALL("heartbeat-stall", "heartbeat-stall", "the agent stops renewing its heartbeat Lease; seen "
      + "only with spec.heartbeat.timeout"),
  STALLED("stalled", "stalled", "the agent sets respawn.dev/health: Stalled on its Lease"),
  CRASHED("crashed", "crashed", "the agent sets respawn.dev/health: Crashed on its Lease"),
  NEVER_STARTED("never-started", "never-started", "the pod never starts (ImagePullBackOff) until "
      + "spec.heartbeat.startupGrace runs out"),
  OK("ok", "ok[:DURATION]", "the run stays healthy for DURATION (default: the policy's resetAfter) and goes on; "
      + "the next step ends this same run");

  private final String token;
  private final String form;
  private final String description;

  EndingType(String token, String form, String description) {
    this.token = token;
    this.form = form;
    this.description = description;
  }

  /** The name used in stories, e.g. {@code heartbeat-stall}. */
  public String token() {
    return token;
  }

  /** The compact form, e.g. {@code exit:N[:MESSAGE]}. */
  public String form() {
    return form;
  }

  public String description() {
    return description;
  }

  /** The type named {@code name} (case-insensitive), if any. */
  public static Optional<EndingType> named(String name) {
    String n = name.toLowerCase(Locale.ROOT);
    return Arrays.stream(values()).filter(t -> t.token.equals(n)).findFirst();
  }

  /** Endings Kubernetes reports (the pod or its container ended): they take an exit code or message. */
  boolean reportedByKubernetes() {
    return this == EXIT || this == OOM || this == DEADLINE || this == EVICTED || this == DELETED
        || this == NODE_LOST || this == NO_STATE;
  }
}

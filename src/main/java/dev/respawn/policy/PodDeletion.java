package dev.respawn.policy;

/**
 * A pod the decision deletes: its name and UID (the delete carries the UID as a precondition, so a
 * pod of the same name made since is never touched) and why.
 */
public record PodDeletion(String name, String uid, Why why) {

  public enum Why {
    /** The decision ends the live current run (stall, suspend, restart request, HalfOpen trial expiry). */
    END_RUN,
    /** The run ended (its agent container terminated) while the pod lives on, e.g. with sidecars. */
    ENDED_BUT_LIVE,
    /** A finished pod of an earlier run, kept for kubectl logs until the next run was running. */
    FINISHED_EARLIER_RUN
  }
}

package dev.respawn.policy;

import java.util.Optional;

/**
 * One pod as the controller saw it: its stage, the run number of its {@code respawn.dev/run} label (0
 * when missing or not a number), the UID of its controller ownerReference (null when it has none), and
 * how its run ended, once it did.
 */
public record PodFacts(PodView view, int run, String controllerUid, Optional<RunEnding> ending) {

  public String name() {
    return view.name();
  }

  public String uid() {
    return view.uid();
  }

  /** True when the instance with this UID controls the pod: only such pods are adopted, ended or deleted. */
  public boolean controlledBy(String instanceUid) {
    return instanceUid != null && instanceUid.equals(controllerUid);
  }
}

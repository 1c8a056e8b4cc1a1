package dev.respawn.simulate;

import dev.respawn.policy.Decision;
import dev.respawn.policy.LeaseView;
import dev.respawn.policy.PodDeletion;
import dev.respawn.policy.PodFacts;
import dev.respawn.policy.PodView;
import dev.respawn.policy.Request;
import dev.respawn.policy.RunEnding;
import dev.respawn.policy.Sighting;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The pods and the heartbeat Lease of one simulated instance, kept the way the API server would keep
 * them: a decision's start adds a pod the instance controls, its deletions remove pods at once, and
 * the core sees all of it through the same {@link Sighting} the controller builds. The what-if tool
 * and the property tests drive the core through the same observe step as the operator.
 */
public final class SimulatedPods {
  /** The simulated instance's UID: the controller ownerReference of every pod it starts. */
  public static final String INSTANCE_UID = "simulated-instance-uid";
  private final String namespace;
  private final String instance;
  private final List<PodFacts> pods = new ArrayList<>();
  private int uidSeq;
  private LeaseView lease;
  private String holder;

  public SimulatedPods(String namespace, String instance) {
    this.namespace = namespace;
    this.instance = instance;
  }

  /** What the controller would see now. */
  public Sighting sighting(boolean suspend, java.util.Map<dev.respawn.api.v1alpha1.OperatorRequest, Request> requests) {
    return new Sighting(namespace, instance, INSTANCE_UID, suspend, pods, true, Optional.ofNullable(lease), holder,
        requests, java.util.Map.of());
  }

  /** Executes the decision's pod actions: deletions remove pods at once, a start adds a pending pod. */
  public void apply(Decision d, Instant now) {
    for (PodDeletion x : d.deletions()) {
      pods.removeIf(p -> p.uid().equals(x.uid()));
    }
    d.start().filter(s -> !d.startsExisting()).ifPresent(s -> pods.add(new PodFacts(new PodView(s.podName(),
        "uid-" + (++uidSeq), PodView.Stage.PENDING, now, null, null, null, false), s.run(), INSTANCE_UID,
        Optional.empty())));
  }

  /** The pod of that name, when it exists. */
  public Optional<PodView> pod(String name) {
    return pods.stream().filter(p -> p.name().equals(name)).map(PodFacts::view).findFirst();
  }

  /** The pod of that name changes (it runs, it cannot start, it ends). */
  public void update(PodView view, RunEnding ending) {
    for (int i = 0; i < pods.size(); i++) {
      PodFacts p = pods.get(i);
      if (p.name().equals(view.name())) {
        pods.set(i, new PodFacts(view, p.run(), p.controllerUid(), Optional.ofNullable(ending)));
      }
    }
  }

  /** The pod of that name is gone (deleted by someone else, its node lost). */
  public void remove(String name) {
    pods.removeIf(p -> p.name().equals(name));
  }

  /** The Lease as the agent of {@code holderPod} renewed it (null: nobody renewed it yet). */
  public void lease(LeaseView view, String holderPod) {
    lease = view;
    holder = holderPod;
  }

  public LeaseView lease() {
    return lease;
  }
}

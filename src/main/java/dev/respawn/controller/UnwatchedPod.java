package dev.respawn.controller;

import dev.respawn.api.v1alpha1.AgentInstance;
import io.fabric8.kubernetes.api.model.Pod;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Function;

/**
 * The current run's pod read from the API server because the watch does not show it: the pod watch selects on
 * the {@code respawn.dev/instance} label, and someone removed it from a pod the instance still owns (api.md §2:
 * ownership is the controller ownerReference, not the label). No event will tell how that run goes, so the
 * instance looks at it again every {@link #LOOK_AGAIN} while it lives: a run that ends is still seen to end.
 */
final class UnwatchedPod {
  static final Duration LOOK_AGAIN = Duration.ofSeconds(5);

  private final String instance;
  private Pod read;

  UnwatchedPod(AgentInstance instance) {
    this.instance = instance.getMetadata().getName();
  }

  /** {@code get}, remembering a pod it found. */
  Function<String, Pod> reading(Function<String, Pod> get) {
    return name -> {
      Pod p = get.apply(name);
      if (p != null) {
        read = p;
      }
      return p;
    };
  }

  /** The wake-up a decision asked for, no later than a look again at a live pod the watch cannot show. */
  Optional<Duration> lookAgain(Optional<Duration> wake) {
    // live as the core sees it, terminating included: its removal comes as no event either
    boolean unwatched = read != null && PodObserver.view(read, null).isLive()
        && (read.getMetadata().getLabels() == null
            || !instance.equals(read.getMetadata().getLabels().get(AgentInstance.INSTANCE_LABEL)));
    if (!unwatched) {
      return wake;
    }
    return Optional.of(wake.filter(w -> w.compareTo(LOOK_AGAIN) < 0).orElse(LOOK_AGAIN));
  }
}

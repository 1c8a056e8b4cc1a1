package dev.respawn.observability;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.policy.Decision;
import dev.respawn.policy.Decision.Notice;
import dev.respawn.policy.InstanceState;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The metrics of api.md §8 (the seed's restart.* and circuit_breaker.* names under respawn.*).
 * Tags are bounded: result, class, kind and state; nothing per instance name.
 */
public final class RestartMetrics {
  private final MeterRegistry registry;
  private final DistributionSummary calculated;
  private final DistributionSummary actual;
  private final Counter exhausted;
  private final Counter trips;
  private final Counter stale;
  private final Timer decisions;
  private final Map<String, CircuitState> circuits = new ConcurrentHashMap<>();
  /** The shared circuits, by "namespace/policy/dependency", and how many instances wait for each. */
  private final Map<String, CircuitState> dependencyStates = new ConcurrentHashMap<>();
  private final Map<String, Integer> dependencyWaiting = new ConcurrentHashMap<>();
  private final Counter dependencyTrips;

  public RestartMetrics(MeterRegistry registry) {
    this.registry = registry;
    calculated = delay("calculated");
    actual = delay("actual");
    exhausted = Counter.builder("respawn.restart.exhausted").description("Failure sequences that ran out of retries")
        .register(registry);
    trips = Counter.builder("respawn.circuit.trips").description("Times a circuit breaker opened").register(registry);
    stale = Counter.builder("respawn.heartbeat.stale").description("Runs ended by a stale heartbeat")
        .register(registry);
    dependencyTrips = Counter.builder("respawn.dependency.trips").description("Times a shared dependency's circuit "
        + "opened").register(registry);
    for (CircuitState s : CircuitState.values()) {
      Gauge.builder("respawn.dependency.circuits", dependencyStates, m -> m.values().stream().filter(s::equals).count())
          .description("Shared dependency circuits per state").tag("state", s.name()).register(registry);
    }
    Gauge.builder("respawn.dependency.waiting", dependencyWaiting,
        m -> m.values().stream().mapToInt(Integer::intValue).sum())
        .description("Instances waiting for a shared dependency").register(registry);
    decisions = Timer.builder("respawn.decision.duration").description("Time of one restart decision")
        .publishPercentiles(0.5, 0.99).register(registry);
    // every result and class from the start: a rate over a counter that appears late misses its first count
    for (String result : List.of("started", "succeeded", "failed")) {
      attemptCounter(result, "None");
      for (dev.respawn.api.v1alpha1.InterruptionClass c : dev.respawn.api.v1alpha1.InterruptionClass.values()) {
        attemptCounter(result, c.name());
      }
    }
    for (CircuitState s : CircuitState.values()) {
      Gauge.builder("respawn.circuit.breakers", circuits, m -> m.values().stream().filter(s::equals).count())
          .description("Instances per circuit breaker state").tag("state", s.name()).register(registry);
    }
  }

  private DistributionSummary delay(String kind) {
    return DistributionSummary.builder("respawn.restart.delay").baseUnit("seconds")
        .description("Restart delay: calculated by the policy, actual between decision and new pod")
        .tag("kind", kind).publishPercentiles(0.5, 0.99).register(registry);
  }

  public MeterRegistry registry() {
    return registry;
  }

  /** Counts one applied decision. */
  public void record(AgentInstance instance, Decision d) {
    InstanceState s = d.state();
    circuits.put(instance.getMetadata().getNamespace() + "/" + instance.getMetadata().getName(), s.circuit.state());
    String failureClass = s.lastFailure == null || s.lastFailure.interruptionClass() == null ? "None"
        : s.lastFailure.interruptionClass().name();
    trips.increment(d.circuitTrips());
    for (Notice n : d.notices()) {
      switch (n.reason()) {
        case RestartStarted -> {
          attempts("started", s.lastRestart != null && s.lastRestart.kind() == dev.respawn.policy.RestartKind.Failure ? failureClass : "None");
          if (s.lastRestart != null && s.lastRestart.requestedAt() != null && s.lastRestart.startedAt() != null) {
            actual.record(seconds(Duration.between(s.lastRestart.requestedAt(), s.lastRestart.startedAt())));
          }
        }
        case RestartSucceeded -> attempts("succeeded", failureClass);
        case RestartFailed -> attempts("failed", failureClass);
        case RestartExhausted -> exhausted.increment();
        case HeartbeatStale -> stale.increment();
        case RestartScheduled -> {
          if (s.lastDecision != null) {
            calculated.record(s.lastDecision.delaySeconds());
          }
        }
        default -> { }
      }
    }
  }

  /** The shared circuits of one policy ("namespace/name") as last written. */
  public void dependencies(String policy, List<dev.respawn.policy.DependencyCircuit> shared) {
    // each entry replaced in place, then those no longer there dropped: a scrape meanwhile never sees a circuit
    // missing that is still there (an Open circuit read as none for a moment would make an alert flap)
    java.util.Set<String> now = new java.util.HashSet<>();
    for (var c : shared) {
      now.add(policy + "/" + c.name());
      dependencyStates.put(policy + "/" + c.name(), c.state());
      dependencyWaiting.put(policy + "/" + c.name(), c.waiting());
    }
    dependencyStates.keySet().removeIf(k -> k.startsWith(policy + "/") && !now.contains(k));
    dependencyWaiting.keySet().removeIf(k -> k.startsWith(policy + "/") && !now.contains(k));
  }

  public void dependencyTripped() {
    dependencyTrips.increment();
  }

  public void decisionTook(Duration d) {
    decisions.record(d);
  }

  /** How many instances the circuit gauge counts. */
  public int instancesTracked() {
    return circuits.size();
  }

  /** Forgets an instance that no longer exists (its circuit no longer counts). */
  public void forget(String namespace, String name) {
    circuits.remove(namespace + "/" + name);
  }

  private void attempts(String result, String failureClass) {
    attemptCounter(result, failureClass).increment();
  }

  private Counter attemptCounter(String result, String failureClass) {
    return Counter.builder("respawn.restart.attempts").description("Restart attempts by result and interruption class")
        .tag("result", result).tag("class", failureClass).register(registry);
  }

  private static double seconds(Duration d) {
    return d.toNanos() / 1e9;
  }
}

package dev.respawn.bench;

import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.api.v1alpha1.BackoffSpec;
import dev.respawn.api.v1alpha1.CircuitBreakerSpec;
import dev.respawn.api.v1alpha1.RestartLimitSpec;
import dev.respawn.policy.Decision;
import dev.respawn.policy.EndingKind;
import dev.respawn.policy.InstanceState;
import dev.respawn.policy.LeaseView;
import dev.respawn.policy.PodFacts;
import dev.respawn.policy.Sighting;
import java.util.List;
import java.util.Optional;
import dev.respawn.policy.PodView;
import dev.respawn.policy.PolicyCompiler;
import dev.respawn.policy.RestartEvaluator;
import dev.respawn.policy.RestartPolicy;
import dev.respawn.policy.RunEnding;
import dev.respawn.api.v1alpha1.HealthVerdict;
import java.time.Instant;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Cost of one decision through {@link RestartEvaluator#decide}: a failure with a full policy
 * (rules, window, circuit, resume from a checkpoint) and a steady-state heartbeat check. Sample
 * time mode, so JMH reports p50/p99 per decision. Run with {@code make bench}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class DecisionBenchmark {
  private final RestartEvaluator evaluator = RestartEvaluator.builtIn();
  private RestartPolicy policy;
  private InstanceState running;
  private static final String UID = "instance-uid";
  private Sighting failure;
  private Sighting heartbeat;
  private Instant now;
  private final SplittableRandom random = new SplittableRandom(1);

  @Setup
  public void setup() throws Exception {
    AgentRestartPolicySpec spec = new AgentRestartPolicySpec();
    spec.backoff = new BackoffSpec();
    spec.backoff.jitter = 0.25;
    spec.maxRetries = 10;
    spec.restartLimit = new RestartLimitSpec();
    spec.restartLimit.maxRestarts = 50;
    spec.restartLimit.window = "1h";
    spec.circuitBreaker = new CircuitBreakerSpec();
    spec.circuitBreaker.failureThreshold = 20;
    spec.heartbeat = new dev.respawn.api.v1alpha1.PolicyHeartbeatSpec();
    spec.heartbeat.timeout = "60s";
    var rule = new dev.respawn.api.v1alpha1.FailureRule();
    rule.name = "config";
    rule.action = "Fail";
    rule.match = new dev.respawn.api.v1alpha1.FailureMatch();
    rule.match.messageContains = java.util.List.of("invalid_configuration");
    spec.failureRules = java.util.List.of(rule);
    policy = PolicyCompiler.compile(spec);
    now = Instant.parse("2026-11-22T10:00:00Z");
    InstanceState start = new InstanceState();
    Decision first = evaluator.decide(policy, start, sighting(List.of(), null), now, random);
    PodView pod = new PodView("coder-1", "uid-1", PodView.Stage.RUNNING, now, now, null, null, true);
    LeaseView lease = new LeaseView(now, now, HealthVerdict.Healthy, "step 3", "ckpt-3", "in_progress", true, true);
    heartbeat = sighting(List.of(new PodFacts(pod, 1, UID, Optional.empty())), lease);
    running = evaluator.decide(policy, first.state(), heartbeat, now, random).state();
    PodView ended = new PodView("coder-1", "uid-1", PodView.Stage.FINISHED, now, now, null, null, false);
    failure = sighting(List.of(new PodFacts(ended, 1, UID, Optional.of(new RunEnding("coder-1", "uid-1",
        EndingKind.TERMINATED, 1, "Error", "network_timeout: upstream", now.plusSeconds(30))))), lease);
  }

  private static Sighting sighting(List<PodFacts> pods, LeaseView lease) {
    return new Sighting("agents", "coder", UID, false, pods, true, Optional.ofNullable(lease), "coder-1",
        java.util.Map.of(), java.util.Map.of());
  }

  @Benchmark
  public Decision failureDecision() {
    return evaluator.decide(policy, running, failure, now.plusSeconds(30), random);
  }

  @Benchmark
  public Decision heartbeatCheck() {
    return evaluator.decide(policy, running, heartbeat, now.plusSeconds(20), random);
  }
}

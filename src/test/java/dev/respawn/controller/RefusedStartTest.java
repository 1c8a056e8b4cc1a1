package dev.respawn.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.policy.InstanceState;
import dev.respawn.policy.PolicyCompiler;
import dev.respawn.policy.RestartEvaluator;
import dev.respawn.policy.RestartPolicy;
import dev.respawn.simulate.SimulatedPods;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** A refused start's retry made early: once the pod that held its name is gone, and never below a second after. */
class RefusedStartTest {
  static final Instant T0 = Instant.parse("2026-11-27T10:00:00Z");
  static final String IN_THE_WAY = "pod coder-1 belongs to an earlier AgentInstance of this name (deleted; the "
      + "garbage collector deletes its pods, this one is stopping); the start is tried again until it is gone";
  static final String QUOTA = "pods \"coder-1\" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=1, "
      + "limited: pods=1";
  static final Pod THERE = new PodBuilder().withNewMetadata().withName("coder-1").endMetadata().build();

  final RestartPolicy policy = compile();
  final RestartEvaluator evaluator = RestartEvaluator.builtIn();
  final SimulatedPods pods = new SimulatedPods("agents", "coder");
  final AgentInstance instance = instance();

  static RestartPolicy compile() {
    try {
      return PolicyCompiler.compile(new AgentRestartPolicySpec());
    } catch (dev.respawn.policy.PolicyInvalidException e) {
      throw new AssertionError(e);
    }
  }

  static AgentInstance instance() {
    AgentInstance i = new AgentInstance();
    i.setMetadata(new ObjectMetaBuilder().withName("coder").withNamespace("agents")
        .withUid(SimulatedPods.INSTANCE_UID).withGeneration(1L).build());
    return i;
  }

  InstanceState refused(InstanceState before, String message, Instant at) {
    return evaluator.spawnFailed(policy, before, pods.sighting(false, Map.of()), false, message, at,
        new SplittableRandom(1)).state();
  }

  @Test
  void theRetryIsDueOnceThePodInTheWayIsGoneAndTheNextRefusalWaitsASecondAtLeast() {
    InstanceState s = refused(new InstanceState(), IN_THE_WAY, T0);
    Instant gone = T0.plusMillis(50);
    RefusedStart.retryOnceFreed(s, instance, name -> Optional.empty(), name -> null, gone);
    assertThat(s.nextRestartAt).isEqualTo(gone);
    // refused again at once (the quota controller has not released the old pod's usage yet)
    InstanceState again = refused(s, QUOTA, gone);
    assertThat(Duration.between(gone, again.nextRestartAt)).isGreaterThanOrEqualTo(Duration.ofSeconds(1));
  }

  @Test
  void theRetryWaitsWhileThePodIsThereOrTheRefusalWasAnother() {
    InstanceState s = refused(new InstanceState(), IN_THE_WAY, T0);
    Instant due = s.nextRestartAt;
    Instant now = T0.plusMillis(50);
    RefusedStart.retryOnceFreed(s, instance, name -> Optional.of(THERE), name -> null, now);
    assertThat(s.nextRestartAt).as("the cache still shows it").isEqualTo(due);
    RefusedStart.retryOnceFreed(s, instance, name -> Optional.empty(), name -> THERE, now);
    assertThat(s.nextRestartAt).as("the cache has lost it, the API server has not").isEqualTo(due);
    InstanceState quota = refused(new InstanceState(), QUOTA, T0);
    Instant quotaDue = quota.nextRestartAt;
    RefusedStart.retryOnceFreed(quota, instance, name -> Optional.empty(), name -> null, now);
    assertThat(quota.nextRestartAt).as("a quota's refusal").isEqualTo(quotaDue).isAfter(now);
  }
}

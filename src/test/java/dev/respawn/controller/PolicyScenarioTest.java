package dev.respawn.controller;

import static dev.respawn.controller.OperatorFixture.at;
import static dev.respawn.controller.OperatorFixture.condition;
import static dev.respawn.controller.OperatorFixture.hasCondition;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import dev.respawn.api.v1alpha1.OperatorRequest;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.api.v1alpha1.StatusCondition;
import dev.respawn.api.v1alpha1.TerminalReason;
import dev.respawn.sandbox.Run;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** api.md §1 status and §9: invalid and missing policies restart nothing; the policy's own status. */
class PolicyScenarioTest extends MockClusterScenario {
  static boolean hasAccepted(AgentRestartPolicy p, String status, String reason) {
    StatusCondition c = condition(p, "Accepted");
    return c != null && status.equals(c.status) && reason.equals(c.reason);
  }

  @Test
  void anInvalidPolicyIsRefusedAndStartsNothingUntilFixed() {
    // the mock API server does not validate: this is a spec the CRD schema would have refused
    f.policy("broken", "maxRetries: 5000");
    AgentRestartPolicy refused = f.awaitPolicy("broken", p -> condition(p, "Accepted") != null);
    StatusCondition accepted = condition(refused, "Accepted");
    assertThat(accepted.status).isEqualTo("False");
    assertThat(accepted.reason).isEqualTo("InvalidSpec");
    assertThat(accepted.message).contains("spec.maxRetries", "must be between 0 and 1000", "5000");
    assertThat(refused.getStatus().observedGeneration).isEqualTo(refused.getMetadata().getGeneration());

    f.instance("uses-broken", "broken");
    AgentInstance blocked = f.awaitInstance("uses-broken", i -> hasCondition(i, "Ready", "False", "PolicyInvalid"));
    assertThat(condition(blocked, "Ready").message).contains("broken", "spec.maxRetries");
    assertThat(blocked.getStatus().phase).isEqualTo(Phase.Pending);
    f.holdsFor(Duration.ofMillis(700), () -> f.podsEverCreated("uses-broken"), p -> p.isEmpty());
    assertThat(f.pods("uses-broken")).isEmpty();
    f.awaitEvent("broken", e -> {
      assertThat(e.getReason()).isEqualTo("PolicyInvalid");
      assertThat(e.getNote()).contains("spec.maxRetries");
    });

    f.editPolicy("broken", p -> {
      p.getSpec().maxRetries = 3;
      return p;
    });
    AgentRestartPolicy fixed = f.awaitPolicy("broken", p -> hasAccepted(p, "True", "Valid"));
    assertThat(fixed.getStatus().observedGeneration).isEqualTo(fixed.getMetadata().getGeneration()).isEqualTo(2L);
    AgentInstance running = f.awaitInstance("uses-broken", i -> at(i, 1, Phase.Running));
    assertThat(f.podsEverCreated("uses-broken")).containsExactly("uses-broken-1");
    f.awaitInstance("uses-broken", i -> hasCondition(i, "Ready", "True", "Healthy"));
  }

  /** Counts the refusals told to the operator's sink (Event and audit line). */
  private AtomicInteger refusalsTold() {
    AtomicInteger told = new AtomicInteger();
    f.observer = new DecisionSink() {
      @Override
      public void decided(AgentInstance instance, dev.respawn.policy.Decision decision,
          io.fabric8.kubernetes.api.model.Pod pod) {}

      @Override
      public void policyRefused(AgentInstance instance, Refusal reason, String message, java.time.Instant at) {
        told.incrementAndGet();
      }
    };
    return told;
  }

  @Test
  void aRefusalIsToldOnceNotAgainAtEveryReconcileThatFindsItUnchanged() {
    AtomicInteger told = refusalsTold();
    f.policy("broken", "maxRetries: 5000");
    f.instance("uses-broken", "broken");
    f.awaitInstance("uses-broken", i -> hasCondition(i, "Ready", "False", "PolicyInvalid"));
    f.awaitEvent("uses-broken", e -> assertThat(e.getReason()).isEqualTo("PolicyInvalid"));
    assertThat(told).hasValue(1);
    // a restart request reconciles the instance; the refusal it finds is the one status already shows
    f.annotate("uses-broken", OperatorRequest.RESTART.annotation(), "r-1");
    f.holdsFor(Duration.ofSeconds(1), told::get, n -> n == 1);
    assertThat(f.podsEverCreated("uses-broken")).isEmpty();
  }

  @Test
  void aMissingPolicyStartsNothingUntilItIsCreated() {
    f.instance("early", "later");
    AgentInstance blocked = f.awaitInstance("early", i -> hasCondition(i, "Ready", "False", "PolicyNotFound"));
    assertThat(condition(blocked, "Ready").message).contains("later");
    f.holdsFor(Duration.ofMillis(700), () -> f.podsEverCreated("early"), p -> p.isEmpty());

    f.policy("later", "backoff: {type: Linear, initialDelay: 1s, maxDelay: 5s}");
    f.awaitInstance("early", i -> at(i, 1, Phase.Running));
    assertThat(f.podsEverCreated("early")).containsExactly("early-1");
  }

  /** api.md §3 step 1 comes first: spec.suspend stops the run even while the instance's policy is missing. */
  @Test
  void suspendStopsTheRunWhileThePolicyIsMissing() {
    AtomicInteger told = refusalsTold();
    f.policy("gone", "backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}");
    f.kubelet.script("orphan", Run.runForever(), Run.runForever());
    f.instance("orphan", "gone");
    f.awaitInstance("orphan", i -> at(i, 1, Phase.Running));
    f.client.resources(AgentRestartPolicy.class).inNamespace(OperatorFixture.NS).withName("gone").delete();
    f.awaitInstance("orphan", i -> hasCondition(i, "Ready", "False", "PolicyNotFound"));
    assertThat(f.pod("orphan-1")).isNotNull(); // the refusal alone leaves the live pod alone

    suspend("orphan", true);
    AgentInstance suspended = f.awaitInstance("orphan", i -> i.getStatus().phase == Phase.Suspended);
    assertThat(suspended.getStatus().terminalReason).isEqualTo(TerminalReason.OperatorShutdown);
    assertThat(condition(suspended, "Ready").reason).isEqualTo("PolicyNotFound"); // why nothing else is done
    await().atMost(Duration.ofSeconds(10)).until(() -> f.pod("orphan-1") == null);
    assertThat(told).hasValue(1); // the refusal status already showed is not told again

    suspend("orphan", false); // still refused: nothing starts
    f.holdsFor(Duration.ofMillis(700), () -> f.podsEverCreated("orphan"), p -> p.size() == 1);
    f.policy("gone", "backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}");
    f.awaitInstance("orphan", i -> at(i, 2, Phase.Running));
  }

  /** A refused instance gets nothing made for it: suspended while its policy is missing, no Lease either. */
  @Test
  void aSuspendedInstanceWhosePolicyIsMissingGetsNoLease() {
    AgentInstance created = f.instance("dormant", "absent", spec -> spec.suspend = true);
    f.awaitInstance("dormant", i -> i.getStatus() != null && i.getStatus().phase == Phase.Suspended
        && hasCondition(i, "Ready", "False", "PolicyNotFound"));
    String lease = dev.respawn.heartbeat.HeartbeatLeases.leaseName(created);
    f.holdsFor(Duration.ofMillis(700), () -> f.lease(lease) == null, none -> none);
    assertThat(f.podsEverCreated("dormant")).isEmpty();
  }

  private void suspend(String name, boolean suspend) {
    f.edit(name, i -> {
      i.getSpec().suspend = suspend;
      return i;
    });
  }

  @Test
  void anInstanceThatSwitchesPolicyIsCountedByTheNewOneOnlyAndTheOldOneLearnsIt() {
    f.policy("a", null);
    f.policy("b", null);
    f.instance("x", "a");
    f.awaitPolicy("a", p -> p.getStatus() != null && Integer.valueOf(1).equals(p.getStatus().instances));
    f.edit("x", i -> {
      i.getSpec().policyRef = new dev.respawn.api.v1alpha1.PolicyReference("b");
      return i;
    });
    f.awaitPolicy("b", p -> Integer.valueOf(1).equals(p.getStatus().instances));
    f.awaitPolicy("a", p -> Integer.valueOf(0).equals(p.getStatus().instances));
  }

  @Test
  void thePolicyStatusCountsItsInstancesAndItsTotalRetryTime() {
    f.policy("defaults", null);
    AgentRestartPolicy valid = f.awaitPolicy("defaults", p -> hasAccepted(p, "True", "Valid"));
    assertThat(valid.getStatus().totalRetryTime).isEqualTo("14s"); // 2s + 4s + 8s
    assertThat(valid.getStatus().observedGeneration).isEqualTo(valid.getMetadata().getGeneration());
    assertThat(valid.getStatus().instances).isZero();

    f.instance("one", "defaults");
    f.instance("two", "defaults");
    f.instance("other", null);
    f.awaitPolicy("defaults", p -> Integer.valueOf(2).equals(p.getStatus().instances));
    f.awaitInstance("one", i -> at(i, 1, Phase.Running));
    f.client.resources(AgentInstance.class).inNamespace(OperatorFixture.NS).withName("one").delete();
    f.awaitPolicy("defaults", p -> Integer.valueOf(1).equals(p.getStatus().instances));

    f.policy("linear", "backoff: {type: Linear, initialDelay: 1s, maxDelay: 10s}\nmaxRetries: 4");
    AgentRestartPolicy linear = f.awaitPolicy("linear", p -> hasAccepted(p, "True", "Valid"));
    assertThat(linear.getStatus().totalRetryTime).isEqualTo("10s"); // 1 + 2 + 3 + 4
  }
}

package dev.respawn.controller;

import static dev.respawn.controller.OperatorFixture.at;
import static dev.respawn.controller.OperatorFixture.hasCondition;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.HealthVerdict;
import dev.respawn.api.v1alpha1.InstanceHeartbeatSpec;
import dev.respawn.api.v1alpha1.InterruptionClass;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.api.v1alpha1.TerminalReason;
import dev.respawn.sandbox.Run;
import dev.respawn.sandbox.Heartbeat;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import java.time.Duration;
import java.util.Objects;
import org.junit.jupiter.api.Test;

/** api.md §5: the heartbeat Lease, the liveness gate (Ready), and the runs a heartbeat ends. */
class HeartbeatScenarioTest extends MockClusterScenario {
  Lease awaitLease(String name) {
    return await().atMost(OperatorFixture.AT_MOST).until(() -> f.lease(name), Objects::nonNull);
  }

  @Test
  void theOperatorCreatesTheLeaseOwnedByTheInstance() {
    f.policy("plain", null);
    AgentInstance created = f.instance("owned", "plain", spec -> {
      spec.heartbeat = new InstanceHeartbeatSpec();
      spec.heartbeat.leaseName = "owned-heartbeat";
    });
    Lease lease = awaitLease("owned-heartbeat");
    assertThat(lease.getMetadata().getLabels()).containsEntry("respawn.dev/instance", "owned");
    assertThat(lease.getMetadata().getOwnerReferences()).singleElement().satisfies(o -> {
      assertThat(o.getKind()).isEqualTo("AgentInstance");
      assertThat(o.getApiVersion()).isEqualTo("respawn.dev/v1alpha1");
      assertThat(o.getName()).isEqualTo("owned");
      assertThat(o.getUid()).isEqualTo(created.getMetadata().getUid());
      assertThat(o.getController()).isTrue();
    });
    assertThat(lease.getSpec().getHolderIdentity()).isNull();
    f.awaitInstance("owned", i -> at(i, 1, Phase.Running));
    assertThat(f.pod("owned-1").getSpec().getContainers().get(0).getEnv()).anySatisfy(e -> {
      assertThat(e.getName()).isEqualTo("RESPAWN_LEASE_NAME");
      assertThat(e.getValue()).isEqualTo("owned-heartbeat");
    });
    // without heartbeat.timeout in the policy, Ready follows the pod's Ready condition
    f.awaitInstance("owned", i -> hasCondition(i, "Ready", "True", "Healthy"));
  }

  @Test
  void aLeaseOfThatNameTheInstanceDoesNotOwnIsNeverTouched() {
    f.policy("hb", """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
        maxRetries: 0
        heartbeat: {timeout: 1s}
        """);
    // a Lease of that name exists already (another tool's), without the instance label or ownerReference
    f.kubelet.renew("preexisting", "someone", "Healthy");
    f.kubelet.script("pre", Run.runForever().heartbeat(Duration.ofMillis(100)));
    f.instance("pre", "hb", spec -> {
      spec.heartbeat = new InstanceHeartbeatSpec();
      spec.heartbeat.leaseName = "preexisting";
    });
    // the operator touches only what it owns: it neither labels nor adopts that Lease, so it sees no
    // heartbeat of this run, and the run ends stale as any run without heartbeats would
    AgentInstance escalated = f.awaitInstance("pre", i -> i.getStatus().phase == Phase.Escalated);
    assertThat(escalated.getStatus().terminalReason).isEqualTo(TerminalReason.StallTimeout);
    assertThat(f.lease("preexisting").getMetadata().getLabels()).doesNotContainKey("respawn.dev/instance");
    assertThat(f.lease("preexisting").getMetadata().getOwnerReferences()).isNullOrEmpty();
    // its create is tried once for the run, not at each wake-up of the startup grace (api.md §12)
    assertThat(f.operatorWrites()).filteredOn(w -> "POST".equals(w.verb()) && w.resource().startsWith("leases"))
        .hasSize(1).allSatisfy(w -> assertThat(w.code()).isEqualTo(409));
  }

  /**
   * An agent that writes its Lease back whole without the operator's label (its Role allows update) leaves it
   * owned by the instance: the operator labels it again and goes on hearing the run. It used to take the Lease for
   * someone else's: the run ended stale, and every later run too, until a person deleted the Lease.
   */
  @Test
  void anOwnLeaseThatLostItsLabelIsLabelledAgainAndTheRunGoesOn() {
    AgentInstance created = f.healthyHeartbeatingRun("relabel");
    f.client.leases().inNamespace(OperatorFixture.NS).withName("relabel").edit(l -> {
      l.getMetadata().setLabels(new java.util.HashMap<>());
      return l;
    });
    await().atMost(OperatorFixture.AT_MOST).untilAsserted(() -> assertThat(f.lease("relabel").getMetadata()
        .getLabels()).containsEntry("respawn.dev/instance", "relabel"));
    // the run is heard throughout: still run 1, healthy, for three heartbeat timeouts
    f.holdsFor(Duration.ofSeconds(3), () -> f.get("relabel"), i -> at(i, 1, Phase.Running));
    assertThat(f.podsEverCreated("relabel")).containsExactly("relabel-1");
    assertThat(f.lease("relabel").getMetadata().getOwnerReferences()).singleElement()
        .satisfies(o -> assertThat(o.getUid()).isEqualTo(created.getMetadata().getUid()));
  }

  @Test
  void aPodThatNeverRenewsIsDeletedAndRestarted() {
    f.policy("hb", """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
        heartbeat: {timeout: 1s}
        """);
    f.kubelet.script("silent", Run.runForever(), Run.runForever().heartbeat(Duration.ofMillis(100)));
    f.instance("silent", "hb");
    AgentInstance healthy = f.awaitInstance("silent", i -> at(i, 2, Phase.Running)
        && hasCondition(i, "Ready", "True", "Healthy"));
    var st = healthy.getStatus();
    assertThat(st.lastFailure.pod).isEqualTo("silent-1");
    assertThat(st.lastFailure.failureClass).isEqualTo(InterruptionClass.Timeout);
    assertThat(st.lastFailure.failureReason).isEqualTo("HealthCheckFailed");
    assertThat(st.attempt).isEqualTo(1);
    assertThat(st.heartbeat.verdict).isEqualTo(HealthVerdict.Healthy);
    assertThat(f.pod("silent-1")).as("the stalled pod was deleted by the operator").isNull();
    assertThat(f.podsEverCreated("silent")).containsExactly("silent-1", "silent-2");
    f.awaitEvent("silent", e -> {
      assertThat(e.getReason()).isEqualTo("HeartbeatStale");
      assertThat(e.getType()).isEqualTo("Warning");
    });
  }

  @Test
  void aPodThatStopsRenewingIsDeletedAndRestarted() {
    f.policy("hb", """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
        heartbeat: {timeout: 1s}
        """);
    f.kubelet.script("stops", Run.runForever().heartbeat(Duration.ofMillis(100)),
        Run.runForever().heartbeat(Duration.ofMillis(100)));
    f.instance("stops", "hb");
    f.awaitInstance("stops", i -> at(i, 1, Phase.Running) && hasCondition(i, "Ready", "True", "Healthy"));
    // stays Ready while the renewals keep coming (well past the timeout)
    f.holdsFor(Duration.ofMillis(1500), () -> f.get("stops"),
        i -> at(i, 1, Phase.Running) && hasCondition(i, "Ready", "True", "Healthy"));
    f.kubelet.stopHeartbeats();
    AgentInstance next = f.awaitInstance("stops", i -> at(i, 2, Phase.Running)
        && hasCondition(i, "Ready", "True", "Healthy"));
    assertThat(next.getStatus().lastFailure.pod).isEqualTo("stops-1");
    assertThat(next.getStatus().lastFailure.failureClass).isEqualTo(InterruptionClass.Timeout);
    assertThat(next.getStatus().lastFailure.failureReason).isEqualTo("HealthCheckFailed");
    assertThat(f.pod("stops-1")).isNull();
  }

  /**
   * An instance whose agent renews every 200 ms (timeout 3 s), Running and Healthy, past its startup grace
   * (1 s): a run without a renewal to go on would be stale at once.
   */
  private void heartbeatingPastItsStartupGrace(String name) {
    f.policy("hb", """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
        heartbeat: {timeout: 3s, startupGrace: 1s}
        """);
    f.kubelet.script(name, Run.runForever().heartbeat(Duration.ofMillis(200)), Run.runForever());
    f.instance(name, "hb");
    f.awaitInstance(name, i -> at(i, 1, Phase.Running) && hasCondition(i, "Ready", "True", "Healthy"));
    f.holdsFor(Duration.ofMillis(1500), () -> f.get(name), i -> at(i, 1, Phase.Running));
  }

  @Test
  void aLeaseDeletedMidRunIsNoStallTheRunLivesOnTheLastRenewalSeen() {
    heartbeatingPastItsStartupGrace("kept");
    f.client.leases().inNamespace(OperatorFixture.NS).withName("kept").delete();
    // the operator makes it again (the agent may only update it); the agent's renewals count again: the run lives
    // on well past the timeout, healthy (Ready may show the moment between the Lease made again and the agent's
    // first renewal of it: seen once under CI load, see the closing note of 2026-11-28)
    f.holdsFor(Duration.ofMillis(5000), () -> f.get("kept"), i -> at(i, 1, Phase.Running));
    f.awaitInstance("kept", i -> at(i, 1, Phase.Running) && hasCondition(i, "Ready", "True", "Healthy"));
    assertThat(f.lease("kept").getMetadata().getOwnerReferences()).singleElement()
        .satisfies(o -> assertThat(o.getUid()).isEqualTo(f.get("kept").getMetadata().getUid()));
    // an agent that stops renewing is still caught, a timeout after its last renewal, not at the deletion
    f.kubelet.stopHeartbeats();
    java.time.Instant stopped = java.time.Instant.now();
    f.client.leases().inNamespace(OperatorFixture.NS).withName("kept").delete();
    AgentInstance next = f.awaitInstance("kept", i -> i.getStatus().run != null && i.getStatus().run >= 2
        && i.getStatus().lastFailure != null);
    assertThat(next.getStatus().lastFailure.pod).isEqualTo("kept-1");
    assertThat(next.getStatus().lastFailure.failureClass).isEqualTo(InterruptionClass.Timeout);
    // the last renewal came at most one period (200 ms) before the stop
    assertThat(java.time.Instant.parse(next.getStatus().lastFailure.at))
        .isAfterOrEqualTo(stopped.plusMillis(3000 - 200 - 100));
  }

  @Test
  void aLeaseDeletedWhileTheOperatorWasDownEndsNothingTheNewProcessGrantsAFullTimeout() {
    heartbeatingPastItsStartupGrace("down");
    f.stopOperator();
    f.client.leases().inNamespace(OperatorFixture.NS).withName("down").delete();
    f.startOperator();
    // the new process never saw this run renew: it grants a full timeout, makes the Lease again, and the
    // agent's renewals count from then on
    f.holdsFor(Duration.ofMillis(5000), () -> f.get("down"),
        i -> at(i, 1, Phase.Running) && hasCondition(i, "Ready", "True", "Healthy"));
    assertThat(f.lease("down").getSpec().getHolderIdentity()).isEqualTo("down-1");
  }

  @Test
  void aStallWithNoRetriesLeftEndsInStallTimeout() {
    f.policy("once", """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
        maxRetries: 0
        heartbeat: {timeout: 1s}
        """);
    f.kubelet.script("stall0", Run.runForever());
    f.instance("stall0", "once");
    AgentInstance escalated = f.awaitInstance("stall0", i -> i.getStatus().phase == Phase.Escalated);
    assertThat(escalated.getStatus().terminalReason).isEqualTo(TerminalReason.StallTimeout);
    assertThat(escalated.getStatus().lastDecision.reasonCode).isEqualTo("retries_exhausted");
    assertThat(escalated.getStatus().lastFailure.failureClass).isEqualTo(InterruptionClass.Timeout);
    await().atMost(OperatorFixture.AT_MOST).until(() -> f.pod("stall0-1") == null);
    f.awaitInstance("stall0", i -> hasCondition(i, "Ready", "False", "RestartLimitExceeded"));
    f.holdsFor(Duration.ofMillis(700), () -> f.podsEverCreated("stall0"), p -> p.size() == 1);
  }

  @Test
  void aCrashedVerdictEndsTheRunAsAProcessCrash() {
    f.policy("hb", """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
        heartbeat: {timeout: 20s}
        """);
    f.kubelet.script("crash", Run.runForever(), Run.runForever());
    f.instance("crash", "hb");
    f.awaitInstance("crash", i -> at(i, 1, Phase.Running));
    f.kubelet.renew("crash", "crash-1", "Healthy");
    f.awaitInstance("crash", i -> hasCondition(i, "Ready", "True", "Healthy"));
    f.kubelet.renew("crash", "crash-1", "Crashed", "respawn.dev/detail", "segfault in tool runner");
    AgentInstance next = f.awaitInstance("crash", i -> at(i, 2, Phase.Running));
    var st = next.getStatus();
    assertThat(st.lastFailure.pod).isEqualTo("crash-1");
    assertThat(st.lastFailure.failureClass).isEqualTo(InterruptionClass.ProcessCrash);
    assertThat(st.lastFailure.failureReason).isEqualTo("ProcessCrash");
    assertThat(st.attempt).isEqualTo(1);
    assertThat(f.pod("crash-1")).isNull();
    // the Lease still says Crashed, held by crash-1: that says nothing about crash-2
    f.holdsFor(Duration.ofMillis(700), () -> f.get("crash"), i -> at(i, 2, Phase.Running)
        && hasCondition(i, "Ready", "False", "StaleHeartbeat") && i.getStatus().attempt == 1);
    assertThat(f.podsEverCreated("crash")).containsExactly("crash-1", "crash-2");
  }

  @Test
  void readyOnlyWhileHeartbeatsAreFreshAndHealthy() {
    f.policy("hb", """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
        heartbeat: {timeout: 1s, startupGrace: 60s}
        """);
    f.kubelet.script("gate", Run.runForever(), Run.runForever());
    f.instance("gate", "hb");
    // running, but no heartbeat yet: not Ready
    f.awaitInstance("gate", i -> at(i, 1, Phase.Running) && hasCondition(i, "Ready", "False", "StaleHeartbeat"));

    Heartbeat healthy = f.kubelet.renewEvery(Duration.ofMillis(100), "gate", "gate-1", "Healthy");
    AgentInstance ready = f.awaitInstance("gate", i -> hasCondition(i, "Ready", "True", "Healthy"));
    assertThat(ready.getStatus().heartbeat.verdict).isEqualTo(HealthVerdict.Healthy);
    assertThat(ready.getStatus().heartbeat.since).isNotNull();
    healthy.stop();

    Heartbeat ambiguous = f.kubelet.renewEvery(Duration.ofMillis(100), "gate", "gate-1", "Ambiguous");
    AgentInstance unsure = f.awaitInstance("gate", i -> hasCondition(i, "Ready", "False", "AmbiguousState"));
    assertThat(unsure.getStatus().heartbeat.verdict).isEqualTo(HealthVerdict.Ambiguous);
    assertThat(unsure.getStatus().run).isEqualTo(1); // Ambiguous does not end the run
    ambiguous.stop();

    Heartbeat again = f.kubelet.renewEvery(Duration.ofMillis(100), "gate", "gate-1", "Healthy");
    f.awaitInstance("gate", i -> hasCondition(i, "Ready", "True", "Healthy"));
    again.stop();

    // a Stalled verdict ends the run (Timeout / HealthCheckFailed)
    f.kubelet.renew("gate", "gate-1", "Stalled");
    AgentInstance next = f.awaitInstance("gate", i -> at(i, 2, Phase.Running));
    assertThat(next.getStatus().lastFailure.failureClass).isEqualTo(InterruptionClass.Timeout);
    assertThat(next.getStatus().lastFailure.failureReason).isEqualTo("HealthCheckFailed");
    assertThat(hasCondition(next, "Ready", "False", "StaleHeartbeat")).isTrue();
  }

  @Test
  void renewalsByAnotherHolderAreIgnored() {
    f.policy("once", """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
        maxRetries: 0
        heartbeat: {timeout: 1s}
        """);
    f.kubelet.script("foreign", Run.runForever());
    f.instance("foreign", "once");
    awaitLease("foreign");
    // someone else (a stale run) renews the Lease, healthy and often; the current pod never does
    f.kubelet.renewEvery(Duration.ofMillis(100), "foreign", "foreign-0", "Healthy");
    AgentInstance escalated = f.awaitInstance("foreign", i -> i.getStatus().phase == Phase.Escalated);
    assertThat(escalated.getStatus().terminalReason).isEqualTo(TerminalReason.StallTimeout);
    assertThat(escalated.getStatus().lastFailure.failureClass).isEqualTo(InterruptionClass.Timeout);
    assertThat(escalated.getStatus().heartbeat.verdict).as("no renewal was taken for the current pod's")
        .isEqualTo(HealthVerdict.Stale);
    assertThat(f.lease("foreign").getSpec().getHolderIdentity()).isEqualTo("foreign-0");
  }

  @Test
  void aStaleRunRenewingBesideTheCurrentOneErasesNothing() {
    f.policy("shared", """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
        maxRetries: 0
        heartbeat: {timeout: 1500ms, startupGrace: 500ms}
        """);
    f.kubelet.script("overlap", Run.runForever());
    f.instance("overlap", "shared");
    awaitLease("overlap");
    Heartbeat current = f.kubelet.renewEvery(Duration.ofMillis(300), "overlap", "overlap-1", "Healthy");
    f.awaitInstance("overlap", i -> hasCondition(i, "Ready", "True", "Healthy"));
    // an old pod, still terminating, renews too: the Lease changes hands on nearly every renewal, and
    // each time the stale run holds it the current run keeps the heartbeat it left (startupGrace is over)
    Heartbeat stale = f.kubelet.renewEvery(Duration.ofMillis(70), "overlap", "overlap-0", "Healthy");
    await().during(Duration.ofSeconds(4)).atMost(Duration.ofSeconds(6)).until(() -> f.get("overlap"),
        i -> at(i, 1, Phase.Running) && i.getStatus().attempt == 0);
    assertThat(stale.renewals()).as("the stale run renewed").isGreaterThan(20);
    // the current run stops: the stale one's renewals do not vouch for it
    current.stop();
    AgentInstance escalated = f.awaitInstance("overlap", i -> i.getStatus().phase == Phase.Escalated);
    assertThat(escalated.getStatus().terminalReason).isEqualTo(TerminalReason.StallTimeout);
    stale.stop();
  }

  /** The wait for a first renewal is short: a run whose agent does not renew is shown Running within seconds. */
  @Test
  void aRestartedRunWhoseAgentDoesNotRenewIsShownRunningWithinSeconds() {
    f.policy("long", """
        backoff: {type: Immediate}
        heartbeat: {timeout: 30m}
        """);
    f.kubelet.script("quiet", Run.runForever(), Run.runForever());
    f.instance("quiet", "long");
    f.awaitInstance("quiet", i -> at(i, 1, Phase.Running));
    f.kubelet.terminate("quiet-1", 1, "Error", "crashed");
    AgentInstance next = await().atMost(Duration.ofSeconds(15)).pollInterval(OperatorFixture.POLL)
        .until(() -> f.get("quiet"), i -> at(i, 2, Phase.Running));
    assertThat(OperatorFixture.condition(next, "Ready").reason).isEqualTo("StaleHeartbeat");
  }

  /**
   * An edit of spec.heartbeat.leaseName is for the next run: the running agent renews the Lease its pod was given
   * (RESPAWN_LEASE_NAME), and it is judged by that one, not found stale for want of renewals of the new name. The
   * next run gets the new Lease; once the instance is deleted, nothing is remembered of either.
   */
  @Test
  void anEditedLeaseNameIsTheNextRunsAndNothingOfEitherLeaseStays() {
    f.policy("hb", """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
        resetAfter: 30m
        heartbeat: {timeout: 1s}
        """);
    Duration beat = Duration.ofMillis(200);
    f.kubelet.script("renamed", Run.runForever().heartbeat(beat), Run.runForever().heartbeat(beat));
    f.instance("renamed", "hb", spec -> {
      spec.heartbeat = new InstanceHeartbeatSpec();
      spec.heartbeat.leaseName = "lease-a";
    });
    f.awaitInstance("renamed", i -> at(i, 1, Phase.Running) && hasCondition(i, "Ready", "True", "Healthy"));
    f.edit("renamed", i -> {
      i.getSpec().heartbeat.leaseName = "lease-b";
      return i;
    });
    await().atMost(OperatorFixture.AT_MOST).until(() -> f.lease("lease-b") != null);
    // the running agent renews lease-a all along: it never stalled
    f.holdsFor(Duration.ofSeconds(3), () -> f.get("renamed"), i -> i.getStatus().lastFailure == null
        && Integer.valueOf(1).equals(i.getStatus().run) && hasCondition(i, "Ready", "True", "Healthy"));
    f.annotate("renamed", AgentInstance.RESTART_ANNOTATION, "next-run");
    f.awaitInstance("renamed", i -> at(i, 2, Phase.Running) && hasCondition(i, "Ready", "True", "Healthy"));
    assertThat(f.lease("lease-b").getSpec().getHolderIdentity()).isEqualTo("renamed-2");
    var renewals = f.operator.instanceReconciler().renewals();
    assertThat(renewals.size()).as("lease-a and lease-b").isEqualTo(2);
    f.kubelet.stopHeartbeats();
    f.client.resources(AgentInstance.class).inNamespace(OperatorFixture.NS).withName("renamed").delete();
    await().atMost(OperatorFixture.AT_MOST).untilAsserted(() -> assertThat(renewals.size()).isZero());
  }

  /**
   * api.md §5, a stale run cannot vouch for the new one: nor condemn it. The last run's Stalled verdict stays on
   * the Lease; the next run's agent renews without any verdict (the annotations are optional) and is Healthy.
   */
  @Test
  void theLastRunsStalledVerdictIsNotTheNextRunsOwn() {
    f.policy("hbs", """
        backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}
        heartbeat: {timeout: 20s}
        """);
    f.kubelet.script("sv", Run.runForever(), Run.runForever(), Run.runForever());
    f.instance("sv", "hbs");
    f.awaitInstance("sv", i -> i.getStatus() != null && i.getStatus().run != null && i.getStatus().run == 1);
    f.kubelet.renew("sv", "sv-1", "Healthy");
    f.awaitInstance("sv", i -> at(i, 1, Phase.Running) && hasCondition(i, "Ready", "True", "Healthy"));
    f.kubelet.renew("sv", "sv-1", "Stalled");
    await().atMost(OperatorFixture.AT_MOST).until(() -> f.pod("sv-2") != null);
    Heartbeat plain = f.kubelet.renewEvery(Duration.ofMillis(200), "sv", "sv-2", null);
    try {
      AgentInstance running = f.awaitInstance("sv", i -> at(i, 2, Phase.Running)
          && hasCondition(i, "Ready", "True", "Healthy"));
      assertThat(running.getStatus().attempt).isEqualTo(1);
      f.holdsFor(Duration.ofSeconds(1), () -> f.podsEverCreated("sv").size(), n -> n == 2);
      Lease lease = f.client.leases().inNamespace(OperatorFixture.NS).withName("sv").get();
      assertThat(lease.getMetadata().getAnnotations()).as("the verdict went with its run")
          .doesNotContainKey("respawn.dev/health");
    } finally {
      plain.stop();
    }
  }

  /**
   * A policy that comes to require heartbeats (a GitOps rollout turning them on) grants every live run a full
   * timeout from then, as a restarted operator does (api.md §12), rather than ending every run whose startup grace
   * is long over at once, a counted failure each. A run that still gives none is ended after that timeout.
   */
  @Test
  void aPolicyThatComesToRequireHeartbeatsGrantsItsLiveRunsAFullTimeout() {
    f.policy("later", "backoff: {type: Immediate}");
    f.kubelet.script("mute", Run.runForever(), Run.runForever());
    f.instance("mute", "later");
    AgentInstance running = f.awaitInstance("mute", i -> at(i, 1, Phase.Running));
    java.time.Instant graceEnd = java.time.Instant.parse(running.getStatus().runStartedAt).plusSeconds(2);
    await().atMost(OperatorFixture.AT_MOST).until(() -> java.time.Instant.now().isAfter(graceEnd.plusSeconds(1)));
    java.time.Instant edited = java.time.Instant.now();
    f.editPolicy("later", p -> {
      p.getSpec().heartbeat = new dev.respawn.api.v1alpha1.PolicyHeartbeatSpec();
      p.getSpec().heartbeat.timeout = "3s";
      p.getSpec().heartbeat.startupGrace = "2s";
      return p;
    });
    f.holdsFor(Duration.ofMillis(2000), () -> f.pod("mute-1") != null, alive -> alive);
    AgentInstance ended = f.awaitInstance("mute", i -> i.getStatus().lastFailure != null);
    assertThat(ended.getStatus().lastFailure.pod).isEqualTo("mute-1");
    assertThat(ended.getStatus().lastFailure.message).contains("when the policy came to require heartbeats");
    assertThat(java.time.Instant.parse(ended.getStatus().lastFailure.at)).as("a full 3 s timeout from the edit")
        .isAfterOrEqualTo(edited.plusSeconds(3));
  }
}

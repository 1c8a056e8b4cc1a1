package dev.respawn.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentInstanceSpec;
import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.api.v1alpha1.PolicyReference;
import dev.respawn.testsupport.MockApi;
import dev.respawn.sandbox.Run;
import dev.respawn.sandbox.SimulatedKubelet;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import io.fabric8.kubernetes.api.model.authorization.v1.ResourceRuleBuilder;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectRulesReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectRulesReviewStatusBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Two operators against one API server: only the leader acts; when it stops, the other takes over
 * within one lease duration, with no duplicate pod and no lost restart.
 */
class LeaderElectionTest {
  static final String NS = MockApi.NAMESPACE;
  static final Duration LEASE = Duration.ofSeconds(3);
  MockApi api;
  SimulatedKubelet kubelet;
  RespawnOperator first;
  RespawnOperator second;
  final Map<String, Integer> creations = new ConcurrentHashMap<>();
  Watch watch;

  @BeforeEach
  void start() {
    api = MockApi.start();
    // JOSDK checks it may use its Lease with a SelfSubjectRulesReview, which the mock cannot answer
    SelfSubjectRulesReview review = new SelfSubjectRulesReview();
    review.setStatus(new SubjectRulesReviewStatusBuilder().withIncomplete(false)
        .withResourceRules(new ResourceRuleBuilder().withApiGroups("coordination.k8s.io").withResources("leases")
            .withVerbs("get", "create", "update").build()).build());
    api.server().expect().post().withPath("/apis/authorization.k8s.io/v1/selfsubjectrulesreviews")
        .andReturn(201, review).always();
    kubelet = new SimulatedKubelet(api.newClient(), NS).start();
    watch = api.client().pods().inNamespace(NS).watch(new Watcher<>() {
      @Override
      public void eventReceived(Action action, Pod pod) {
        if (action == Action.ADDED) {
          creations.merge(pod.getMetadata().getName(), 1, Integer::sum);
        }
      }

      @Override
      public void onClose(WatcherException cause) {}
    });
    first = operator("first");
    second = operator("second");
  }

  RespawnOperator operator(String identity) {
    return operator(identity, RespawnOperator.LEADER_LEASE, OperatorSettings.defaults());
  }

  RespawnOperator operator(String identity, String lease, OperatorSettings settings) {
    KubernetesClient client = api.newClient();
    return new RespawnOperator(client, settings, DecisionSink.NONE, Optional.of(new LeaderElection(lease, NS,
        identity, LEASE, Duration.ofSeconds(2), Duration.ofMillis(250), false)), Optional.empty()).start();
  }

  @AfterEach
  void stop() {
    watch.close();
    first.close();
    second.close();
    kubelet.close();
    api.close();
  }

  String leader() {
    return leader(RespawnOperator.LEADER_LEASE);
  }

  String leader(String name) {
    Lease lease = api.client().leases().inNamespace(NS).withName(name).get();
    return lease == null || lease.getSpec() == null ? null : lease.getSpec().getHolderIdentity();
  }

  @Test
  void onlyTheLeaderActsAndTheOtherTakesOverWithinOneLeaseDuration() {
    String leader = await().atMost(Duration.ofSeconds(20)).until(this::leader, l -> l != null);
    assertThat(leader).isIn("first", "second");
    // the script before the instance: a warm operator creates agent-1 within milliseconds
    kubelet.script("agent", Run.exit(1).after(Duration.ofMillis(200)), Run.runForever());
    createPolicyAndInstance("agent");
    await().atMost(Duration.ofSeconds(20)).until(() -> creations.containsKey("agent-2"));
    // stop the leader (close() gives its Lease up); the follower must take over, at the latest when the Lease expires
    RespawnOperator leading = leader.equals("first") ? first : second;
    String follower = leader.equals("first") ? "second" : "first";
    leading.close();
    await().atMost(LEASE.plusSeconds(5)).pollInterval(Duration.ofMillis(50)).until(this::leader, follower::equals);
    // the new leader serves: a failure of the running agent is restarted, exactly once
    kubelet.terminate("agent-2", 1, "Error", "network_timeout");
    await().atMost(Duration.ofSeconds(20)).until(() -> creations.containsKey("agent-3"));
    await().atMost(Duration.ofSeconds(20)).until(() -> status("agent").run == 3 && status("agent").attempt == 2);
    assertThat(creations).containsOnlyKeys("agent-1", "agent-2", "agent-3").allSatisfy((k, v) -> assertThat(v)
        .isEqualTo(1));
  }

  /**
   * A leader that stops (SIGTERM, a rollout) gives its Lease up once it no longer acts: the standby leads at its next
   * try, not when the Lease would have expired (3 s here; 15 s in a cluster), so a restart due meanwhile is not late.
   */
  @Test
  void aLeaderThatStopsGivesItsLeaseUpAndTheStandbyLeadsAtItsNextTry() {
    String leader = await().atMost(Duration.ofSeconds(20)).until(this::leader, l -> l != null);
    RespawnOperator leading = leader.equals("first") ? first : second;
    String follower = leader.equals("first") ? "second" : "first";
    // the Lease just renewed: left to expire, the follower could take it only LEASE later
    String renewed = api.client().leases().inNamespace(NS).withName(RespawnOperator.LEADER_LEASE).get().getSpec()
        .getRenewTime().toString();
    await().atMost(Duration.ofSeconds(5)).until(() -> !renewed.equals(api.client().leases().inNamespace(NS)
        .withName(RespawnOperator.LEADER_LEASE).get().getSpec().getRenewTime().toString()));
    leading.close();
    await().atMost(LEASE.plusSeconds(5)).pollInterval(Duration.ofMillis(20)).until(this::leader, follower::equals);
    // the Lease's own record, not the test's stopwatch: left to expire, it could be acquired no earlier than its
    // last renewal by the leader (at or after the one seen above) plus its duration
    Lease taken = api.client().leases().inNamespace(NS).withName(RespawnOperator.LEADER_LEASE).get();
    Instant expiry = java.time.ZonedDateTime.parse(renewed).toInstant().plus(LEASE);
    assertThat(taken.getSpec().getAcquireTime().toInstant()).as("acquired by %s after the release, before the "
        + "expiry of the last renewal seen (%s)", follower, expiry).isBefore(expiry);
  }

  /**
   * Two operators that watch different namespaces, their Leases in one namespace: under one Lease name only one of
   * them would act; each under a Lease of its own (--leader-election-lease), both lead, and each serves its own.
   */
  @Test
  void operatorsWatchingDifferentNamespacesUnderLeasesOfTheirOwnBothAct() {
    first.close();
    second.close();
    String other = "other";
    try (SimulatedKubelet otherKubelet = new SimulatedKubelet(api.newClient(), other).start()) {
      first = operator("team-a", "respawn-team-a", OperatorSettings.defaults().withNamespaces(Set.of(NS)));
      second = operator("team-b", "respawn-team-b", OperatorSettings.defaults().withNamespaces(Set.of(other)));
      await().atMost(Duration.ofSeconds(20)).until(() -> "team-a".equals(leader("respawn-team-a"))
          && "team-b".equals(leader("respawn-team-b")));
      kubelet.script("agent", Run.runForever());
      otherKubelet.script("agent", Run.runForever());
      createPolicyAndInstance(NS, "agent");
      createPolicyAndInstance(other, "agent");
      await().atMost(Duration.ofSeconds(20)).until(() -> status(NS, "agent").phase == Phase.Running
          && status(other, "agent").phase == Phase.Running);
      assertThat(leader()).as("neither took the default Lease (the earlier two gave it up)")
          .isNotIn("team-a", "team-b");
    }
  }

  /** A leader that loses its Lease and does not exit (as here) stops acting: it is no longer the leader. */
  @Test
  void aLeaderThatLostItsLeaseStopsActing() {
    String leader = await().atMost(Duration.ofSeconds(20)).until(this::leader, l -> l != null);
    RespawnOperator leading = leader.equals("first") ? first : second;
    RespawnOperator following = leader.equals("first") ? second : first;
    kubelet.script("agent", Run.runForever(), Run.runForever());
    createPolicyAndInstance("agent");
    await().atMost(Duration.ofSeconds(20)).until(() -> status("agent").phase == dev.respawn.api.v1alpha1.Phase.Running);
    // someone else holds the Lease now, for an hour: the leader cannot renew it (the take-over is
    // tried again when it meets the leader's own renewal, a 409 as on any API server)
    await().atMost(Duration.ofSeconds(10)).ignoreExceptionsInstanceOf(KubernetesClientException.class)
        .until(() -> api.client().leases().inNamespace(NS).withName(RespawnOperator.LEADER_LEASE).edit(l -> {
          l.getSpec().setHolderIdentity("intruder");
          l.getSpec().setLeaseDurationSeconds(3600);
          l.getSpec().setRenewTime(java.time.ZonedDateTime.now(java.time.ZoneOffset.UTC));
          return l;
        }) != null);
    assertThat(leader()).isEqualTo("intruder");
    await().atMost(Duration.ofSeconds(20)).until(() -> !leading.acting());
    assertThat(following.acting()).as("the follower never led; it acts once it leads").isTrue();
    kubelet.terminate("agent-1", 1, "Error", "network_timeout");
    // nobody that leads: the failure waits for a leader, no pod is made by the one that lost the Lease
    await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(5))
        .until(() -> !creations.containsKey("agent-2"));
  }

  private dev.respawn.api.v1alpha1.AgentInstanceStatus status(String name) {
    return status(NS, name);
  }

  private dev.respawn.api.v1alpha1.AgentInstanceStatus status(String namespace, String name) {
    AgentInstance i = api.client().resources(AgentInstance.class).inNamespace(namespace).withName(name).get();
    return i.getStatus() == null ? new dev.respawn.api.v1alpha1.AgentInstanceStatus() : i.getStatus();
  }

  private void createPolicyAndInstance(String name) {
    createPolicyAndInstance(NS, name);
  }

  private void createPolicyAndInstance(String namespace, String name) {
    AgentRestartPolicy p = new AgentRestartPolicy();
    p.setMetadata(new ObjectMetaBuilder().withName("le").withNamespace(namespace).build());
    p.setSpec(Serialization.unmarshal("backoff: {type: Immediate}\nmaxRetries: 10\n", AgentRestartPolicySpec.class));
    api.client().resource(p).create();
    AgentInstance i = new AgentInstance();
    i.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(namespace).build());
    AgentInstanceSpec spec = new AgentInstanceSpec();
    spec.policyRef = new PolicyReference("le");
    spec.template = new PodTemplateSpecBuilder().withNewSpec().addNewContainer().withName("agent").withImage("x")
        .endContainer().endSpec().build();
    i.setSpec(spec);
    api.client().resource(i).create();
  }
}

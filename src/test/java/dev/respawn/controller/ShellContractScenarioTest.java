package dev.respawn.controller;

import static dev.respawn.controller.OperatorFixture.at;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.policy.Decision;
import dev.respawn.policy.EventReason;
import dev.respawn.sandbox.Run;
import dev.respawn.testsupport.ApiFaults;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * What the shell promises around the core: it touches only pods the instance controls (api.md §2), and
 * it tells (Events, audit, metrics) only what it committed.
 */
class ShellContractScenarioTest extends MockClusterScenario {
  /** A pod that carries the instance's labels but no controller ownerReference of it. */
  private Pod stranger(String name, String instance, String run) {
    PodBuilder b = new PodBuilder().withNewMetadata().withName(name).withNamespace(OperatorFixture.NS)
        .addToLabels(AgentInstance.INSTANCE_LABEL, instance).endMetadata().withNewSpec().addNewContainer()
        .withName("agent").withImage("someone/else:1").endContainer().endSpec();
    if (run != null) {
      b.editMetadata().addToLabels(AgentInstance.RUN_LABEL, run).endMetadata();
    }
    return f.client.pods().inNamespace(OperatorFixture.NS).resource(b.build()).create();
  }

  /** The decisions the operator tells (after their commit), from now on. */
  private List<Decision> toldDecisions() {
    List<Decision> told = new CopyOnWriteArrayList<>();
    f.observer = new DecisionSink() {
      @Override
      public void decided(AgentInstance instance, Decision decision, Pod pod) {
        told.add(decision);
      }

      @Override
      public void policyRefused(AgentInstance instance, Refusal reason, String message, java.time.Instant at) {}
    };
    return told;
  }

  @Test
  void aLabelledStrangerPodSurvivesEveryPhase() {
    f.policy("fast", "backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}");
    // labelled as runs of the instance, before and ahead of its own: neither adopted, ended nor deleted
    // the simulated kubelet plays scripts in the order it meets the instance's pods: the strangers first
    f.kubelet.script("lookalike", Run.runForever(), Run.runForever(), Run.exit(1), Run.runForever());
    Pod old = stranger("lookalike-0", "lookalike", null);
    Pod ahead = stranger("lookalike-7", "lookalike", "7");
    for (String name : List.of("lookalike-0", "lookalike-7")) {
      await().atMost(OperatorFixture.AT_MOST).until(() -> f.pod(name).getStatus() != null
          && "Running".equals(f.pod(name).getStatus().getPhase()));
    }
    f.instance("lookalike", "fast");
    AgentInstance running = f.awaitInstance("lookalike", i -> at(i, 2, Phase.Running));
    assertThat(running.getStatus().currentPod).isEqualTo("lookalike-2");
    await().atMost(OperatorFixture.AT_MOST).until(() -> f.pod("lookalike-1") == null); // its own: cleaned up
    f.edit("lookalike", i -> {
      i.getSpec().suspend = true;
      return i;
    });
    f.awaitInstance("lookalike", i -> i.getStatus().phase == Phase.Suspended);
    await().atMost(OperatorFixture.AT_MOST).until(() -> f.pod("lookalike-2") == null);
    f.holdsFor(Duration.ofMillis(500), () -> List.of(f.pod("lookalike-0"), f.pod("lookalike-7")),
        pods -> pods.get(0) != null && pods.get(1) != null);
    assertThat(f.pod("lookalike-0").getMetadata().getUid()).isEqualTo(old.getMetadata().getUid());
    assertThat(f.pod("lookalike-7").getMetadata().getUid()).isEqualTo(ahead.getMetadata().getUid());
    assertThat(f.get("lookalike").getStatus().run).isEqualTo(2);
    assertThat(f.operatorWrites()).noneSatisfy(w -> assertThat(w.path()).contains("lookalike-0"))
        .noneSatisfy(w -> assertThat(w.path()).contains("lookalike-7"));
  }

  @Test
  void aStrangerPodInTheWayOfTheNextRunIsASpawnFailureUntilItGoes() {
    f.policy("fast", "backoff: {type: Linear, initialDelay: 100ms, maxDelay: 300ms}");
    f.kubelet.script("squat", Run.runForever(), Run.runForever());
    Pod squatter = stranger("squat-1", "someone-else", null);
    f.instance("squat", "fast");

    AgentInstance waiting = f.awaitInstance("squat", i -> i.getStatus().lastDecision != null
        && "spawn_failed".equals(i.getStatus().lastDecision.reasonCode));
    assertThat(waiting.getStatus().lastDecision.message).contains("squat-1", "not owned by this AgentInstance");
    assertThat(waiting.getStatus().attempt).as("not a failure of the agent").isZero();
    assertThat(waiting.getStatus().phase).isEqualTo(Phase.Backoff);
    f.awaitEvent("squat", e -> assertThat(e.getNote()).contains("spawn_failed", "squat-1"));
    assertThat(f.pod("squat-1").getMetadata().getUid()).isEqualTo(squatter.getMetadata().getUid());

    f.client.pods().inNamespace(OperatorFixture.NS).withName("squat-1").delete();
    AgentInstance running = f.awaitInstance("squat", i -> at(i, 1, Phase.Running));
    assertThat(running.getStatus().currentPod).isEqualTo("squat-1");
    assertThat(f.pod("squat-1").getMetadata().getOwnerReferences()).singleElement()
        .satisfies(o -> assertThat(o.getUid()).isEqualTo(running.getMetadata().getUid()));
    assertThat(running.getStatus().attempt).isZero();
  }

  /**
   * An instance deleted and made again under its name (GitOps, kubectl replace --force): on a cluster its old pods
   * stay until the garbage collector and their graceful stop are done. The first run waits for its name, and says
   * why: not a stranger to delete by hand. Once that pod is gone the start is made, as a StatefulSet makes its pod
   * again, not at the end of a retry delay that doubled while it waited.
   */
  @Test
  void aPodOfAnEarlierInstanceOfTheSameNameIsWaitedForAndSaidSo() {
    f.policy("fast", "backoff: {type: Linear, initialDelay: 100ms, maxDelay: 300ms}");
    f.kubelet.script("again", Run.runForever());
    f.client.pods().inNamespace(OperatorFixture.NS).resource(new PodBuilder().withNewMetadata().withName("again-1")
        .withNamespace(OperatorFixture.NS).addToLabels(AgentInstance.INSTANCE_LABEL, "again")
        .addToLabels(AgentInstance.RUN_LABEL, "1").addNewOwnerReference().withApiVersion("respawn.dev/v1alpha1")
        .withKind("AgentInstance").withName("again").withUid("uid-of-the-old").withController(true)
        .withBlockOwnerDeletion(true).endOwnerReference().endMetadata().withNewSpec().addNewContainer()
        .withName("agent").withImage("registry.example/agents/coder:1.3").endContainer().endSpec().build()).create();
    f.instance("again", "fast");

    // refused in a row: the retry doubles (1 s, 2 s, 4 s, ...)
    AgentInstance waiting = f.awaitInstance("again", i -> i.getStatus().lastDecision != null
        && "spawn_failed".equals(i.getStatus().lastDecision.reasonCode)
        && i.getStatus().lastDecision.delaySeconds != null && i.getStatus().lastDecision.delaySeconds >= 4);
    assertThat(waiting.getStatus().lastDecision.message).contains("again-1",
        "belongs to an earlier AgentInstance of this name", "tried again until it is gone");
    assertThat(f.pod("again-1").getMetadata().getOwnerReferences()).singleElement()
        .satisfies(o -> assertThat(o.getUid()).isEqualTo("uid-of-the-old"));
    Instant due = Instant.parse(waiting.getStatus().nextRestartAt);

    f.client.pods().inNamespace(OperatorFixture.NS).withName("again-1").delete();
    AgentInstance running = f.awaitInstance("again", i -> at(i, 1, Phase.Running));
    Pod made = f.pod("again-1");
    assertThat(made.getMetadata().getOwnerReferences()).singleElement()
        .satisfies(o -> assertThat(o.getUid()).isEqualTo(running.getMetadata().getUid()));
    assertThat(Instant.parse(made.getMetadata().getCreationTimestamp())).as("made before the retry %s was due", due)
        .isBefore(due.minusSeconds(1));
  }

  /**
   * A status write refused by a server error, or by a conflict (the instance changed since it was read, and does not
   * show the status meant): decided again, told once.
   */
  @org.junit.jupiter.params.ParameterizedTest
  @org.junit.jupiter.params.provider.CsvSource({"500, InternalError, injected: etcd is unavailable",
      "409, Conflict, injected: the object has been modified"})
  void aFailedStatusWriteLeavesNoTraceAndTheRetryTellsOnce(int code, String reason, String message) {
    List<Decision> told = toldDecisions();
    f.policy("slow", "backoff: {type: Exponential, initialDelay: 1s, maxDelay: 1s}");
    f.kubelet.script("flaky", Run.exit(1).after(Duration.ofMillis(300)), Run.runForever());
    f.instance("flaky", "slow");
    f.awaitInstance("flaky", i -> at(i, 1, Phase.Running));
    AtomicInteger refused = new AtomicInteger();
    f.api.faults(new ApiFaults() {
      @Override
      public MockResponse before(RecordedRequest request) {
        boolean statusWrite = "PATCH".equals(request.getMethod()) && request.getPath().contains("/agentinstances/")
            && request.getPath().contains("/status");
        if (statusWrite && refused.get() < 2) {
          refused.incrementAndGet();
          return ApiFaults.status(code, reason, message);
        }
        return null;
      }
    });
    AgentInstance backoff = f.awaitInstance("flaky", i -> i.getStatus().phase == Phase.Backoff);
    assertThat(refused.get()).isEqualTo(2);
    assertThat(backoff.getStatus().attempt).isEqualTo(1);
    // the failure was decided three times; only the decision that was committed is told, after the commit
    java.util.function.Supplier<List<Decision>> failures = () -> told.stream().filter(d -> d.notices().stream()
        .anyMatch(n -> n.reason() == EventReason.RestartFailed)).toList();
    await().atMost(OperatorFixture.AT_MOST).until(() -> !failures.get().isEmpty());
    f.holdsFor(Duration.ofMillis(500), failures, list -> list.size() == 1);
    assertThat(failures.get().get(0).audit()).isPresent();
    await().atMost(OperatorFixture.AT_MOST).untilAsserted(() -> assertThat(f.events("flaky"))
        .filteredOn(e -> "RestartFailed".equals(e.getReason())).hasSize(1));
  }

  @Test
  void aStatusWriteAnsweredNotFoundIsAnInstanceDeletedMeanwhileNothingIsToldNothingFails() {
    List<Decision> told = toldDecisions();
    AtomicInteger gone = new AtomicInteger();
    f.api.faults(ApiFaults.refuseStatusWrites("vanishing", 404, "NotFound",
        "agentinstances.respawn.dev \"vanishing\" not found", gone));
    f.policy("plain", null);
    f.instance("vanishing", "plain");
    await().atMost(OperatorFixture.AT_MOST).until(() -> gone.get() >= 1);
    f.holdsFor(Duration.ofMillis(500), () -> told.stream().filter(d -> d.state().run >= 1).count(), n -> n == 0);
    assertThat(f.operator.isReady()).as("the operator goes on").isTrue();
  }

  @Test
  void anInstanceTheSchemaShouldHaveRefusedIsRefusedAgainAndRunsNothing() {
    f.policy("fast", "backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}");
    f.instance("empty", "fast", spec -> spec.template.getSpec().setContainers(List.of()));
    String longName = "x".repeat(64);
    f.instance(longName, "fast");
    AgentInstance empty = f.awaitInstance("empty", i -> OperatorFixture.hasCondition(i, "Ready", "False",
        "InvalidSpec"));
    assertThat(OperatorFixture.condition(empty, "Ready").message)
        .contains("spec.template.spec.containers: must name at least one container");
    AgentInstance tooLong = f.awaitInstance(longName, i -> OperatorFixture.hasCondition(i, "Ready", "False",
        "InvalidSpec"));
    assertThat(OperatorFixture.condition(tooLong, "Ready").message).contains("metadata.name: must be at most 63");
    f.instance("a.b", "fast");
    AgentInstance dotted = f.awaitInstance("a.b", i -> OperatorFixture.hasCondition(i, "Ready", "False",
        "InvalidSpec"));
    assertThat(OperatorFixture.condition(dotted, "Ready").message).contains("metadata.name: must be a DNS-1123 label");
    f.holdsFor(Duration.ofMillis(500), () -> f.pods("empty").size() + f.pods(longName).size() + f.pods("a.b").size(),
        n -> n == 0);
    f.awaitEvent("empty", e -> assertThat(e.getReason()).isEqualTo("PolicyInvalid"));
  }

  @Test
  void specFieldsOutsideTheSchemasBoundsAreRefusedAgainAndRunNothing() {
    f.policy("fast", "backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}");
    f.instance("badlease", "fast", spec -> {
      spec.heartbeat = new dev.respawn.api.v1alpha1.InstanceHeartbeatSpec();
      spec.heartbeat.leaseName = "Bad_Lease";
    });
    f.instance("longtask", "fast", spec -> spec.task = "t".repeat(300));
    f.instance("noname", "fast", spec -> spec.policyRef.name = "");
    for (String[] refused : List.of(new String[] {"badlease", "spec.heartbeat.leaseName: must be a DNS-1123 subdomain"},
        new String[] {"longtask", "spec.task: must be at most 256 characters (got 300)"},
        new String[] {"noname", "spec.policyRef.name: must not be empty"})) {
      AgentInstance i = f.awaitInstance(refused[0], a -> OperatorFixture.hasCondition(a, "Ready", "False",
          "InvalidSpec"));
      assertThat(OperatorFixture.condition(i, "Ready").message).as(refused[0]).contains(refused[1]);
    }
    f.holdsFor(Duration.ofMillis(500), () -> f.podsEverCreated("badlease").size()
        + f.podsEverCreated("longtask").size() + f.podsEverCreated("noname").size(), n -> n == 0);
  }

  @Test
  void anAgentContainerTheTemplateDoesNotHaveIsRefusedAndRunsNothing() {
    f.policy("fast", "backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}");
    f.kubelet.script("typo", Run.runForever());
    f.instance("typo", "fast", spec -> spec.agentContainer = "agnet");
    AgentInstance typo = f.awaitInstance("typo", i -> OperatorFixture.hasCondition(i, "Ready", "False",
        "InvalidSpec"));
    assertThat(OperatorFixture.condition(typo, "Ready").message)
        .contains("spec.agentContainer: must name a container of spec.template.spec.containers (got \"agnet\"")
        .contains("the template has agent");
    f.holdsFor(Duration.ofMillis(500), () -> f.podsEverCreated("typo").size(), n -> n == 0);
    f.edit("typo", i -> {
      i.getSpec().agentContainer = "agent";
      return i;
    });
    f.awaitInstance("typo", i -> OperatorFixture.at(i, 1, dev.respawn.api.v1alpha1.Phase.Running));
  }

  @Test
  void anAgentContainerRenamedWhileARunLivesAppliesToTheNextRunNotToThePodOfTheOldTemplate() {
    f.policy("fast", "backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}");
    f.kubelet.script("renamed", Run.runForever(), Run.runForever());
    f.instance("renamed", "fast");
    f.awaitInstance("renamed", i -> OperatorFixture.at(i, 1, dev.respawn.api.v1alpha1.Phase.Running));
    f.edit("renamed", i -> {
      i.getSpec().template.getSpec().getContainers().get(0).setName("main");
      i.getSpec().agentContainer = "main";
      return i;
    });
    f.awaitInstance("renamed", i -> i.getStatus().observedGeneration != null && i.getStatus().observedGeneration >= 2);
    // the pod of the old template ends: its container "agent" decides, as when it was made
    f.kubelet.terminate("renamed-1", 1, "Error", "network_timeout: upstream model API");
    AgentInstance next = f.awaitInstance("renamed", i -> OperatorFixture.at(i, 2,
        dev.respawn.api.v1alpha1.Phase.Running));
    assertThat(next.getStatus().lastFailure.failureClass).isEqualTo(dev.respawn.api.v1alpha1.InterruptionClass.ToolFailure);
    assertThat(next.getStatus().lastFailure.exitCode).isEqualTo(1);
    assertThat(f.pod("renamed-2").getMetadata().getAnnotations())
        .containsEntry(AgentInstance.AGENT_CONTAINER_ANNOTATION, "main");
  }

  /**
   * "commit the status first, then tell": once the RestartStarted Event of run 2 is on the server, the status
   * must say run 2 (the Event names a pod that status does not know yet otherwise).
   */
  @Test
  void restartStartedEventIsNotWrittenBeforeStatusShowsTheRun() {
    f.policy("plain", "backoff: {type: Exponential, initialDelay: 100ms, maxDelay: 1s}\nresetAfter: 30m");
    // the next run's pod takes 3 s to start (an image pull)
    f.kubelet.script("slow", Run.exit(1).after(Duration.ofMillis(300)),
        Run.runForever().startAfter(Duration.ofSeconds(3)));
    f.instance("slow", "plain");
    await().atMost(OperatorFixture.AT_MOST).until(() -> f.events("slow").stream()
        .anyMatch(e -> "RestartStarted".equals(e.getReason())));
    AgentInstance seen = f.get("slow");
    assertThat(seen.getStatus().run).as("status.run when the RestartStarted Event of slow-2 exists: %s",
        f.describe("slow")).isEqualTo(2);
    assertThat(seen.getStatus().currentPod).isEqualTo("slow-2");
  }

  /**
   * §8 "One decision writes at most one Event": a suspended instance whose policy is missing, created with a restart
   * request, is decided once (suspended, request refused, policy refused): one Event, the others in its note.
   */
  @Test
  void oneDecisionOfARefusedSuspendedInstanceWritesOneEvent() {
    AgentInstance i = new AgentInstance();
    i.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName("both").withNamespace(OperatorFixture.NS)
        .withAnnotations(java.util.Map.of(AgentInstance.RESTART_ANNOTATION, "r1")).build());
    dev.respawn.api.v1alpha1.AgentInstanceSpec spec = new dev.respawn.api.v1alpha1.AgentInstanceSpec();
    spec.policyRef = new dev.respawn.api.v1alpha1.PolicyReference("missing");
    spec.suspend = true;
    spec.template = new io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder().withNewSpec().addNewContainer()
        .withName("agent").withImage("registry.example/agents/coder:1.4").endContainer().endSpec().build();
    i.setSpec(spec);
    f.client.resource(i).create();
    f.awaitInstance("both", x -> x.getStatus().phase == Phase.Suspended);
    await().atMost(OperatorFixture.AT_MOST).until(() -> f.events("both").size(), n -> n >= 1);
    var events = f.holdsFor(Duration.ofMillis(1500), () -> f.events("both"), e -> e.size() == 1);
    assertThat(events).as("Events of one decision").singleElement().satisfies(e -> {
      assertThat(e.getReason()).isEqualTo("PolicyInvalid");
      assertThat(e.getNote()).contains("PolicyNotFound", "RestartRequested: Restart request r1 refused");
    });
  }
}

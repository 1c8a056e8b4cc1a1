package dev.respawn.fuzz;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.heartbeat.HeartbeatLeases;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import java.util.HashMap;
import java.util.Map;
import dev.respawn.policy.Bounds;
import dev.respawn.policy.Decision;
import dev.respawn.policy.EndingKind;
import dev.respawn.policy.InstanceState;
import dev.respawn.policy.LeaseView;
import dev.respawn.policy.PodFacts;
import dev.respawn.policy.Sighting;
import dev.respawn.simulate.SimulatedPods;
import dev.respawn.policy.PodView;
import dev.respawn.policy.PolicyCompiler;
import dev.respawn.policy.PolicyInvalidException;
import dev.respawn.policy.Request;
import dev.respawn.policy.RestartEvaluator;
import dev.respawn.policy.RestartPolicy;
import dev.respawn.policy.RunEnding;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Example;
import net.jqwik.api.statistics.Statistics;
import dev.respawn.api.v1alpha1.HealthVerdict;
import net.jqwik.api.Tuple;

/**
 * Fuzzing the decision core: for any valid generated policy and any story (runs that start, exit with
 * any code, reason and message, are evicted, vanish; heartbeats with any verdict, detail and checkpoint;
 * restart and resume requests with huge, empty or non-ASCII ids; suspend; time jumps), every decision is
 * made without an exception, is deterministic, leaves its input untouched, starts a pod only when none
 * is live, and keeps the bounds of api.md §9.
 */
class DecisionCoreFuzzProperties {
  static final Instant T0 = Instant.parse("2026-11-22T10:00:00Z");
  static final String HUGE = "ü".repeat(6 * 1024);

  sealed interface Step permits Run, Exit, End, Advance, Wake, Beat, Restart, Resume, Suspend, Look {}

  record Run() implements Step {}

  record Exit(int code, String reason, String message) implements Step {}

  record End(EndingKind kind, String reason, String message) implements Step {}

  record Advance(long millis) implements Step {}

  record Wake() implements Step {}

  /** The agent renews its Lease with these annotations (null: absent). */
  record Beat(String verdict, String detail, String checkpoint, String status, String idempotent,
      String artifacts) implements Step {}

  record Restart(String id, String reason) implements Step {}

  record Resume(String id) implements Step {}

  record Suspend(boolean on) implements Step {}

  record Look() implements Step {}

  @Property(tries = 1000, seed = "31337")
  void theCoreKeepsItsBoundsForAnyPolicyAndStory(@ForAll long policySeed, @ForAll("stories") List<Step> story)
      throws PolicyInvalidException {
    RestartPolicy policy = PolicyCompiler.compile(Serialization.jsonMapper().convertValue(
        SpecGenerator.generate(policySeed, false, 0).spec(), AgentRestartPolicySpec.class));
    Driver driver = new Driver(policy);
    driver.play(story);
    Statistics.label("final phase").collect(driver.state.phase);
    Statistics.label("restarts").collect(driver.state.restarts == 0 ? "0" : driver.state.restarts < 4 ? "1-3" : "4+");
  }

  // --- found by this fuzzing in the decision core (policy package); the controller now cuts its input ---

  /**
   * The Lease's checkpoint and checkpoint-status went into status.resume as they were: an agent writing a
   * 12 KiB checkpoint grew every status write by 12 KiB (api.md §5/§9: at most 256 bytes). A checkpoint that
   * long is now no checkpoint at all (a cut name would name none the agent has); its status is cut.
   */
  @Example
  void aHugeCheckpointNeverReachesStatus() throws PolicyInvalidException {
    InstanceState s = running();
    LeaseView lease = new LeaseView(T0, T0, HealthVerdict.Healthy, null, HUGE, HUGE, true, true);
    Decision d = RestartEvaluator.builtIn().decide(PolicyCompiler.compile(new AgentRestartPolicySpec()), s,
        exited(s, 1, "Error", lease), T0, new SplittableRandom(1));
    assertThat(d.state().resume.checkpoint()).isNull();
    assertThat(d.state().resume.checkpointStatus().getBytes(StandardCharsets.UTF_8).length)
        .isLessThanOrEqualTo(Bounds.CHECKPOINT_BYTES);
    assertThat(d.state().resume.reasonCode()).isEqualTo(dev.respawn.policy.ReasonCode.RESUME_MISSING_CHECKPOINT);
  }

  /**
   * The container's termination reason goes uncut into status.lastRestart.reason ("ToolFailure/... exit 1
   * <reason>") and into the RestartFailed Event: a 12 KiB reason gives a 12 KiB status field. The kubelet
   * writes short reasons, so this needs a pod status written by someone else.
   */
  @Example
  void aHugeTerminationReasonIsCutInStatus() throws PolicyInvalidException {
    InstanceState s = running();
    Decision d = RestartEvaluator.builtIn().decide(PolicyCompiler.compile(new AgentRestartPolicySpec()), s,
        exited(s, 1, HUGE, null), T0, new SplittableRandom(1));
    assertThat(d.state().lastRestart.reason().getBytes(StandardCharsets.UTF_8).length)
        .isLessThanOrEqualTo(Bounds.MESSAGE_BYTES);
  }

  private static InstanceState running() {
    InstanceState s = new InstanceState();
    s.phase = dev.respawn.api.v1alpha1.Phase.Running;
    s.run = 1;
    s.currentPod = "agent-1";
    s.runStartedAt = T0;
    return s;
  }

  private static Sighting exited(InstanceState s, int code, String reason, LeaseView lease) {
    PodView pod = new PodView(s.currentPod, "uid-1", PodView.Stage.FINISHED, T0, T0, null, null, false);
    RunEnding e = new RunEnding(s.currentPod, "uid-1", EndingKind.TERMINATED, code, reason, "", T0);
    return new Sighting("agents", "agent", SimulatedPods.INSTANCE_UID, false,
        List.of(new PodFacts(pod, s.run, SimulatedPods.INSTANCE_UID, Optional.of(e))), true, Optional.ofNullable(lease),
        s.currentPod, Map.of(), Map.of());
  }

  @Provide
  Arbitrary<List<Step>> stories() {
    Arbitrary<String> text = Arbitraries.oneOf(Arbitraries.of("", " ", "Error", "OOMKilled", "DeadlineExceeded",
        "Evicted", "network_timeout: upstream", "invalid_configuration", "syntax_error", "résumé ✓", "日本語"),
        Arbitraries.strings().ofMaxLength(40), Arbitraries.just(HUGE), Arbitraries.strings().withCharRange('\u0000',
        '\uffff').ofMinLength(300).ofMaxLength(700));
    // container termination reasons come from the kubelet: short words (see aHugeTerminationReason...)
    Arbitrary<String> reason = Arbitraries.oneOf(Arbitraries.of("", "Error", "OOMKilled", "DeadlineExceeded",
        "Evicted", "Completed", "ContainerCannotRun", "Ünknown"), Arbitraries.strings().ofMaxLength(40));
    Arbitrary<Step> run = Arbitraries.just(new Run());
    Arbitrary<Step> exit = Combinators.combine(Arbitraries.oneOf(Arbitraries.of(0, 1, 2, 42, 78, 137, 139, 255),
        Arbitraries.integers().between(-5, 300)), reason, text).as(Exit::new);
    Arbitrary<Step> end = Combinators.combine(Arbitraries.of(EndingKind.DISRUPTED, EndingKind.DELETED,
        EndingKind.NODE_LOST, EndingKind.NO_STATE), reason, text).as(End::new);
    Arbitrary<Step> advance = Arbitraries.oneOf(Arbitraries.longs().between(0, 2_000),
        Arbitraries.longs().between(0, 3 * 3_600_000L)).map(Advance::new);
    Arbitrary<String> verdict = Arbitraries.oneOf(Arbitraries.of("Healthy", "Stalled", "Crashed", "Ambiguous",
        "healthy", " Healthy ", "Unknown"), text).injectNull(0.2);
    Arbitrary<String> bool = Arbitraries.of("true", "false", "TRUE", "yes", "", HUGE).injectNull(0.3);
    Arbitrary<Step> beat = Combinators.combine(verdict, text.injectNull(0.3), text.injectNull(0.3),
        Arbitraries.oneOf(Arbitraries.of("in_progress", "failed", "complete", "", "bogus", HUGE), text).injectNull(0.3),
        bool, bool).as(Beat::new);
    Arbitrary<Step> restart = Combinators.combine(text, text.injectNull(0.5)).as(Restart::new);
    Arbitrary<Step> resume = text.map(Resume::new);
    Arbitrary<Step> suspend = Arbitraries.of(true, false).map(Suspend::new);
    Arbitrary<Step> wake = Arbitraries.just(new Wake());
    Arbitrary<Step> look = Arbitraries.just(new Look());
    return Arbitraries.frequencyOf(Tuple.of(6, run), Tuple.of(6, exit), Tuple.of(2, end), Tuple.of(5, advance),
        Tuple.of(6, wake), Tuple.of(3, beat), Tuple.of(2, restart), Tuple.of(1, resume), Tuple.of(1, suspend),
        Tuple.of(2, look)).list().ofMinSize(1).ofMaxSize(60);
  }

  /** Plays a story through the core the way the controller does, checking every decision. */
  static final class Driver {
    final RestartPolicy policy;
    final RestartEvaluator evaluator = RestartEvaluator.builtIn();
    InstanceState state = new InstanceState();
    Instant now = T0;
    PodView pod;
    LeaseView lease;
    boolean suspend;
    Request restart;
    Request resume;
    Decision last;
    final SimulatedPods pods = new SimulatedPods("agents", "agent");
    final Map<String, RunEnding> endings = new HashMap<>();

    Driver(RestartPolicy policy) {
      this.policy = policy;
    }

    void play(List<Step> story) {
      decide(null);
      for (Step s : story) {
        if (s instanceof Run) {
          if (pod != null && pod.stage() == PodView.Stage.PENDING) {
            pod = new PodView(pod.name(), pod.uid(), PodView.Stage.RUNNING, pod.createdAt(), now, null, null, true);
          }
          decide(null);
        } else if (s instanceof Exit e) {
          decide(ending(EndingKind.TERMINATED, e.code(), e.reason(), e.message()));
        } else if (s instanceof End e) {
          decide(ending(e.kind(), null, e.reason(), e.message()));
        } else if (s instanceof Advance a) {
          now = now.plusMillis(a.millis());
          decide(null);
        } else if (s instanceof Wake) {
          Instant at = state.nextRestartAt != null ? state.nextRestartAt : last.wakeAt().orElse(now);
          now = at.isAfter(now) ? at : now;
          decide(null);
        } else if (s instanceof Beat b) {
          if (pod != null) {
            lease = lease(b);
          }
          decide(null);
        } else if (s instanceof Restart r) {
          restart = request(r.id(), r.reason());
          decide(null);
        } else if (s instanceof Resume r) {
          resume = request(r.id(), null);
          decide(null);
        } else if (s instanceof Suspend x) {
          suspend = x.on();
          decide(null);
        } else {
          decide(null);
        }
      }
    }

    /** The Lease as the controller hands it to the core ({@link HeartbeatLeases#view}). */
    private LeaseView lease(Beat b) {
      Map<String, String> a = new HashMap<>();
      put(a, HeartbeatLeases.HEALTH, b.verdict());
      put(a, HeartbeatLeases.DETAIL, b.detail());
      put(a, HeartbeatLeases.CHECKPOINT, b.checkpoint());
      put(a, HeartbeatLeases.CHECKPOINT_STATUS, b.status());
      put(a, HeartbeatLeases.STEP_IDEMPOTENT, b.idempotent());
      put(a, HeartbeatLeases.ARTIFACTS_READY, b.artifacts());
      Lease l = new LeaseBuilder().withNewMetadata().withName("agent").withAnnotations(a).endMetadata()
          .withNewSpec().withHolderIdentity(pod.name()).withRenewTime(now.atZone(java.time.ZoneOffset.UTC)).endSpec()
          .build();
      return HeartbeatLeases.view(l, now);
    }

    private static void put(Map<String, String> m, String k, String v) {
      if (v != null) {
        m.put(k, v);
      }
    }

    /** As the controller reads the annotations: stripped, cut to 256 bytes, blank means none. */
    static Request request(String id, String reason) {
      if (id == null || id.isBlank()) {
        return null;
      }
      return new Request(Bounds.truncateUtf8(id.strip(), Bounds.REQUEST_ID_BYTES),
          reason == null ? null : Bounds.truncateUtf8(reason, Bounds.MESSAGE_BYTES));
    }

    private RunEnding ending(EndingKind kind, Integer code, String reason, String message) {
      if (pod == null || !pod.isLive()) {
        return null;
      }
      RunEnding e = new RunEnding(pod.name(), pod.uid(), kind, code, reason, message, now);
      pod = new PodView(pod.name(), pod.uid(), PodView.Stage.FINISHED, pod.createdAt(), pod.startedAt(), null, null,
          false);
      return e;
    }

    private void decide(RunEnding ending) {
      if (pod != null) {
        pods.update(pod, ending != null && ending.podUid().equals(pod.uid()) ? ending : endings.get(pod.uid()));
        if (ending != null) {
          endings.put(ending.podUid(), ending);
        }
      }
      pods.lease(lease, lease == null || pod == null ? null : pod.name());
      Sighting o = pods.sighting(suspend, dev.respawn.testsupport.Requests.of(restart, resume));
      InstanceState before = state.copy();
      long seed = 0x5eedL ^ state.run;
      Decision d = evaluator.decide(policy, state, o, now, new SplittableRandom(seed));
      Decision again = evaluator.decide(policy, state, o, now, new SplittableRandom(seed));
      assertThat(state).as("the core changed its input").isEqualTo(before);
      assertThat(again.state()).as("deterministic state").isEqualTo(d.state());
      assertThat(again.start()).as("deterministic start").isEqualTo(d.start());
      assertThat(again.deletePod()).as("deterministic delete").isEqualTo(d.deletePod());
      check(before, d);
      last = d;
      state = d.state();
      pods.apply(d, now);
      if (d.deletePod() || d.start().isPresent()) {
        lease = null;
      }
      pod = state.currentPod == null ? null : pods.pod(state.currentPod).orElse(null);
    }

    private void check(InstanceState before, Decision d) {
      InstanceState s = d.state();
      assertThat(s.history).as("history").hasSizeLessThanOrEqualTo(Bounds.HISTORY_ENTRIES);
      policy.restartLimit().ifPresent(l -> assertThat(s.recentRestarts).as("recentRestarts")
          .hasSizeLessThanOrEqualTo(l.maxRestarts()));
      assertThat(s.attempt).as("attempt").isNotNegative();
      assertThat(s.run).as("run").isGreaterThanOrEqualTo(before.run);
      assertThat(s.restarts).as("restarts").isGreaterThanOrEqualTo(before.restarts);
      if (s.lastFailure != null) {
        bytes("lastFailure.message", s.lastFailure.message(), Bounds.MESSAGE_BYTES);
      }
      if (s.heartbeat != null) {
        bytes("heartbeat.detail", s.heartbeat.detail(), Bounds.DETAIL_BYTES);
      }
      if (s.lastRestart != null) {
        bytes("lastRestart.reason", s.lastRestart.reason(), Bounds.MESSAGE_BYTES);
        bytes("lastRestart.requestId", s.lastRestart.requestId(), Bounds.REQUEST_ID_BYTES);
        bytes("lastRestart.resumeCheckpoint", s.lastRestart.resumeCheckpoint(), Bounds.CHECKPOINT_BYTES);
      }
      s.handledRequests.forEach((kind, id) -> bytes("handled " + kind.statusKey() + " request", id,
          Bounds.REQUEST_ID_BYTES));
      bytes("resume.checkpoint", s.resume.checkpoint(), Bounds.CHECKPOINT_BYTES);
      bytes("resume.checkpointStatus", s.resume.checkpointStatus(), Bounds.CHECKPOINT_BYTES);
      bytes("Ready message", d.liveness().message(), 1024);
      d.notices().forEach(n -> bytes("event " + n.reason(), n.message(), 1024));
      d.start().ifPresent(start -> {
        assertThat(pod == null || !pod.isLive() || d.deletePod()).as("a pod started beside a live one").isTrue();
        assertThat(start.run()).as("run of the new pod").isEqualTo(s.run);
        assertThat(start.podName()).isEqualTo("agent-" + start.run());
        assertThat(s.phase.isTerminal()).as("a pod started in a terminal phase").isFalse();
        boolean requested = !s.handledRequests.equals(before.handledRequests);
        assertThat(before.nextRestartAt == null || !now.isBefore(before.nextRestartAt) || requested)
            .as("started before nextRestartAt " + before.nextRestartAt + " at " + now).isTrue();
      });
    }

    private static void bytes(String what, String text, int max) {
      if (text == null) {
        return;
      }
      assertThat(text.getBytes(StandardCharsets.UTF_8).length).as(what + " bytes").isLessThanOrEqualTo(max);
      assertThat(!text.isEmpty() && Character.isHighSurrogate(text.charAt(text.length() - 1)))
          .as(what + " cut inside a character").isFalse();
    }
  }
}

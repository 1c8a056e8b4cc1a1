package dev.respawn.policy;

import static dev.respawn.policy.EvaluatorFixture.assertToldCircuitChange;
import static dev.respawn.policy.EvaluatorFixture.escalatedTwiceFailed;
import static dev.respawn.policy.EvaluatorFixture.reasons;
import static dev.respawn.policy.EvaluatorFixture.sim;
import static dev.respawn.policy.Specs.retries;
import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.CircuitState;
import dev.respawn.api.v1alpha1.InterruptionClass;
import dev.respawn.api.v1alpha1.OperatorRequest;
import dev.respawn.api.v1alpha1.Phase;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * api.md §6 respawn.dev/resume: a resume starts a new lifecycle out of Escalated, Failed or Succeeded (from an eligible
 * checkpoint), is refused while the instance runs or waits, and is the first run's start before any decision.
 */
class ResumeRequestTest {
  /**
   * A resume asked for before the first decision (or the last id of a manifest that GitOps re-creates: §6 never
   * removes it) is that first run's start, as a restart asked for then is: no Warning that it was refused, no
   * restart counted, and it is not acted on again.
   */
  @Test
  void aResumeAskedForBeforeTheFirstDecisionIsTheFirstRunsStart() {
    AgentSim s = sim(Specs.spec());
    s.resumeRequest = new Request("resume-2026-11-20", null);
    Decision d = s.reconcile();
    assertThat(d.start()).hasValueSatisfying(p -> assertThat(p.podName()).isEqualTo("coder-1"));
    assertThat(d.notices()).noneMatch(n -> n.type() == EventType.Warning);
    assertThat(s.state.lastRestart.kind()).isEqualTo(RestartKind.Resume);
    assertThat(s.state.lastRestart.requestId()).isEqualTo("resume-2026-11-20");
    assertThat(s.state.restarts).isZero();
    assertThat(s.state.handled(OperatorRequest.RESUME, "resume-2026-11-20")).isTrue();
    s.running();
    s.advance(Duration.ofMinutes(1));
    assertThat(s.reconcile().deletePod()).as("the id is answered").isFalse();
    s.resumeRequest = new Request("resume-2026-11-27", null);
    assertThat(s.reconcile().notices()).as("a resume of a live run, after the first decision")
        .anySatisfy(n -> assertThat(n.message()).contains("Resume request resume-2026-11-27 refused"));
  }

  @Test
  void aResumeStartsANewLifecycleFromEscalated() {
    AgentSim s = escalatedTwiceFailed();
    s.resumeRequest = new Request("resume-1", null);
    Decision d = s.reconcile();
    assertThat(d.start()).isPresent();
    assertThat(s.state.attempt).isZero();
    assertThat(s.state.circuit.state()).isEqualTo(CircuitState.Closed);
    assertThat(s.state.recentRestarts).hasSize(1); // cleared, then this restart
    assertThat(s.state.terminalReason).isNull();
    assertThat(s.state.handledRequests.get(dev.respawn.api.v1alpha1.OperatorRequest.RESUME)).isEqualTo("resume-1");
    assertThat(s.state.lastRestart.kind()).isEqualTo(RestartKind.Resume);
    s.running();
    assertThat(s.reconcile().start()).isEmpty(); // acted on once
  }

  @Test
  void aResumeRunsAFinishedAgentAgain() {
    AgentSim s = sim(Specs.spec()).started();
    s.exit(0);
    assertThat(s.state.phase).isEqualTo(Phase.Succeeded);
    s.resumeRequest = new Request("again", null);
    assertThat(s.reconcile().start()).hasValueSatisfying(p -> assertThat(p.run()).isEqualTo(2));
    assertThat(s.state.terminalReason).isNull();
  }

  @Test
  void aResumeInTheEditThatClearsSuspendStartsANewLifecycle() {
    AgentSim s = escalatedTwiceFailed();
    s.suspend = true;
    s.reconcile();
    assertThat(s.state.phase).as("the escalation stays while suspended").isEqualTo(Phase.Escalated);
    s.suspend = false;
    s.resumeRequest = new Request("after-suspend", null);
    Decision d = s.reconcile();
    assertThat(d.start()).isPresent();
    assertThat(s.state.attempt).isZero();
    assertThat(s.state.circuit.state()).isEqualTo(CircuitState.Closed);
    assertThat(s.state.lastRestart.kind()).isEqualTo(RestartKind.Resume);
  }

  @Test
  void aResumeIsRefusedWhileTheInstanceRunsOrWaitsNothingIsEndedOrReset() {
    AgentSim s = sim(Specs.spec()).started();
    s.resumeRequest = new Request("resume-live", null);
    Decision live = s.reconcile();
    assertThat(live.deletePod()).isFalse();
    assertThat(live.start()).isEmpty();
    assertThat(live.notices()).anySatisfy(n -> {
      assertThat(n.type()).isEqualTo(EventType.Warning);
      assertThat(n.message()).contains("resume-live", "refused", "Running", "respawn.dev/restart");
    });
    assertThat(s.state.handledRequests.get(dev.respawn.api.v1alpha1.OperatorRequest.RESUME)).isEqualTo("resume-live");
    assertThat(s.state.phase).isEqualTo(Phase.Running);
    assertThat(s.state.run).isEqualTo(1);
    // its audit line: the retries no failure sequence has used yet, the policy's (it said 0 before any decision)
    assertThat(live.audit()).hasValueSatisfying(a -> {
      assertThat(a.reasonCode()).isEqualTo(dev.respawn.policy.ReasonCode.REQUEST_REFUSED);
      assertThat(a.maxAttempts()).isEqualTo(s.policy.maxRetries()).isPositive();
    });

    s.exit(1);
    assertThat(s.state.phase).isEqualTo(Phase.Backoff);
    s.resumeRequest = new Request("resume-waiting", null);
    Decision waiting = s.reconcile();
    assertThat(waiting.start()).isEmpty();
    assertThat(s.state.attempt).as("not reset: the failure sequence goes on").isEqualTo(1);
    assertThat(reasons(waiting)).contains("RestartRequested");
  }

  /**
   * Status tells a refused request from one acted on (on-call tester: an Event expires within the hour): its id and
   * why stay in refusedRequests until a later request of its kind is acted on.
   */
  @Test
  void aRefusedResumeStaysInStatusWithWhyUntilAResumeIsActedOn() {
    var resume = dev.respawn.api.v1alpha1.OperatorRequest.RESUME;
    AgentSim s = sim(Specs.retries(Specs.spec(), 0)).started();
    s.resumeRequest = new Request("too-early", null);
    s.reconcile();
    assertThat(s.state.refusedRequests.get(resume)).isEqualTo(new InstanceState.RefusedRequest("too-early",
        "phase Running is not Escalated, Failed or Succeeded, nothing to resume; use respawn.dev/restart (kubectl "
            + "respawn restart coder)"));
    s.exit(1);
    assertThat(s.state.phase).isEqualTo(Phase.Escalated);
    assertThat(s.state.refusedRequests).as("a decision of another kind keeps it").containsKey(resume);
    s.resumeRequest = new Request("now", null);
    assertThat(s.reconcile().start()).isPresent();
    assertThat(s.state.handledRequests.get(resume)).isEqualTo("now");
    assertThat(s.state.refusedRequests).as("acted on: the refusal is history").isEmpty();
  }

  /** §6: each request is acted on once: a resume refused while Running does not swallow a restart of the same edit. */
  @Test
  void aRefusedResumeDoesNotSwallowARestartRequestedInTheSameEdit() {
    AgentSim s = sim(Specs.spec()).started();
    s.resumeRequest = new Request("a", null);
    s.restartRequest = new Request("b", null);
    Decision d = s.reconcile();
    assertThat(d.deletePod()).as("the restart ends the live run").isTrue();
    assertThat(d.notices()).anySatisfy(n -> assertThat(n.message()).contains("Resume request a refused"));
    assertThat(s.state.lastRestart.kind()).isEqualTo(RestartKind.Manual);
    assertThat(s.state.lastRestart.requestId()).isEqualTo("b");
  }

  /**
   * §6: a resume and a restart set in one edit on an Escalated instance restart it once, as the resume (a new
   * lifecycle); its circuit is told closed (CircuitBreakerStateChanged).
   */
  @Test
  void aResumeAndARestartInOneEditRestartOnceAsTheResume() {
    AgentSim s = escalatedTwiceFailed();
    assertThat(s.state.circuit.state()).isEqualTo(CircuitState.Open);
    s.resumeRequest = new Request("a", null);
    s.restartRequest = new Request("b", null);
    Decision d = s.reconcile();
    assertThat(d.start()).isPresent();
    assertThat(s.state.lastRestart.kind()).isEqualTo(RestartKind.Resume);
    assertThat(s.state.lastRestart.requestId()).isEqualTo("a");
    assertThat(s.state.handled(OperatorRequest.RESTART, "b")).isTrue();
    assertThat(s.state.circuit.state()).isEqualTo(CircuitState.Closed);
    assertToldCircuitChange(d, "Open -> Closed");
  }

  /** README §6 table: a resume from Escalated "resumes from the checkpoint when eligible". */
  @Test
  void aResumeRequestResumesFromAnEligibleCheckpoint() {
    AgentSim s = sim(retries(Specs.spec(), 0)).started();
    s.checkpoint("ckpt-9", "in_progress", true, true);
    s.exit(1);
    assertThat(s.state.phase).isEqualTo(Phase.Escalated);
    s.resumeRequest = new Request("go", null);
    Decision d = s.reconcile();
    assertThat(d.start()).hasValueSatisfying(p -> assertThat(p.resumeCheckpoint()).contains("ckpt-9"));
    assertThat(s.state.lastRestart.kind()).isEqualTo(RestartKind.Resume);
    assertThat(s.state.resume.checkpoint()).isEqualTo("ckpt-9");
    assertThat(s.state.resume.reasonCode()).isEqualTo(ReasonCode.RESUME_ALLOWED);
  }

  /**
   * api.md §1 resume.maxAttempts is "per failure sequence", §6 a resume request starts "a new lifecycle": the
   * checkpoint it hands over is no attempt of the next sequence, which gets all of its own.
   */
  @Test
  void aResumeRequestsCheckpointUsesNoneOfTheNextSequencesResumeAttempts() {
    AgentSim s = sim(Specs.resume(Specs.spec(), "Require", 1)).started();
    s.checkpoint("ckpt-1", "in_progress", true, true);
    s.exit(1);
    s.restartAndRun();
    assertThat(s.state.resume.attempts()).isEqualTo(1);
    s.checkpoint("ckpt-1", "in_progress", true, true);
    s.exit(1);
    assertThat(s.state.phase).isEqualTo(Phase.Escalated);
    assertThat(s.state.lastDecision.reasonCode()).isEqualTo(ReasonCode.RESUME_ATTEMPT_LIMIT_REACHED);
    s.resumeRequest = new Request("again", null);
    Decision resumed = s.reconcile();
    assertThat(resumed.start()).hasValueSatisfying(p -> assertThat(p.resumeCheckpoint()).contains("ckpt-1"));
    assertThat(resumed.notices()).anySatisfy(n -> assertThat(n.message()).contains("from checkpoint ckpt-1")
        .contains("resume request"));
    s.running();
    assertThat(s.state.resume.attempts()).isZero();
    s.checkpoint("ckpt-2", "in_progress", true, true);
    s.exit(1);
    assertThat(s.state.phase).as("the new sequence's first failure may resume").isEqualTo(Phase.Backoff);
    assertThat(s.state.resume.eligible()).isTrue();
    Decision again = s.restartAndRun();
    assertThat(s.starts).last().satisfies(p -> assertThat(p.resumeCheckpoint()).contains("ckpt-2"));
    assertThat(s.state.resume.attempts()).isEqualTo(1);
    assertThat(again.state().phase).isEqualTo(Phase.Running);
  }

  /** §8: the audit line of a resume request names the class it was judged for, also when it is not eligible. */
  @Test
  void theAuditLineOfAResumeRequestNamesTheLastFailuresClassEligibleOrNot() {
    AgentSim s = sim(retries(Specs.spec(), 0)).started();
    s.exit(1);
    assertThat(s.state.phase).isEqualTo(Phase.Escalated);
    s.resumeRequest = new Request("r-1", null);
    Decision resumed = s.reconcile();
    assertThat(resumed.audit()).hasValueSatisfying(a -> {
      assertThat(a.interruptionClass()).isEqualTo(InterruptionClass.ToolFailure);
      assertThat(a.actor()).isEqualTo("operator");
    });
  }
}

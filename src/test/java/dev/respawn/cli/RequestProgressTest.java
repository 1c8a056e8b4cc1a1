package dev.respawn.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentInstanceStatus;
import dev.respawn.cli.RequestProgress.State;
import java.io.IOException;
import org.junit.jupiter.api.Test;

/** How --wait reads a request's fate from status.handledRequests and status.lastRestart. */
class RequestProgressTest {
  static AgentInstance with(String status) throws IOException {
    AgentInstance i = Instances.instance("ns", "coder", null);
    i.setStatus(new YAMLMapper().readValue(status, AgentInstanceStatus.class));
    return i;
  }

  @Test
  void notHandledYetIsPending() throws IOException {
    RequestProgress p = RequestProgress.of(with("{phase: Running, handledRequests: {restart: cli-1}}"), "cli-2",
        false);

    assertThat(p.state()).isEqualTo(State.PENDING);
    assertThat(p.message()).contains("not handled by the operator yet");
  }

  @Test
  void acceptedWithoutTheNewPodIsPending() throws IOException {
    RequestProgress p = RequestProgress.of(with("""
        {phase: Backoff, handledRequests: {restart: cli-2}, lastRestart: {kind: Manual, requestId: cli-2}}
        """), "cli-2", false);

    assertThat(p.state()).isEqualTo(State.PENDING);
    assertThat(p.message()).contains("accepted; waiting for the new pod");
  }

  @Test
  void theNewRunStarted() throws IOException {
    RequestProgress p = RequestProgress.of(with("""
        {phase: Starting, handledRequests: {restart: cli-2},
         lastRestart: {kind: Manual, requestId: cli-2, previousPod: coder-1, pod: coder-2, startedAt: "2026-01-01T00:00:00Z"}}
        """), "cli-2", false);

    assertThat(p.state()).isEqualTo(State.STARTED);
    assertThat(p.message()).isEqualTo("pod coder-2 replaces coder-1");
  }

  @Test
  void handledWithoutARestartInATerminalPhaseIsRefused() throws IOException {
    RequestProgress p = RequestProgress.of(with("""
        {phase: Escalated, handledRequests: {restart: cli-2}, lastRestart: {kind: Failure, requestId: ""}}
        """), "cli-2", false);

    assertThat(p.state()).isEqualTo(State.REFUSED);
    assertThat(p.message()).isEqualTo("restart request cli-2 refused: phase Escalated is terminal; use kubectl "
        + "respawn resume coder --force");
  }

  @Test
  void aRestartSupersededByAResumeSaysSo() throws IOException {
    RequestProgress p = RequestProgress.of(with("""
        {phase: Starting, handledRequests: {restart: cli-2, resume: cli-3},
         lastRestart: {kind: Resume, requestId: cli-3, startedAt: "2026-01-01T00:00:00Z"}}
        """), "cli-2", false);

    assertThat(p.state()).isEqualTo(State.REFUSED);
    assertThat(p.message()).contains("superseded by resume request cli-3");
  }

  @Test
  void acceptedThenTerminalBeforeTheNewRunFailed() throws IOException {
    RequestProgress p = RequestProgress.of(with("""
        {phase: Failed, handledRequests: {resume: cli-4}, lastDecision: {reasonCode: invalid_template},
         lastRestart: {kind: Resume, requestId: cli-4}}
        """), "cli-4", true);

    assertThat(p.state()).isEqualTo(State.FAILED);
    assertThat(p.message()).contains("resume request cli-4 was accepted", "Failed (invalid_template)");
  }

  /**
   * The new run ran and failed before status showed its start: lastRestart is the failure's restart now, but
   * status's history has the run that followed the request (made when status.run was 1).
   */
  @Test
  void aRunThatStartedAndEndedSinceTheRequestIsStarted() throws IOException {
    AgentInstance failedFast = with("""
        {phase: Backoff, run: 2, handledRequests: {restart: cli-2},
         lastRestart: {kind: Failure, requestId: "", previousPod: coder-2},
         history: [{run: 1, pod: coder-1, startedAt: "2026-01-01T00:00:00Z"},
                   {run: 2, pod: coder-2, startedAt: "2026-01-01T00:01:00Z", outcome: Failure}]}
        """);
    RequestProgress p = RequestProgress.of(failedFast, "cli-2", false, 1);

    assertThat(p.state()).isEqualTo(State.STARTED);
    assertThat(p.message()).isEqualTo("pod coder-2 started and replaced coder-1; it has ended since (phase Backoff)");
    assertThat(p.followed().startedAt).isEqualTo("2026-01-01T00:01:00Z");
    assertThat(RequestProgress.of(failedFast, "cli-2", false, 2).state()).as("no run after the request: refused")
        .isEqualTo(State.REFUSED);
  }

  /** The request ended a run whose start status did not show yet (coder-2); its restart is coder-3. */
  @Test
  void theRunTheRequestEndedIsNotTheRestartItCaused() throws IOException {
    AgentInstance st = with("""
        {phase: Backoff, run: 3, handledRequests: {restart: cli-2},
         lastRestart: {kind: Failure, requestId: "", previousPod: coder-3},
         history: [{run: 1, pod: coder-1, startedAt: "2026-01-01T00:00:00Z", reasonCode: restart_scheduled},
                   {run: 2, pod: coder-2, startedAt: "2026-01-01T00:01:00Z", reasonCode: manual_restart},
                   {run: 3, pod: coder-3, startedAt: "2026-01-01T00:02:00Z", reasonCode: restart_scheduled}]}
        """);
    RequestProgress p = RequestProgress.of(st, "cli-2", false, 1);

    assertThat(p.state()).isEqualTo(State.STARTED);
    assertThat(p.followed().pod).isEqualTo("coder-3");
    assertThat(p.message()).startsWith("pod coder-3 started and replaced coder-2");
  }

  @Test
  void aRestartThatStartedTheFirstRunReplacesNoPod() throws IOException {
    RequestProgress p = RequestProgress.of(with("""
        {phase: Running, handledRequests: {restart: cli-1},
         lastRestart: {kind: Manual, requestId: cli-1, pod: coder-1, startedAt: "2026-01-01T00:00:00Z"}}
        """), "cli-1", false);

    assertThat(p.message()).isEqualTo("pod coder-1 started");
  }

  @Test
  void aDeletedInstanceFailed() {
    assertThat(RequestProgress.of(null, "cli-1", false).state()).isEqualTo(State.FAILED);
  }

  @Test
  void actedOnThenSupersededByAnotherOfTheKindTakesThatOnesOutcome() throws IOException {
    AgentInstance st = with("""
        {phase: Starting, run: 3, handledRequests: {restart: pipeline-b}, earlierRequests: {restart: [cli-1]},
         lastRestart: {kind: Manual, requestId: pipeline-b, previousPod: coder-2, pod: coder-3,
                       startedAt: "2026-01-01T00:00:05Z"}}
        """);
    RequestProgress p = RequestProgress.of(st, "cli-1", false, 1);

    assertThat(p.state()).isEqualTo(State.STARTED);
    assertThat(p.message()).isEqualTo("restart request cli-1 was handled, then request pipeline-b came: pod coder-3 "
        + "replaces coder-2");
    // the later one not started yet: still pending
    AgentInstance accepted = with("""
        {phase: Starting, handledRequests: {restart: pipeline-b}, earlierRequests: {restart: [cli-1]},
         lastRestart: {kind: Manual, requestId: pipeline-b}}
        """);
    assertThat(RequestProgress.of(accepted, "cli-1", false, 1).state()).isEqualTo(State.PENDING);
  }

  @Test
  void notActedOnWhileTheInstanceIsRefusedSaysWhy() throws IOException {
    RequestProgress p = RequestProgress.of(with("""
        {phase: Running, conditions: [{type: Ready, status: "False", reason: PolicyNotFound,
          message: "AgentRestartPolicy gone does not exist; nothing is restarted until it does"}]}
        """), "cli-2", false);

    assertThat(p.state()).isEqualTo(State.PENDING);
    assertThat(p.message()).isEqualTo("restart request cli-2 not acted on: the operator acts on no request while the "
        + "instance is refused (PolicyNotFound: AgentRestartPolicy gone does not exist; nothing is restarted until it "
        + "does)");
  }

  @Test
  void aRequestSentBeforeIsReportedAsStatusShowsIt() throws IOException {
    AgentInstance started = with("""
        {phase: Running, handledRequests: {restart: ci-42},
         lastRestart: {kind: Manual, requestId: ci-42, previousPod: coder-1, pod: coder-2, startedAt: "2026-01-01T00:00:00Z"}}
        """);
    assertThat(RequestProgress.handledBefore(started, "ci-42", false)).get()
        .satisfies(p -> assertThat(p.state()).isEqualTo(State.STARTED))
        .satisfies(p -> assertThat(p.message()).isEqualTo("restart request ci-42 was handled already: pod coder-2 replaces coder-1"));
    // a failure's restart since replaced lastRestart: acted on all the same
    AgentInstance since = with("""
        {phase: Backoff, handledRequests: {restart: ci-42}, lastRestart: {kind: Failure, pod: coder-3}}
        """);
    assertThat(RequestProgress.handledBefore(since, "ci-42", false)).get()
        .satisfies(p -> assertThat(p.state()).isEqualTo(State.STARTED));
    AgentInstance refused = with("""
        {phase: Escalated, handledRequests: {restart: ci-42},
         refusedRequests: {restart: {id: ci-42, message: "phase Escalated is terminal"}}}
        """);
    assertThat(RequestProgress.handledBefore(refused, "ci-42", false)).get()
        .satisfies(p -> assertThat(p.state()).isEqualTo(State.REFUSED))
        .satisfies(p -> assertThat(p.message()).isEqualTo("restart request ci-42 was refused: phase Escalated is "
            + "terminal"));
    // accepted, its pod to come; and not handled at all: waited for as any request
    AgentInstance accepted = with("""
        {phase: Backoff, handledRequests: {restart: ci-42}, lastRestart: {kind: Manual, requestId: ci-42}}
        """);
    assertThat(RequestProgress.handledBefore(accepted, "ci-42", false)).isEmpty();
    assertThat(RequestProgress.handledBefore(with("{phase: Running}"), "ci-42", false)).isEmpty();
    // the other kind's id is not this one's
    assertThat(RequestProgress.handledBefore(started, "ci-42", true)).isEmpty();
  }

  /**
   * Restart ci-r and resume ci-y were handled in one decision: the resume restarted the instance, the restart was
   * answered by it. The same id given again is reported as the wait reported it: superseded.
   */
  @Test
  void aRestartSupersededByAResumeIsReportedTheSameWhenRetried() throws IOException {
    AgentInstance st = with("""
        {phase: Running, run: 4, handledRequests: {restart: ci-r, resume: ci-y},
         lastRestart: {kind: Resume, requestId: ci-y, previousPod: coder-3, pod: coder-4,
                       startedAt: "2026-01-01T00:00:05Z"}}
        """);
    State waited = RequestProgress.of(st, "ci-r", false, 3).state();
    State retried = RequestProgress.handledBefore(st, "ci-r", false).map(RequestProgress::state).orElse(null);

    assertThat(waited).isEqualTo(State.REFUSED);
    assertThat(retried).as("wait said " + waited).isEqualTo(waited);
  }
}

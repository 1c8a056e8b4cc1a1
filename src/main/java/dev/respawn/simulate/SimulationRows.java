package dev.respawn.simulate;

import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.policy.GoDuration;
import dev.respawn.policy.InstanceState;
import dev.respawn.policy.ReasonCode;
import dev.respawn.policy.RestartPolicy;
import dev.respawn.simulate.Simulation.Played;
import dev.respawn.simulate.SimulationReport.Event;
import dev.respawn.simulate.SimulationReport.Row;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/** One row of a simulation report: what a story step did, read from the state after it. */
final class SimulationRows {
  private final RestartPolicy policy;
  private final InstanceState state;
  private final Instant now;
  private final List<String> notes;
  private final List<Event> events;

  SimulationRows(RestartPolicy policy, InstanceState state, Instant now, List<String> notes, List<Event> events) {
    this.policy = policy;
    this.state = state;
    this.now = now;
    this.notes = notes;
    this.events = events;
  }

  Row row(int stepNo, StoryStep step, Played p) {
    InstanceState.FailureInfo failure = state.lastFailure;
    boolean failed = p.ended() && failure != null && failure.pod().equals(p.pod()) && failure.at().equals(p.at());
    InstanceState.DecisionInfo decision = p.ended() ? state.lastDecision : null;
    String delay = null;
    Double delaySeconds = null;
    String nextStart = null;
    Double nextStartSeconds = null;
    if (p.ended() && (state.phase == Phase.Backoff || state.phase == Phase.CircuitOpen)) {
      Duration d = Duration.between(p.at(), state.nextRestartAt);
      delay = GoDuration.formatMillis(d);
      delaySeconds = d.toMillis() / 1000.0;
      nextStart = Simulation.rel(state.nextRestartAt);
      nextStartSeconds = Simulation.seconds(state.nextRestartAt);
    } else if (p.ended() && state.run > p.run()) { // started again in the same decision
      delay = "0s";
      delaySeconds = 0.0;
      nextStart = Simulation.rel(p.at());
      nextStartSeconds = Simulation.seconds(p.at());
    }
    String checkpoint = null;
    if (p.ended() && state.lastRestart != null && p.pod().equals(state.lastRestart.previousPod())) {
      checkpoint = state.lastRestart.resumeCheckpoint();
    }
    List<String> rowNotes = new ArrayList<>(notes);
    if (failed) {
      addFailureNotes(rowNotes, failure, decision, checkpoint);
    }
    if (decision != null && decision.reasonCode() == ReasonCode.RESTART_REQUESTED) {
      rowNotes.add("restart requested by the agent: not a failure");
    }
    Integer exitCode = step.type().reportedByKubernetes() ? step.effectiveExitCode() : null;
    String reason = step.type().reportedByKubernetes() ? step.effectiveReason() : null;
    return new Row(stepNo, step.token(), true, p.run(), p.pod(), Simulation.rel(p.started()), Simulation.rel(p.at()), Simulation.seconds(p.at()),
        describe(step, p), exitCode, reason, step.message(),
        failed ? Simulation.name(failure.interruptionClass()) : null, failed ? failure.failureReason() : null,
        failed && failure.rule() != null && !failure.rule().isEmpty() ? failure.rule() : null,
        decision == null ? null : decision.action().name(), decision == null || decision.reasonCode() == null ? null : decision.reasonCode().code(),
        delay, delaySeconds, nextStart, nextStartSeconds, state.attempt,
        failed && decision != null && decision.reasonCode() != ReasonCode.FAILURE_IGNORED ? decision.maxAttempts()
            : null, state.circuit.state().name(),
        state.phase.name(), state.terminalReason == null ? null : state.terminalReason.name(), checkpoint,
        List.copyOf(rowNotes), List.copyOf(events));
  }

  private void addFailureNotes(List<String> rowNotes, InstanceState.FailureInfo failure,
      InstanceState.DecisionInfo decision, String checkpoint) {
    if (failure.rule() != null && !failure.rule().isEmpty()) {
      rowNotes.add("rule " + failure.rule());
    } else if (decision != null && decision.maxAttempts() < policy.maxRetries()) {
      rowNotes.add("built-in cap: at most " + decision.maxAttempts() + " retries for "
          + ("OOMKilled".equals(failure.reason()) ? "OOMKilled" : Simulation.name(failure.interruptionClass())));
    }
    if (decision != null && decision.reasonCode() == ReasonCode.FAILURE_IGNORED) {
      rowNotes.add("ignored: not counted as a failure");
    }
    InstanceState.ResumeInfo resume = state.resume;
    if (resume.reasonCode() != null && failure.at().equals(now) && decision != null
        && resume.reasonCode() != ReasonCode.RESUME_MISSING_CHECKPOINT) {
      if (checkpoint != null) {
        rowNotes.add("resumes from " + checkpoint + " (cool-down "
            + GoDuration.format(policy.resume().cooldown(failure.interruptionClass())) + ")");
      } else if (!Boolean.TRUE.equals(resume.eligible())) {
        rowNotes.add("no resume: " + resume.reasonCode());
      }
    }
  }

  private String describe(StoryStep step, Played p) {
    return switch (step.type()) {
      case EXIT -> "exit " + step.exitCode() + (step.message() != null ? ": " + step.message() : "");
      case OOM -> "OOMKilled (exit " + step.effectiveExitCode() + ")";
      case DEADLINE -> "DeadlineExceeded";
      case EVICTED -> "evicted (" + step.effectiveReason() + ")";
      case DELETED -> "pod deleted by someone else";
      case NODE_LOST -> "node lost";
      case NO_STATE -> "pod failed without a termination state";
      case HEARTBEAT_STALL -> p.ended() ? "heartbeat stale: no renewal seen for "
          + GoDuration.format(policy.heartbeat().timeout().orElse(Duration.ZERO)) : "heartbeats stopped";
      case STALLED -> "the agent reported Stalled";
      case CRASHED -> "the agent reported Crashed";
      case NEVER_STARTED -> p.ended() ? "never started within "
          + GoDuration.format(policy.heartbeat().startupGrace().orElse(Duration.ZERO)) + " (ImagePullBackOff)"
          : "never starts (ImagePullBackOff)";
      case OK -> "healthy for " + GoDuration.formatMillis(Duration.between(p.started(), p.at()));
    };
  }
}

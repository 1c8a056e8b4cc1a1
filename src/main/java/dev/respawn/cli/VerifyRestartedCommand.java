package dev.respawn.cli;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentInstanceStatus;
import dev.respawn.api.v1alpha1.RestartRecord;
import dev.respawn.api.v1alpha1.RunRecord;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code kubectl respawn verify-restarted NAME --since TIMESTAMP}: the seed's verify_server_restarted.
 * Exit 0 with the restart record when a new run started after TIMESTAMP; exit 1 with the reason otherwise.
 */
@Command(name = "verify-restarted", mixinStandardHelpOptions = true,
    description = "Confirm that a new run of the agent started after TIMESTAMP (exit 0), else say why not (exit 1).")
final class VerifyRestartedCommand extends PluginCommand {
  @Parameters(paramLabel = "NAME", description = "The AgentInstance.")
  String name;

  @Option(names = "--since", required = true, paramLabel = "TIMESTAMP",
      description = "RFC 3339 (2026-01-13T14:32:45Z), Unix seconds (1705158765.123) or a duration ago (5m).")
  String since;

  @Override
  int run(Cluster cluster) {
    Instant now = cluster.now();
    Instant after;
    try {
      after = Times.since(since, now);
    } catch (IllegalArgumentException e) {
      throw usage("Invalid value for option '--since': " + e.getMessage());
    }
    AgentInstance instance = cluster.instance(name);
    AgentInstanceStatus st = instance.getStatus() == null ? new AgentInstanceStatus() : instance.getStatus();
    RestartRecord confirmed = restartAfter(st, after);
    boolean restarted = confirmed != null;
    RestartRecord record = restarted ? confirmed : st.lastRestart;
    Instant started = record == null ? null : Times.parse(record.startedAt);
    Map<String, Object> d = new LinkedHashMap<>();
    d.put("restarted", restarted);
    d.put("agent_id", name);
    d.put("namespace", cluster.namespace);
    d.put("since", after.toString());
    d.put("restart_timestamp", started == null ? null : Times.epochSeconds(started));
    d.put("iso_time", record == null ? null : record.startedAt);
    d.put("time_since_restart", started == null ? null : Duration.between(started, now).toMillis() / 1000.0);
    d.put("previous_pod", record == null ? null : record.previousPod);
    d.put("pod", record == null ? null : record.pod);
    d.put("kind", record == null ? null : record.kind);
    d.put("reason", record == null ? null : record.reason);
    d.put("request_id", record == null || record.requestId == null || record.requestId.isEmpty() ? null
        : record.requestId);
    d.put("last_restart", st.lastRestart);
    if (restarted) {
      d.put("message", "Restart confirmed: pod " + record.pod + " started at " + record.startedAt);
      print(d, () -> Table.fields(new String[][] {
          {"Restarted", "yes, after " + after},
          {"Kind", record.kind},
          {"Reason", record.reason},
          {"Previous pod", record.previousPod},
          {"Pod", record.pod},
          {"Requested at", record.requestedAt},
          {"Started at", record.startedAt},
          {"Request id", record.requestId}}));
      return 0;
    }
    String why = notRestartedBecause(instance, st, after, now);
    d.put("message", why);
    if (options.output != OutputFormat.table) {
      print(d, () -> "");
    }
    return fail(why, 1);
  }

  /**
   * The restart of a run that started after {@code after}: the last restart's; or, when that run failed again and
   * the next failure's decision already replaced status.lastRestart with a pending restart, the latest run after it
   * (the current run, or one in status.history), described from the history. Null when no run started after it.
   */
  static RestartRecord restartAfter(AgentInstanceStatus st, Instant after) {
    if (st.lastRestart != null && Times.parse(st.lastRestart.startedAt) != null) {
      // a started last restart is the latest run's start (its pod's creation): no run started after it
      return startedAfter(st.lastRestart.startedAt, after) ? st.lastRestart : null;
    }
    List<RunRecord> history = st.history == null ? List.of() : st.history;
    // runStartedAt is the current run's start while it runs (cleared when it ends)
    if (st.run != null && st.run > 1 && startedAfter(st.runStartedAt, after)) {
      return restartOf(st.run, st.currentPod, st.runStartedAt, history);
    }
    for (int i = history.size() - 1; i >= 0; i--) {
      RunRecord run = history.get(i);
      // run 1 is the first start, not a restart
      if (run.run != null && run.run > 1 && startedAfter(run.startedAt, after)) {
        return restartOf(run.run, run.pod, run.startedAt, history);
      }
    }
    return null;
  }

  private static boolean startedAfter(String startedAt, Instant after) {
    Instant started = Times.parse(startedAt);
    return started != null && started.isAfter(after);
  }

  /** A restart record of run {@code run} as the history tells it: the run before it and why that one ended. */
  private static RestartRecord restartOf(int run, String pod, String startedAt, List<RunRecord> history) {
    RestartRecord r = new RestartRecord();
    r.pod = pod;
    r.startedAt = startedAt;
    history.stream().filter(h -> h.run != null && h.run == run - 1).findFirst().ifPresent(previous -> {
      r.previousPod = previous.pod;
      r.reason = previous.reasonCode;
    });
    return r;
  }

  /** Why a request id that is not the last handled one did nothing: pending, or acted on before (a revert). */
  private static String pending(AgentInstanceStatus st, dev.respawn.api.v1alpha1.OperatorRequest kind, String id) {
    boolean earlier = st.earlierRequests != null && st.earlierRequests.getOrDefault(kind.statusKey(), java.util.List.of())
        .contains(id);
    return earlier ? " was acted on before (status.earlierRequests) and is not acted on again; use a new id"
        : " is pending (not handled by the operator yet)";
  }

  /** No restart since, still pending, or a request the operator has not handled yet. */
  static String notRestartedBecause(AgentInstance instance, AgentInstanceStatus st, Instant after, Instant now) {
    String name = instance.getMetadata().getName();
    Map<String, String> annotations = instance.getMetadata().getAnnotations();
    String restartId = annotations == null ? null : annotations.get(AgentInstance.RESTART_ANNOTATION);
    String resumeId = annotations == null ? null : annotations.get(AgentInstance.RESUME_ANNOTATION);
    String handledRestart = st.handledRequests == null ? null
        : st.handledRequests.get(dev.respawn.api.v1alpha1.OperatorRequest.RESTART.statusKey());
    String handledResume = st.handledRequests == null ? null
        : st.handledRequests.get(dev.respawn.api.v1alpha1.OperatorRequest.RESUME.statusKey());
    RestartRecord last = st.lastRestart;
    String none = "agentinstance \"" + name + "\" has not restarted since " + after;
    if (resumeId != null && !resumeId.equals(handledResume)) {
      return none + ": resume request " + resumeId + pending(st, dev.respawn.api.v1alpha1.OperatorRequest.RESUME,
          resumeId);
    }
    if (restartId != null && !restartId.equals(handledRestart)) {
      return none + ": restart request " + restartId + pending(st, dev.respawn.api.v1alpha1.OperatorRequest.RESTART,
          restartId);
    }
    Instant requested = last == null ? null : Times.parse(last.requestedAt);
    if (last != null && Times.parse(last.startedAt) == null && requested != null && requested.isAfter(after)) {
      Instant next = Times.parse(st.nextRestartAt);
      return none + ": a " + last.kind + " restart decided at " + last.requestedAt + " is pending (phase " + st.phase
          + (next == null ? "" : ", next restart in " + Times.secondsUntil(next, now) + "s") + ")";
    }
    if (last == null || Times.parse(last.startedAt) == null) {
      return none + ": no restart recorded (run " + (st.run == null ? 0 : st.run) + ", phase " + st.phase + ")";
    }
    return none + ": the last restart started at " + last.startedAt + " (pod " + last.pod + ")";
  }
}

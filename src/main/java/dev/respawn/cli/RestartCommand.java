package dev.respawn.cli;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.Phase;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code kubectl respawn restart NAME --reason TEXT [--wait]}: the §6 restart request; and
 * {@code restart --all-failed}: every Failed or Escalated instance of the namespace resumed.
 */
@Command(name = "restart", mixinStandardHelpOptions = true,
    description = {"Ask the operator to restart an agent now (annotation respawn.dev/restart; not a failure).",
        "With --all-failed: resume every Failed or Escalated agent of the namespace (respawn.dev/resume)."})
final class RestartCommand extends PluginCommand {
  static final String REASON_ANNOTATION = AgentInstance.RESTART_REASON_ANNOTATION;

  @Parameters(paramLabel = "NAME", arity = "0..1", description = "The AgentInstance (not with --all-failed).")
  String name;

  @Option(names = "--reason", paramLabel = "TEXT",
      description = "Why (recorded in status.lastRestart.reason and the RestartRequested Event); required with NAME.")
  String reason;

  @Option(names = "--wait", description = "Wait until the new run started, or the request was refused.")
  boolean await;

  @Mixin
  RequestIdOption requestId;

  @Option(names = "--timeout", paramLabel = "DURATION", defaultValue = "60s", converter = DurationConverter.class,
      description = "How long --wait waits (default: ${DEFAULT-VALUE}).")
  Duration timeout;

  @Option(names = "--all-failed", description = "Resume every Failed or Escalated AgentInstance in the namespace.")
  boolean allFailed;

  @Override
  int run(Cluster cluster) {
    if (allFailed) {
      if (name != null) {
        throw usage("--all-failed takes no NAME: it resumes every Failed or Escalated instance of the namespace");
      }
      if (await) {
        throw usage("--wait is not supported with --all-failed; use kubectl respawn status NAME");
      }
      return new FailedAgentsResume(cluster, options.output, out()).run();
    }
    if (name == null) {
      throw usage("Missing NAME: which AgentInstance to restart (or --all-failed)");
    }
    if (reason == null || reason.isBlank()) {
      throw usage("Missing --reason: say why the agent is restarted (it is recorded in status.lastRestart.reason)");
    }
    AgentInstance before = cluster.instance(name);
    String id = requestId.id(cluster.clock, before, AgentInstance.RESTART_ANNOTATION, this::usage);
    // sent before (the same --request-id again): nothing new is sent, and what became of it is reported
    boolean sentBefore = requestId.sentBefore(before, AgentInstance.RESTART_ANNOTATION, id, false);
    java.util.Optional<RequestProgress> handled = sentBefore ? RequestProgress.handledBefore(before, id, false)
        : java.util.Optional.empty();
    String requestedAt = cluster.now().toString();
    Map<String, String> annotations = new LinkedHashMap<>();
    annotations.put(AgentInstance.RESTART_ANNOTATION, id);
    annotations.put(REASON_ANNOTATION, reason);
    if (!sentBefore) {
      cluster.annotate(name, annotations);
    }
    Phase phase = before.getStatus() == null ? null : before.getStatus().phase;
    Map<String, Object> d = new LinkedHashMap<>();
    d.put("success", true);
    d.put("action", "restart");
    d.put("agent_id", name);
    d.put("namespace", cluster.namespace);
    d.put("task_id", before.getSpec() == null ? null : before.getSpec().task);
    d.put("request_id", id);
    d.put("reason", reason);
    d.put("requested_at", requestedAt);
    d.put("phase", phase == null ? null : phase.name());
    String warning = RequestWarnings.restart(before, name, cluster.namespace);
    if (warning != null && handled.isEmpty()) {
      d.put("warning", warning);
    }
    if (!await && handled.isEmpty()) {
      d.put("waited", false);
      d.put("message", warning != null ? "Restart requested, but " + warning : "Restart requested");
      print(d, () -> "agentinstance/" + name + " restart requested (request " + id + ", reason: " + reason + ")");
      warn(warning);
      return 0;
    }
    RequestProgress progress = handled.orElseGet(() -> RequestWaiter.await(cluster, name, id, false, runOf(before),
        timeout));
    RequestWaiter.describe(d, progress);
    d.put("waited", handled.isEmpty()); // handled before: reported as status shows it, without a wait
    d.put("message", progress.state() == RequestProgress.State.STARTED ? "Restarted: " + progress.message()
        : progress.message());
    if (progress.state() == RequestProgress.State.STARTED) {
      print(d, () -> "agentinstance/" + name + " restarted: " + progress.message() + " (request " + id + ")");
      return 0;
    }
    if (options.output != OutputFormat.table) {
      print(d, () -> "");
    }
    return fail(progress.message(), 1);
  }
}

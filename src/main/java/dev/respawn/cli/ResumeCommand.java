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

/** {@code kubectl respawn resume NAME --force}: the §6 resume request, a new lifecycle. */
@Command(name = "resume", mixinStandardHelpOptions = true,
    description = {"Resume an Escalated (a latched circuit included), Failed or Succeeded agent (annotation "
        + "respawn.dev/resume): a new lifecycle with attempt 0, the circuit breaker closed and the restart window "
        + "cleared, restarted now.",
        "Needs --force: it overrides what the restart policy decided."})
final class ResumeCommand extends PluginCommand {
  /** Exit code when --force is missing (as a usage error). */
  static final int NOT_FORCED = 2;

  @Parameters(paramLabel = "NAME", description = "The AgentInstance.")
  String name;

  @Option(names = "--force", description = "Confirm: start a new lifecycle even though the policy gave up.")
  boolean force;

  @Option(names = "--wait", description = "Wait until the new run started, or the request was refused.")
  boolean await;

  @Mixin
  RequestIdOption requestId;

  @Option(names = "--timeout", paramLabel = "DURATION", defaultValue = "60s", converter = DurationConverter.class,
      description = "How long --wait waits (default: ${DEFAULT-VALUE}).")
  Duration timeout;

  @Override
  int run(Cluster cluster) {
    AgentInstance before = cluster.instance(name);
    Phase phase = before.getStatus() == null ? null : before.getStatus().phase;
    String code = before.getStatus() == null || before.getStatus().lastDecision == null ? null
        : before.getStatus().lastDecision.reasonCode;
    if (!force) {
      String now = phase == null ? "no status yet" : "phase " + phase + (code == null ? "" : ", " + code);
      throw new CommandFailure("resume starts a new lifecycle for agentinstance \"" + name + "\" (" + now
          + "): attempt 0, circuit breaker closed, restart window "
          + "cleared, and a restart now, whatever the restart policy decided. Re-run with --force to do it.",
          NOT_FORCED);
    }
    String id = requestId.id(cluster.clock, before, AgentInstance.RESUME_ANNOTATION, this::usage);
    // sent before (the same --request-id again): nothing new is sent, and what became of it is reported
    boolean sentBefore = requestId.sentBefore(before, AgentInstance.RESUME_ANNOTATION, id, true);
    java.util.Optional<RequestProgress> handled = sentBefore ? RequestProgress.handledBefore(before, id, true)
        : java.util.Optional.empty();
    String requestedAt = cluster.now().toString();
    if (!sentBefore) {
      cluster.annotate(name, Map.of(AgentInstance.RESUME_ANNOTATION, id));
    }
    Map<String, Object> d = new LinkedHashMap<>();
    d.put("success", true);
    d.put("action", "resume");
    d.put("agent_id", name);
    d.put("namespace", cluster.namespace);
    d.put("task_id", before.getSpec() == null ? null : before.getSpec().task);
    d.put("request_id", id);
    d.put("requested_at", requestedAt);
    d.put("phase", phase == null ? null : phase.name());
    d.put("reason", code);
    String warning = RequestWarnings.resume(before, name, cluster.namespace);
    if (warning != null && handled.isEmpty()) {
      d.put("warning", warning);
    }
    if (!await && handled.isEmpty()) {
      d.put("waited", false);
      d.put("message", warning != null ? "Resume requested, but " + warning
          : "Resume requested: a new lifecycle starts now");
      print(d, () -> "agentinstance/" + name + " resume requested (request " + id + ")" + (warning == null
          ? ": a new lifecycle starts now" : ""));
      warn(warning);
      return 0;
    }
    RequestProgress progress = handled.orElseGet(() -> RequestWaiter.await(cluster, name, id, true, runOf(before),
        timeout));
    RequestWaiter.describe(d, progress);
    d.put("waited", handled.isEmpty()); // handled before: reported as status shows it, without a wait
    d.put("message", progress.state() == RequestProgress.State.STARTED ? "Resumed: " + progress.message()
        : progress.message());
    if (progress.state() == RequestProgress.State.STARTED) {
      print(d, () -> "agentinstance/" + name + " resumed: " + progress.message() + " (request " + id + ")");
      return 0;
    }
    if (options.output != OutputFormat.table) {
      print(d, () -> "");
    }
    return fail(progress.message(), 1);
  }
}

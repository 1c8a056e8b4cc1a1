package dev.respawn.cli;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.policy.Bounds;
import java.nio.charset.StandardCharsets;
import java.time.InstantSource;
import java.util.Map;
import java.util.function.Function;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/**
 * {@code --request-id}: the id a restart or resume request is sent with. The operator acts once per id (api.md §6),
 * so a pipeline step that gives its own (e.g. its run id) and is retried after a lost answer restarts the agent once.
 */
final class RequestIdOption {
  @Option(names = "--request-id", paramLabel = "ID", description = "The request's id (default: cli-<epoch millis>). "
      + "Sending the id the instance carries already sends nothing new: the operator acts once per id, so a retried "
      + "pipeline step restarts once; with it, the request's outcome is reported as status shows it.")
  String given;

  /** The id to send: the one given (checked), else a new one. */
  String id(InstantSource clock, AgentInstance before, String annotation,
      Function<String, ParameterException> usage) {
    if (given == null) {
      return RequestIds.next(clock, before, annotation);
    }
    if (given.isBlank() || !given.strip().equals(given)) {
      throw usage.apply("--request-id must be non-empty, without leading or trailing blanks");
    }
    if (given.getBytes(StandardCharsets.UTF_8).length > Bounds.REQUEST_ID_BYTES) {
      throw usage.apply("--request-id must be at most " + Bounds.REQUEST_ID_BYTES + " bytes");
    }
    return given;
  }

  /**
   * Whether this request (its id given) was sent before: the instance carries {@code id} already, or status shows the operator
   * handled it (sent again, it would be ignored, and would write over a later request still waiting). Nothing new is
   * sent then.
   */
  boolean sentBefore(AgentInstance before, String annotation, String id, boolean resume) {
    if (given == null) {
      return false; // a new id
    }
    Map<String, String> annotations = before.getMetadata().getAnnotations();
    return annotations != null && id.equals(annotations.get(annotation)) || RequestProgress.known(before, id, resume);
  }
}

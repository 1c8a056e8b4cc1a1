package dev.respawn.simulate;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.respawn.policy.GoDuration;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The file form of a story: a YAML list of runs (or an object with a {@code runs:} list), each
 *
 * <pre>
 * - ending: exit            # any ending of the compact form: exit, oom, ..., ok; also "exit:1@30s"
 *   exitCode: 1             # exit (required), oom (default 137), deadline, evicted
 *   reason: Error           # container/pod reason: exit, evicted, no-state
 *   message: "network_timeout: upstream" # termination message (stalled/crashed: respawn.dev/detail)
 *   after: 30s              # how long the run lasted before it ended (ok: how long it stays healthy)
 *   checkpoint: ckpt-3      # Lease annotations during this run: respawn.dev/checkpoint,
 *   checkpointStatus: in_progress   #   respawn.dev/checkpoint-status (in_progress|failed|complete),
 *   stepIdempotent: true    #   respawn.dev/step-idempotent,
 *   artifactsReady: true    #   respawn.dev/artifacts-ready
 * </pre>
 */
public final class StoryYaml {
  private static final ObjectMapper YAML = YAMLMapper.builder()
      .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES).build();
  static final String FIELDS = "ending, exitCode, reason, message, after, checkpoint, checkpointStatus, "
      + "stepIdempotent, artifactsReady";

  private StoryYaml() {}

  /** One run of the file; every field but ending is optional. */
  static final class RunSpec {
    public String ending;
    public Integer exitCode;
    public String reason;
    public String message;
    public String after;
    public String checkpoint;
    public String checkpointStatus;
    public Boolean stepIdempotent;
    public Boolean artifactsReady;
  }

  /**
   * Parses a story file's text.
   *
   * @param source the file's name, for messages
   */
  public static Story parse(String text, String source) throws StoryException {
    JsonNode root;
    try {
      root = YAML.readTree(text);
    } catch (JsonProcessingException e) {
      throw new StoryException("story file " + source + " is not valid YAML: " + e.getOriginalMessage());
    }
    JsonNode runs = root;
    if (root != null && root.isObject()) {
      runs = root.get("runs");
      if (runs == null || root.size() != 1) {
        throw new StoryException("story file " + source + ": expected a list of runs, or an object with only a "
            + "runs: list");
      }
    }
    if (runs == null || !runs.isArray() || runs.isEmpty()) {
      throw new StoryException("story file " + source + ": expected a non-empty list of runs, each with at least "
          + "ending: (fields: " + FIELDS + ")");
    }
    List<StoryStep> steps = new ArrayList<>();
    for (int i = 0; i < runs.size(); i++) {
      String place = "story file " + source + ", run " + (i + 1);
      steps.add(step(runs.get(i), place));
    }
    return StoryParser.checked(steps);
  }

  private static StoryStep step(JsonNode node, String place) throws StoryException {
    if (!node.isObject()) {
      throw new StoryException(place + ": expected an object such as {ending: exit, exitCode: 1} (fields: "
          + FIELDS + ")");
    }
    RunSpec r;
    try {
      r = YAML.treeToValue(node, RunSpec.class);
    } catch (UnrecognizedPropertyException e) {
      throw new StoryException(place + ": unknown field \"" + e.getPropertyName() + "\"; known fields: " + FIELDS);
    } catch (JsonMappingException e) {
      String field = e.getPath().isEmpty() ? "?" : e.getPath().get(e.getPath().size() - 1).getFieldName();
      throw new StoryException(place + ": field " + field + " has the wrong type (" + e.getOriginalMessage()
          .replaceAll("\\s+", " ") + ")");
    } catch (JsonProcessingException e) {
      throw new StoryException(place + ": " + e.getOriginalMessage());
    }
    if (r.ending == null || r.ending.isBlank()) {
      throw new StoryException(place + ": ending is required; accepted forms: " + StoryParser.acceptedForms());
    }
    String ending = r.ending.strip();
    StoryStep base = "exit".equalsIgnoreCase(ending) ? StoryStep.of(EndingType.EXIT)
        : StoryParser.parseToken(ending, place);
    Duration after = base.after();
    if (r.after != null) {
      if (after != null) {
        throw new StoryException(place + ": the duration is given twice (in ending and in after)");
      }
      try {
        after = GoDuration.parse(r.after);
      } catch (IllegalArgumentException e) {
        throw new StoryException(place + ": after " + e.getMessage() + " (got \"" + r.after + "\")");
      }
    }
    if (r.exitCode != null && base.exitCode() != null) {
      throw new StoryException(place + ": the exit code is given twice (in ending and in exitCode)");
    }
    if (r.message != null && base.message() != null) {
      throw new StoryException(place + ": the message is given twice (in ending and in message)");
    }
    Integer exitCode = r.exitCode != null ? r.exitCode : base.exitCode();
    String message = r.message != null ? r.message : base.message();
    StoryStep.LeaseNotes lease = new StoryStep.LeaseNotes(r.checkpoint, r.checkpointStatus, r.stepIdempotent,
        r.artifactsReady);
    String token = token(base.type(), exitCode, r.after, base.after() != null ? ending : null);
    return new StoryStep(token, base.type(), exitCode, r.reason, message, after, lease).validated(place);
  }

  /** The compact form of a file step, for the report (messages and annotations left out). */
  private static String token(EndingType type, Integer exitCode, String afterText, String endingWithDuration) {
    String after = afterText;
    if (after == null && endingWithDuration != null) {
      after = type == EndingType.OK ? endingWithDuration.substring(endingWithDuration.indexOf(':') + 1)
          : endingWithDuration.substring(endingWithDuration.lastIndexOf('@') + 1);
    }
    if (type == EndingType.OK) {
      return after == null ? "ok" : "ok:" + after;
    }
    String head = type == EndingType.EXIT ? "exit:" + exitCode : type.token();
    return after == null ? head : head + "@" + after;
  }
}

package dev.respawn.simulate;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.UncheckedIOException;
import java.util.List;

/**
 * What a simulation shows: one row per story step, then a summary. Times are relative to the start of
 * the first run (t=0), written {@code +2s}, {@code +1m30s}; nothing in it depends on the wall clock.
 *
 * @param policy the simulated policy
 * @param seed the jitter seed (null when the policy has no jitter and none was given)
 * @param story the story in its compact form
 * @param runs one row per story step, in order
 * @param summary how the story ended
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record SimulationReport(PolicyInfo policy, Long seed, String story, List<Row> runs, Summary summary) {
  private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
  private static final ObjectMapper YAML = YAMLMapper.builder()
      .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
      .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES)
      .enable(YAMLGenerator.Feature.INDENT_ARRAYS_WITH_INDICATOR)
      .disable(YAMLGenerator.Feature.SPLIT_LINES)
      .build();

  public SimulationReport {
    runs = List.copyOf(runs);
  }

  /**
   * The policy as simulated.
   *
   * @param source the file it came from, or {@code cluster}
   * @param tierRestriction why the tier served another backoff type (TierRestricted), or null
   * @param settings the served settings, defaults filled in
   */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record PolicyInfo(String name, String namespace, String source, String tier, String tierRestriction,
      String settings) {}

  /**
   * One story step.
   *
   * @param step 1-based position in the story
   * @param token the step in the compact form
   * @param reached false when the story stopped before this step (a terminal phase, or an undetected stall)
   * @param run the run (pod) number the step happened to
   * @param startedAt when that run started (relative)
   * @param at when the step ended: the run's ending as the operator saw it, or the end of an ok period
   * @param ending how the run ended, in words
   * @param decision the action of the decision made at the ending (Restart, Wait, Escalate, Fail, None)
   * @param delay the wait until the next start (null when nothing restarts)
   * @param nextStartAt when the next run starts (relative)
   * @param attempt failures in the current failure sequence, after the decision
   * @param maxAttempts the retry limit that applied to this failure (rule, built-in cap or maxRetries)
   * @param resumeCheckpoint the checkpoint the next run resumes from
   * @param notes what else happened (circuit transitions, resets, resume verdicts, rules)
   * @param events the Kubernetes Events the operator would emit
   */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record Row(int step, String token, boolean reached, Integer run, String pod, String startedAt, String at,
      Double atSeconds, String ending, Integer exitCode, String reason, String message, String interruptionClass,
      String failureReason, String rule, String decision, String reasonCode, String delay, Double delaySeconds,
      String nextStartAt, Double nextStartSeconds, Integer attempt, Integer maxAttempts, String circuit,
      String phase, String terminalReason, String resumeCheckpoint, List<String> notes, List<Event> events) {

    static Row notReached(int step, String token, String why) {
      return new Row(step, token, false, null, null, null, null, null, null, null, null, null, null, null, null,
          null, null, null, null, null, null, null, null, null, null, null, null, List.of(why), null);
    }
  }

  /** A Kubernetes Event (api.md §8) the operator would emit. */
  public record Event(String type, String reason, String message) {}

  /**
   * How the story ended.
   *
   * @param outcome Healthy (the last run stayed healthy for resetAfter), Running (a run is up, not yet proven
   *     healthy), Escalated, Failed, Succeeded, or Stuck (the operator cannot see how the run ended)
   * @param at when the outcome was reached (relative): healthy, escalated, the last start, the stall
   * @param restarts restarts of every kind (status.restarts)
   * @param runs pods created (status.run)
   * @param notReached the story steps never reached
   * @param note why, in words
   */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record Summary(String outcome, String at, double atSeconds, int restarts, int runs, String phase,
      String terminalReason, String reasonCode, int attempt, String circuit, int circuitTrips,
      List<String> notReached, String note) {}

  public String toJson() {
    return write(JSON);
  }

  public String toYaml() {
    return write(YAML);
  }

  /** The aligned table with its header and summary. */
  public String toTable() {
    return ReportTable.render(this);
  }

  private String write(ObjectMapper mapper) {
    try {
      String s = mapper.writeValueAsString(this);
      return s.endsWith("\n") ? s : s + "\n";
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
  }
}

package dev.respawn.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;

/** Minimum delay before a resume, per interruption class. */
public class ResumeCooldowns {
  @JsonProperty("ToolFailure")
  @JsonPropertyDescription("Cool-down before resuming after a ToolFailure (Go duration). Default 30s.")
  @Default("30s")
  @Pattern(Durations.PATTERN)
  @Size(max = Durations.MAX_LENGTH)
  public String toolFailure;

  @JsonProperty("Timeout")
  @JsonPropertyDescription("Cool-down before resuming after a Timeout (Go duration). Default 120s.")
  @Default("120s")
  @Pattern(Durations.PATTERN)
  @Size(max = Durations.MAX_LENGTH)
  public String timeout;

  @JsonProperty("ContextReset")
  @JsonPropertyDescription("Cool-down before resuming after a ContextReset (Go duration). Default 10s.")
  @Default("10s")
  @Pattern(Durations.PATTERN)
  @Size(max = Durations.MAX_LENGTH)
  public String contextReset;

  @JsonProperty("ProcessCrash")
  @JsonPropertyDescription("Cool-down before resuming after a ProcessCrash (Go duration). Default 60s.")
  @Default("60s")
  @Pattern(Durations.PATTERN)
  @Size(max = Durations.MAX_LENGTH)
  public String processCrash;
}

package dev.respawn.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.crd.generator.annotation.SchemaFrom;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Size;
import java.util.List;

/** Criteria of a failure rule: every listed criterion must hold; a list matches if any element does. */
public class FailureMatch {
  /** At most this many classes in one match (room for classes to come; duplicates are harmless). */
  public static final int MAX_CLASSES = 16;

  @JsonPropertyDescription("Exit codes of the agent container (0..255); matches if the exit code is any of them.")
  @Size(max = 64)
  public List<@Min(0) @Max(255) Integer> exitCodes;

  @JsonPropertyDescription("Container termination reasons (OOMKilled, Error, DeadlineExceeded, Evicted, ...); "
      + "matches if the reason equals any of them.")
  @Size(max = 32)
  public List<@Size(max = 128) String> reasons;

  @JsonPropertyDescription("Substrings of the termination message; matches if the message contains any of them.")
  @Size(max = 32)
  public List<@Size(min = 1, max = 256) String> messageContains;

  @JsonPropertyDescription("Interruption classes after built-in classification (ContextReset, ToolFailure, "
      + "ProcessCrash, Timeout, Unknown); matches if the class is any of them.")
  @Size(max = MAX_CLASSES)
  @SchemaFrom(type = InterruptionClass[].class)
  public List<String> classes;
}

package dev.respawn.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.crd.generator.annotation.SchemaFrom;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;

public class ResumeSpec {
  @JsonPropertyDescription("Off (always a fresh restart), Prefer (resume when eligible, else fresh) or "
      + "Require (resume or escalate). Default Prefer.")
  @Default("Prefer")
  @SchemaFrom(type = ResumeMode.class)
  public String mode;

  @JsonPropertyDescription("Resume attempts allowed per failure sequence, 0..1000. Default 3.")
  @Default("3")
  @Min(0)
  @Max(1000)
  public Integer maxAttempts;

  @JsonPropertyDescription("Minimum delay before a resume, per interruption class.")
  @Default("{}")
  public ResumeCooldowns cooldowns;
}

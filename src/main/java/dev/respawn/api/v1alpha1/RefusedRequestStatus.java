package dev.respawn.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** A request (api.md §6) the operator refused: its id, and why, as its Warning Event said. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class RefusedRequestStatus {
  @JsonPropertyDescription("The request id (the annotation's value).")
  public String id;
  @JsonPropertyDescription("Why it was refused, and what to do instead.")
  public String message;
}

package dev.respawn.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.List;

/** The shared circuit of one dependency (api.md §11); written by the operator only. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class DependencyStatus {
  @JsonPropertyDescription("The dependency's name (spec.dependencies[].name).")
  public String name;
  @JsonPropertyDescription("Closed, Open (instances blamed on it wait) or HalfOpen (probes run).")
  public CircuitState state;
  @JsonPropertyDescription("Distinct instances blamed within the window, as of the circuit's last change (a blame "
      + "that only ages out is not written).")
  public Integer blamed;
  @JsonPropertyDescription("Instances waiting for it (phase CircuitOpen, status.waitingFor = this name).")
  public Integer waiting;
  @JsonPropertyDescription("Instances restarted as probes in HalfOpen; while Open, the probes whose runs still go on "
      + "after another probe reopened it (the next HalfOpen restarts only the missing number).")
  public List<String> probes;
  @JsonPropertyDescription("Times the circuit opened.")
  public Integer trips;
  @JsonPropertyDescription("When the circuit last opened.")
  public String openedAt;
  @JsonPropertyDescription("When the circuit goes (or went) HalfOpen: openedAt + openDuration.")
  public String halfOpenAt;
  @JsonPropertyDescription("When the circuit last closed.")
  public String closedAt;
  @JsonPropertyDescription("When the state last changed.")
  public String lastTransitionTime;
  @JsonPropertyDescription("The waiting instances in the order they are released after closing: the i-th (from 0) "
      + "at closedAt + i * 1.05 / releaseRate seconds (slots 5 % wider than 1 / releaseRate, so that no second "
      + "holds more than releaseRate of them).")
  public List<String> releaseOrder;
  @JsonPropertyDescription("The latest blamed failure of each instance blamed within the window (at most "
      + "failureThreshold of them): what opens the circuit.")
  public List<BlameRecord> recentBlame;
}

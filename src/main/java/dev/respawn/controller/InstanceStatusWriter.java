package dev.respawn.controller;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentInstanceStatus;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.api.v1alpha1.StatusCondition;
import dev.respawn.policy.Decision;
import dev.respawn.policy.InstanceState;
import dev.respawn.policy.ReasonCode;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Writes AgentInstance.status at most once per reconcile, and only when it changed: the whole status, only onto
 * the object as it was read ({@link StatusPatch}; no server-side apply), cached at once so the next reconcile
 * sees it.
 */
final class InstanceStatusWriter {
  private final AgentInstance instance;
  private final Context<AgentInstance> context;
  private final Instant now;
  private final Long generation;

  InstanceStatusWriter(AgentInstance instance, Context<AgentInstance> context, Instant now) {
    this(instance, context, now, instance.getMetadata().getGeneration());
  }

  private InstanceStatusWriter(AgentInstance instance, Context<AgentInstance> context, Instant now, Long generation) {
    this.instance = instance;
    this.context = context;
    this.now = now;
    this.generation = generation;
  }

  /**
   * This writer, but its status says it observed {@code observed}: a decision taken on an older spec and written
   * late (Commits) must not claim to have seen the newer one.
   */
  InstanceStatusWriter observing(Long observed) {
    return new InstanceStatusWriter(instance, context, now, observed);
  }

  /** Writes the decision's status when it changed; false when the instance is gone (deleted meanwhile). */
  boolean write(Decision decision) {
    return write(decision, conditions(decision));
  }

  /**
   * A decision taken while the instance is refused (it suspends it, api.md §3 step 1): its status, but Ready
   * keeps saying why the instance is refused; false when the instance is gone.
   */
  boolean write(Decision decision, Refusal reason, String message) {
    List<StatusCondition> wanted = conditions(decision);
    wanted.set(0, refusedReady(reason, message));
    return write(decision, wanted);
  }

  /** Ready already says the instance is refused so: the refusal was told when it was written. */
  boolean showsRefusal(Refusal reason, String message) {
    StatusCondition ready = Conditions.find(previous(), "Ready");
    StatusCondition refused = refusedReady(reason, message);
    return ready != null && Objects.equals(ready.status, refused.status) && Objects.equals(ready.reason,
        refused.reason) && Objects.equals(ready.message, refused.message);
  }

  private boolean write(Decision decision, List<StatusCondition> conditions) {
    AgentInstanceStatus status = StatusMapper.toStatus(decision.state());
    status.observedGeneration = generation;
    status.conditions = Conditions.merge(previous(), conditions, status.observedGeneration, now);
    return patchIfChanged(status) != Outcome.GONE;
  }

  private static StatusCondition refusedReady(Refusal reason, String message) {
    return Conditions.of("Ready", false, reason.name(), message);
  }

  /**
   * The policy (or the instance's own spec) is refused: nothing else changes, Ready says why. True only when
   * this wrote it: a refusal status already shows (an unrelated event, an operator restart) is not told again.
   */
  boolean writeRefused(Refusal reason, String message) {
    AgentInstanceStatus status = instance.getStatus() == null ? new AgentInstanceStatus()
        : Serialization.clone(instance.getStatus());
    if (status.phase == null) {
      status.phase = Phase.Pending;
    }
    status.observedGeneration = instance.getMetadata().getGeneration();
    List<StatusCondition> wanted = new ArrayList<>();
    wanted.add(refusedReady(reason, message));
    for (String type : List.of("Recovering", "Escalated")) {
      StatusCondition old = Conditions.find(previous(), type);
      wanted.add(old != null ? copy(old) : Conditions.of(type, false, type.equals("Recovering") ? "Stable" : "None",
          ""));
    }
    status.conditions = Conditions.merge(previous(), wanted, status.observedGeneration, now);
    return patchIfChanged(status) == Outcome.WRITTEN; // a deleted instance needs no refusal recorded
  }

  static List<StatusCondition> conditions(Decision d) {
    InstanceState s = d.state();
    List<StatusCondition> c = new ArrayList<>();
    c.add(Conditions.of("Ready", d.liveness().ready(), d.liveness().reason(), d.liveness().message()));
    boolean waiting = s.phase == Phase.Backoff || s.phase == Phase.CircuitOpen;
    if (s.waitingFor != null && s.phase == Phase.CircuitOpen) {
      c.add(Conditions.of("Recovering", true, "WaitingForDependency", "waiting for dependency " + s.waitingFor
          + (s.nextRestartAt != null ? "; next run at " + s.nextRestartAt : "; next run when its circuit lets it")));
    } else if (s.attempt > 0 || s.phase == Phase.CircuitOpen || (waiting && s.lastDecision != null
        && s.lastDecision.reasonCode() == ReasonCode.SPAWN_FAILED)) {
      // a wait that no failure decided (a restart request, exit 42, an Ignore rule) opens no failure sequence; a
      // refused create is retried with the backoff and shows so
      String reason = s.phase == Phase.CircuitOpen ? "CircuitOpen" : waiting ? "Backoff" : "FailureSequence";
      // no decision recorded (a status restored in part): the attempt alone
      String max = s.lastDecision == null ? "" : " of " + s.lastDecision.maxAttempts();
      c.add(Conditions.of("Recovering", true, reason, "attempt " + s.attempt + max
          + (s.nextRestartAt != null ? "; next run at " + s.nextRestartAt : "")));
    } else {
      c.add(Conditions.of("Recovering", false, "Stable", ""));
    }
    if (s.phase == Phase.Escalated || s.phase == Phase.Failed) {
      // Failed without one is backoff type None's (policy_none); an Escalated without one, a status not written here
      String reason = s.terminalReason != null ? s.terminalReason.name()
          : s.phase == Phase.Failed ? "RestartPolicyNone" : "Escalated";
      c.add(Conditions.of("Escalated", true, reason, d.liveness().message()));
    } else {
      c.add(Conditions.of("Escalated", false, "None", ""));
    }
    return c;
  }

  private List<StatusCondition> previous() {
    return instance.getStatus() == null ? List.of() : instance.getStatus().conditions;
  }

  private enum Outcome { WRITTEN, UNCHANGED, GONE }

  private Outcome patchIfChanged(AgentInstanceStatus status) {
    JsonNode wanted = comparable(status);
    JsonNode current = instance.getStatus() == null ? null : comparable(instance.getStatus());
    if (Objects.equals(wanted, current)) {
      return Outcome.UNCHANGED;
    }
    // 409 when changed since it was read (edited, annotated): thrown, the reconcile fails and the instance is decided
    // again on what it is now (a decision that made or deleted pods is owed, see Commits)
    boolean held = StatusPatch.commit(context, instance, status, onServer -> onServer.getStatus() != null
        && wanted.equals(comparable(onServer.getStatus())));
    // gone: deleted (or made anew) while it was reconciled, nothing to record, nothing to tell
    return held ? Outcome.WRITTEN : Outcome.GONE;
  }

  /**
   * The status as JSON without empty arrays: an empty list and an absent one say the same, and the
   * status read back need not keep an empty list we wrote (the mock API server drops them). Without
   * this every reconcile would write the same status again.
   */
  static JsonNode comparable(AgentInstanceStatus status) {
    JsonNode tree = Serialization.jsonMapper().valueToTree(status);
    dropEmptyArrays(tree);
    return tree;
  }

  private static void dropEmptyArrays(JsonNode node) {
    if (node instanceof ObjectNode object) {
      object.properties().removeIf(field -> field.getValue().isArray() && field.getValue().isEmpty());
      object.forEach(InstanceStatusWriter::dropEmptyArrays);
    } else if (node != null && node.isArray()) {
      node.forEach(InstanceStatusWriter::dropEmptyArrays);
    }
  }

  private static StatusCondition copy(StatusCondition c) {
    return new StatusCondition(c.type, c.status, c.reason, c.message);
  }
}

package dev.respawn.cli;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.controller.StatusMapper;

/**
 * Why the operator will refuse a restart or resume request (api.md §6), said when the plugin sends it, or null when
 * it will be acted on. A suspended instance refuses both; then only the phase decides.
 */
final class RequestWarnings {
  private RequestWarnings() {}

  static String restart(AgentInstance before, String name, String namespace) {
    if (suspended(before)) {
      return whileSuspended("restart", phase(before), name, namespace);
    }
    Phase phase = phase(before);
    return phase != null && phase.isTerminal() ? "phase " + phase + " is terminal: the operator refuses a restart; "
        + "use kubectl respawn resume " + name + " --force" : null;
  }

  static String resume(AgentInstance before, String name, String namespace) {
    if (suspended(before)) {
      return whileSuspended("resume", phase(before), name, namespace);
    }
    // the operator resumes only where the policy gave up or the agent finished (terminal phases), and takes a resume
    // before the first decision as the first run's start; a live or waiting instance is restarted with
    // respawn.dev/restart (as restart warns in a terminal phase)
    Phase phase = phase(before);
    boolean firstRunToCome = StatusMapper.toState(before.getStatus()).beforeFirstDecision();
    return phase != null && !phase.isTerminal() && !firstRunToCome ? "phase " + phase + " is not Escalated, "
        + "Failed or Succeeded: the operator refuses a resume; use kubectl respawn restart " + name + " --reason TEXT"
        : null;
  }

  private static boolean suspended(AgentInstance before) {
    return before.getSpec() != null && Boolean.TRUE.equals(before.getSpec().suspend);
  }

  private static Phase phase(AgentInstance before) {
    return before.getStatus() == null ? null : before.getStatus().phase;
  }

  /**
   * Clearing spec.suspend starts the next run of a suspended instance; an ended lifecycle (suspended after it ended)
   * stays ended, and only a resume continues it (README, "Suspending an instance whose lifecycle has ended").
   */
  private static String whileSuspended(String request, Phase phase, String name, String namespace) {
    String clear = "kubectl patch agentinstance " + name + " -n " + namespace
        + " --type merge -p '{\"spec\":{\"suspend\":false}}'";
    boolean ended = phase == Phase.Escalated || phase == Phase.Failed || phase == Phase.Succeeded;
    return "spec.suspend is true: the operator refuses a " + request + " while the instance is suspended; "
        + (ended ? "clear it (" + clear + "), then kubectl respawn resume " + name + " --force"
            : "clearing it starts the next run (" + clear + ")");
  }
}

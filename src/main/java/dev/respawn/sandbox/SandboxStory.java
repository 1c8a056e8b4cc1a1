package dev.respawn.sandbox;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentInstanceStatus;
import dev.respawn.api.v1alpha1.Phase;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Predicate;

/**
 * What each example agent does in the sandbox (its runs, played by the simulated kubelet) and
 * when its part of the story is over. Together they show failures and backoff, a permanent
 * failure, a heartbeat stall with resume from a checkpoint, exit code 42, a latched circuit that an
 * operator resumes, and a fleet that waits out an outage of the model API it shares.
 */
public final class SandboxStory {
  /** The request id the sandbox uses when it resumes the latched worker. */
  public static final String RESUME_ID = "sandbox-resume-1";

  private final Map<String, Run[]> runs = new LinkedHashMap<>();
  private final Map<String, Predicate<AgentInstanceStatus>> done = new LinkedHashMap<>();

  public SandboxStory() {
    Duration beat = Duration.ofMillis(500);
    String[] checkpoint = {"respawn.dev/checkpoint", "ckpt-17", "respawn.dev/checkpoint-status", "in_progress",
        "respawn.dev/step-idempotent", "true", "respawn.dev/artifacts-ready", "true"};
    add("coder", s -> s.run != null && s.run >= 3 && s.phase == Phase.Running && zero(s.attempt),
        Run.exit(1, "Error", "network_timeout: upstream model API").after(Duration.ofSeconds(1)),
        Run.exit(1, "Error", "network_timeout: upstream model API").after(Duration.ofSeconds(1)),
        Run.runForever());
    add("reviewer", s -> s.phase == Phase.Failed,
        Run.exit(1, "Error", "syntax_error: unexpected indent in plan.py").after(Duration.ofSeconds(1)));
    add("researcher", s -> s.run != null && s.run >= 2 && s.phase == Phase.Running && s.lastRestart != null
            && s.lastRestart.resumeCheckpoint != null,
        Run.runForever().heartbeat(beat, checkpoint), Run.runForever().heartbeat(beat, checkpoint));
    add("tdd", s -> s.run != null && s.run >= 3 && s.phase == Phase.Running && zero(s.attempt),
        Run.exit(42, "Error", "Load new GitConfig implementation").after(Duration.ofSeconds(1)),
        Run.exit(42, "Error", "Apply refactored GitManager changes").after(Duration.ofSeconds(1)),
        Run.runForever());
    add("worker", s -> s.handledRequests != null
            && RESUME_ID.equals(s.handledRequests.get(dev.respawn.api.v1alpha1.OperatorRequest.RESUME.statusKey()))
            && s.phase == Phase.Running,
        Run.exit(1, "Error", "tool call failed: HTTP 503").after(Duration.ofMillis(500)),
        Run.exit(1, "Error", "tool call failed: HTTP 503").after(Duration.ofMillis(500)),
        Run.exit(1, "Error", "tool call failed: HTTP 503").after(Duration.ofMillis(500)),
        Run.runForever());
    // a fleet meets an outage of the model API it shares: the circuit opens, a probe, the release
    for (int n = 0; n < 4; n++) {
      add("fleet-" + n, s -> s.run != null && s.run >= 2 && s.phase == Phase.Running && s.waitingFor == null
              && zero(s.attempt),
          Run.exit(1, "Error", "upstream model API answered HTTP 503").after(Duration.ofMillis(1000 + 400L * n)),
          Run.runForever());
    }
  }

  private void add(String instance, Predicate<AgentInstanceStatus> finished, Run... script) {
    runs.put(instance, script);
    done.put(instance, finished);
  }

  private static boolean zero(Integer i) {
    return i == null || i == 0;
  }

  public Map<String, Run[]> scripts() {
    return runs;
  }

  /** True when this instance's part of the story is over (unknown instances: at once). */
  public boolean finished(AgentInstance instance) {
    Predicate<AgentInstanceStatus> p = done.get(instance.getMetadata().getName());
    return p == null || (instance.getStatus() != null && p.test(instance.getStatus()));
  }

  /** The researcher hangs after its first heartbeats: the sandbox stops renewing its Lease. */
  public boolean stallsHeartbeat(AgentInstance i) {
    return "researcher".equals(i.getMetadata().getName()) && i.getStatus() != null && Integer.valueOf(1)
        .equals(i.getStatus().run) && i.getStatus().heartbeat != null
        && "Healthy".equals(String.valueOf(i.getStatus().heartbeat.verdict));
  }

  /** The latched worker is resumed by "an operator" once it escalated. */
  public boolean needsResume(AgentInstance i) {
    return "worker".equals(i.getMetadata().getName()) && i.getStatus() != null
        && i.getStatus().phase == Phase.Escalated;
  }
}

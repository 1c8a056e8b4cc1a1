package dev.respawn.cli;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.DecisionStatus;
import java.time.Instant;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code kubectl respawn status NAME}: where an agent stands and whether it will be restarted. */
@Command(name = "status", mixinStandardHelpOptions = true,
    description = "Show an agent's restart status (attempt, last failure, reason code, next restart).")
final class StatusCommand extends PluginCommand {
  @Parameters(paramLabel = "NAME", description = "The AgentInstance.")
  String name;

  @Override
  int run(Cluster cluster) {
    AgentInstance instance = cluster.instance(name);
    Instant now = cluster.now();
    String waitingFor = instance.getStatus() == null ? null : instance.getStatus().waitingFor;
    var dependency = waitingFor == null || instance.getSpec() == null || instance.getSpec().policyRef == null
        ? java.util.Optional.<dev.respawn.api.v1alpha1.DependencyStatus>empty()
        : cluster.dependency(instance.getSpec().policyRef.name, waitingFor);
    AgentStatusReport report = AgentStatusReport.of(instance, maxRetries(cluster, instance), now,
        dependency.orElse(null));
    print(report.document(), () -> report.table(now));
    return 0;
  }

  /** The last failure decision's limit (rule overrides included), else the policy's spec.maxRetries. */
  static Integer maxRetries(Cluster cluster, AgentInstance instance) {
    DecisionStatus decision = instance.getStatus() == null ? null : instance.getStatus().lastDecision;
    if (decision != null && decision.maxAttempts != null && decision.attempt != null && decision.attempt > 0) {
      return decision.maxAttempts;
    }
    if (instance.getSpec() != null && instance.getSpec().policyRef != null
        && instance.getSpec().policyRef.name != null) {
      return cluster.policyMaxRetries(instance.getSpec().policyRef.name).orElse(null);
    }
    return null;
  }
}

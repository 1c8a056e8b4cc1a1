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

  @picocli.CommandLine.Option(names = "--default-policy", paramLabel = "NAME",
      description = "The operator's --default-policy (NAME or NAMESPACE/NAME), for an instance without policyRef; "
          + "without it such an instance has the built-in defaults (maxRetries 3).")
  String defaultPolicy;

  @Override
  int run(Cluster cluster) {
    AgentInstance instance = cluster.instance(name);
    Instant now = cluster.now();
    String waitingFor = instance.getStatus() == null ? null : instance.getStatus().waitingFor;
    var dependency = waitingFor == null || instance.getSpec() == null || instance.getSpec().policyRef == null
        ? java.util.Optional.<dev.respawn.api.v1alpha1.DependencyStatus>empty()
        : cluster.dependency(instance.getSpec().policyRef.name, waitingFor);
    AgentStatusReport report = AgentStatusReport.of(instance, maxRetries(cluster, instance, defaultPolicy), now,
        dependency.orElse(null));
    print(report.document(), () -> report.table(now));
    return 0;
  }

  /**
   * The last failure decision's limit (rule overrides included), else the policy's spec.maxRetries: the one
   * policyRef names, else the operator's default policy ({@code defaultPolicy}, null: the built-in defaults).
   */
  static Integer maxRetries(Cluster cluster, AgentInstance instance, String defaultPolicy) {
    DecisionStatus decision = instance.getStatus() == null ? null : instance.getStatus().lastDecision;
    if (decision != null && decision.maxAttempts != null && decision.attempt != null && decision.attempt > 0) {
      return decision.maxAttempts;
    }
    if (instance.getSpec() != null && instance.getSpec().policyRef != null
        && instance.getSpec().policyRef.name != null) {
      return cluster.policyMaxRetries(instance.getSpec().policyRef.name).orElse(null);
    }
    if (defaultPolicy != null) {
      return cluster.policyMaxRetries(defaultPolicy).orElse(null);
    }
    return BUILT_IN_MAX_RETRIES;
  }

  /** maxRetries of the built-in defaults (api.md §1), what the operator uses without policyRef and default policy. */
  static final int BUILT_IN_MAX_RETRIES = builtInMaxRetries();

  private static int builtInMaxRetries() {
    try {
      return dev.respawn.policy.PolicyCompiler.compile(new dev.respawn.api.v1alpha1.AgentRestartPolicySpec())
          .maxRetries();
    } catch (dev.respawn.policy.PolicyInvalidException e) {
      throw new IllegalStateException("the built-in defaults are valid", e);
    }
  }
}

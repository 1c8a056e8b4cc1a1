package dev.respawn.policy;

import static dev.respawn.policy.Specs.rule;
import static dev.respawn.policy.Specs.rules;
import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.api.v1alpha1.FailureAction;
import dev.respawn.api.v1alpha1.FailureRule;
import dev.respawn.api.v1alpha1.InterruptionClass;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class FailureClassifierTest {
  static final RestartPolicy DEFAULTS = AgentSim.policy(new AgentRestartPolicySpec());
  static final RestartPolicy TEN_RETRIES = AgentSim.policy(Specs.retries(new AgentRestartPolicySpec(), 10));

  static RunEnding ending(EndingKind kind, Integer exit, String reason, String message) {
    return new RunEnding("coder-1", "uid-1", kind, exit, reason, message, Instant.EPOCH);
  }

  /** The built-in table of api.md §4, one row per case. */
  @ParameterizedTest(name = "{0} exit={1} reason={2} message={3}")
  @CsvSource(nullValues = "-", value = {
      // kind, exit, reason, message, class, failureReason, action, maxRetries (policy allows 10)
      "TERMINATED, 137, Error, -, ProcessCrash, ProcessCrash, Retry, 10",
      "TERMINATED, 139, -, -, ProcessCrash, ProcessCrash, Retry, 10",
      "TERMINATED, 137, OOMKilled, -, ProcessCrash, ResourceExhaustion, Retry, 2",
      "HEARTBEAT_CRASHED, -, -, -, ProcessCrash, ProcessCrash, Retry, 10",
      "TERMINATED, 1, DeadlineExceeded, -, Timeout, Timeout, Retry, 2",
      "HEARTBEAT_STALE, -, -, -, Timeout, HealthCheckFailed, Retry, 2",
      "HEARTBEAT_STALLED, -, -, -, Timeout, HealthCheckFailed, Retry, 2",
      "TRIAL_EXPIRED, -, -, -, Timeout, HealthCheckFailed, Retry, 10",
      "DISRUPTED, -, Evicted, -, ContextReset, ResourceExhaustion, Retry, 10",
      "DISRUPTED, 143, PreemptionByScheduler, -, ContextReset, Unknown, Retry, 10",
      "DISRUPTED, 143, EvictionByEvictionAPI, -, ContextReset, Unknown, Retry, 10",
      "DISRUPTED, -, DeletionByTaintManager, -, ContextReset, Unknown, Retry, 10",
      "DISRUPTED, -, OutOfcpu, -, ContextReset, ResourceExhaustion, Retry, 10",
      "DISRUPTED, 143, Terminated, -, ContextReset, Unknown, Retry, 10",
      "DELETED, -, -, -, ContextReset, Unknown, Retry, 10",
      "NODE_LOST, -, -, -, ContextReset, Unknown, Retry, 10",
      "TERMINATED, 1, Error, -, ToolFailure, UnhandledException, Retry, 10",
      "TERMINATED, 3, Error, network_timeout: api down, ToolFailure, DependencyFailure, Retry, 10",
      "TERMINATED, 3, Error, database_lock held, ToolFailure, DependencyFailure, Retry, 10",
      "TERMINATED, 3, Error, resource_exhaustion, ToolFailure, ResourceExhaustion, Retry, 10",
      "TERMINATED, 3, Error, temporary_error, ToolFailure, UnhandledException, Retry, 10",
      "TERMINATED, 2, Error, syntax_error in main.py, ToolFailure, UnhandledException, Fail, 10",
      "TERMINATED, 2, Error, git_conflict, ToolFailure, UnhandledException, Fail, 10",
      "TERMINATED, 2, Error, spec_not_found, ToolFailure, UnhandledException, Fail, 10",
      "TERMINATED, 2, Error, invalid_configuration: bad key, ToolFailure, UnhandledException, Fail, 10",
      "NEVER_STARTED, -, ErrImagePull, -, ToolFailure, InitializationFailed, Retry, 10",
      "NO_STATE, -, -, -, Unknown, Unknown, Retry, 10",
      "TERMINATED, -, -, -, Unknown, Unknown, Retry, 10",
  })
  void builtInTable(EndingKind kind, Integer exit, String reason, String message, InterruptionClass cls,
      String failureReason, FailureAction action, int maxRetries) {
    Classification c = FailureClassifier.classify(ending(kind, exit, reason, message), TEN_RETRIES, List.of());
    assertThat(c.interruptionClass()).isEqualTo(cls);
    assertThat(c.failureReason()).isEqualTo(failureReason);
    assertThat(c.action()).isEqualTo(action);
    assertThat(c.maxRetries()).isEqualTo(maxRetries);
    assertThat(c.rule()).isEmpty();
    // class Unknown escalates (api.md §3 c): not retryable whatever the action says
    assertThat(c.retryable()).isEqualTo(action != FailureAction.Fail && cls != InterruptionClass.Unknown);
  }

  @Test
  void builtInCapsNeverRaiseThePolicysLimit() {
    Classification c = FailureClassifier.classify(ending(EndingKind.TERMINATED, 137, "OOMKilled", null),
        AgentSim.policy(Specs.retries(new AgentRestartPolicySpec(), 1)), List.of());
    assertThat(c.maxRetries()).isEqualTo(1);
  }

  @Test
  void userRulesComeFirstAndTheFirstMatchWins() {
    FailureRule first = rule("exit-3", "Ignore");
    first.match.exitCodes = List.of(3);
    FailureRule second = rule("any", "Fail");
    RestartPolicy p = AgentSim.policy(rules(new AgentRestartPolicySpec(), first, second));
    assertThat(FailureClassifier.classify(ending(EndingKind.TERMINATED, 3, "Error", null), p, List.of()))
        .extracting(Classification::rule, Classification::action).containsExactly("exit-3", FailureAction.Ignore);
    assertThat(FailureClassifier.classify(ending(EndingKind.TERMINATED, 4, "Error", null), p, List.of()))
        .extracting(Classification::rule, Classification::action).containsExactly("any", FailureAction.Fail);
  }

  @Test
  void everyListedCriterionMustHoldAndAListMatchesIfAnyElementDoes() {
    FailureRule r = rule("config", "Fail");
    r.match.exitCodes = List.of(2, 78);
    r.match.reasons = List.of("Error");
    r.match.messageContains = List.of("invalid_configuration", "spec_not_found");
    r.match.classes = List.of("ToolFailure");
    RestartPolicy p = AgentSim.policy(rules(new AgentRestartPolicySpec(), r));
    assertThat(match(p, 78, "Error", "spec_not_found: x")).isEqualTo("config");
    assertThat(match(p, 2, "Error", "oops invalid_configuration")).isEqualTo("config");
    assertThat(match(p, 3, "Error", "spec_not_found")).isEmpty(); // exit code not listed
    assertThat(match(p, 2, "OOMKilled", "spec_not_found")).isEmpty(); // reason not listed
    assertThat(match(p, 2, "Error", "network_timeout")).isEmpty(); // message does not match
    assertThat(match(p, 2, "Error", null)).isEmpty(); // no message at all
    FailureRule crash = rule("crash", "Fail");
    crash.match.classes = List.of("ProcessCrash");
    RestartPolicy q = AgentSim.policy(rules(new AgentRestartPolicySpec(), crash));
    assertThat(match(q, 139, "Error", null)).isEqualTo("crash");
    assertThat(match(q, 1, "Error", null)).isEmpty();
  }

  @Test
  void aRulesMaxRetriesReplacesBothPolicyAndBuiltInCapAndItsCooldownIsKept() {
    FailureRule r = rule("oom", "Retry");
    r.match.reasons = List.of("OOMKilled");
    r.maxRetries = 7;
    r.cooldown = "45s";
    RestartPolicy p = AgentSim.policy(rules(Specs.retries(new AgentRestartPolicySpec(), 3), r));
    Classification c = FailureClassifier.classify(ending(EndingKind.TERMINATED, 137, "OOMKilled", null), p,
        List.of());
    assertThat(c.maxRetries()).isEqualTo(7);
    assertThat(c.cooldown()).contains(Duration.ofSeconds(45));
    FailureRule noLimit = rule("oom", "Retry");
    noLimit.match.reasons = List.of("OOMKilled");
    RestartPolicy q = AgentSim.policy(rules(Specs.retries(new AgentRestartPolicySpec(), 5), noLimit));
    assertThat(FailureClassifier.classify(ending(EndingKind.TERMINATED, 137, "OOMKilled", null), q, List.of())
        .maxRetries()).isEqualTo(2);
  }

  @Test
  void aRuleCanRetryWhatTheMessageTableWouldFail() {
    FailureRule r = rule("retry-syntax", "Retry");
    r.match.messageContains = List.of("syntax_error");
    RestartPolicy p = AgentSim.policy(rules(new AgentRestartPolicySpec(), r));
    assertThat(FailureClassifier.classify(ending(EndingKind.TERMINATED, 1, "Error", "syntax_error"), p, List.of())
        .action()).isEqualTo(FailureAction.Retry);
  }

  private static String match(RestartPolicy p, int exit, String reason, String message) {
    return FailureClassifier.classify(ending(EndingKind.TERMINATED, exit, reason, message), p, List.of()).rule();
  }

  /** §4: "exit code >= 128 (killed by a signal)" is a ProcessCrash from 128 on; 127 is still a ToolFailure. */
  @Test
  void exitCode128IsTheFirstSignalExitAndAProcessCrash() {
    assertThat(FailureClassifier.classify(ending(EndingKind.TERMINATED, 128, "Error", null), TEN_RETRIES, List.of())
        .interruptionClass()).isEqualTo(InterruptionClass.ProcessCrash);
    assertThat(FailureClassifier.classify(ending(EndingKind.TERMINATED, 127, "Error", null), TEN_RETRIES, List.of())
        .interruptionClass()).isEqualTo(InterruptionClass.ToolFailure);
  }
}

package dev.respawn.policy;

import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.api.v1alpha1.BackoffSpec;
import dev.respawn.api.v1alpha1.CircuitBreakerSpec;
import dev.respawn.api.v1alpha1.FailureMatch;
import dev.respawn.api.v1alpha1.FailureRule;
import dev.respawn.api.v1alpha1.PolicyHeartbeatSpec;
import dev.respawn.api.v1alpha1.RestartLimitSpec;
import dev.respawn.api.v1alpha1.ResumeSpec;
import java.util.ArrayList;
import java.util.List;

/** Small builders for policy specs in tests. */
final class Specs {
  private Specs() {}

  static AgentRestartPolicySpec spec() {
    return new AgentRestartPolicySpec();
  }

  static AgentRestartPolicySpec backoff(String type, String initial, double multiplier, String max) {
    AgentRestartPolicySpec s = new AgentRestartPolicySpec();
    s.backoff = new BackoffSpec();
    s.backoff.type = type;
    s.backoff.initialDelay = initial;
    s.backoff.multiplier = multiplier;
    s.backoff.maxDelay = max;
    return s;
  }

  static AgentRestartPolicySpec retries(AgentRestartPolicySpec s, int maxRetries) {
    s.maxRetries = maxRetries;
    return s;
  }

  static AgentRestartPolicySpec circuit(AgentRestartPolicySpec s, int threshold, String window, String open,
      boolean latch) {
    s.circuitBreaker = new CircuitBreakerSpec();
    s.circuitBreaker.failureThreshold = threshold;
    s.circuitBreaker.window = window;
    s.circuitBreaker.openDuration = open;
    s.circuitBreaker.latch = latch;
    return s;
  }

  static AgentRestartPolicySpec window(AgentRestartPolicySpec s, int max, String window) {
    s.restartLimit = new RestartLimitSpec();
    s.restartLimit.maxRestarts = max;
    s.restartLimit.window = window;
    return s;
  }

  static AgentRestartPolicySpec heartbeat(AgentRestartPolicySpec s, String timeout, String grace) {
    s.heartbeat = new PolicyHeartbeatSpec();
    s.heartbeat.timeout = timeout;
    s.heartbeat.startupGrace = grace;
    return s;
  }

  static AgentRestartPolicySpec resume(AgentRestartPolicySpec s, String mode, int maxAttempts) {
    s.resume = new ResumeSpec();
    s.resume.mode = mode;
    s.resume.maxAttempts = maxAttempts;
    return s;
  }

  static FailureRule rule(String name, String action) {
    FailureRule r = new FailureRule();
    r.name = name;
    r.action = action;
    r.match = new FailureMatch();
    return r;
  }

  static AgentRestartPolicySpec rules(AgentRestartPolicySpec s, FailureRule... rules) {
    s.failureRules = new ArrayList<>(List.of(rules));
    return s;
  }
}

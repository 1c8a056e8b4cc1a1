package dev.respawn.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.respawn.testsupport.ManualClock;
import dev.respawn.testsupport.MockApi;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class StatusCommandTest {
  @RegisterExtension
  static final MockApi API = new MockApi();
  static final String NS = "status";
  static final ManualClock CLOCK = ManualClock.at("2026-11-21T10:34:39Z");
  static final List<String> SEED_FIELDS = List.of("agent_id", "task_id", "retry_count", "max_retries", "can_retry",
      "last_failure", "reason", "restarting_in_seconds", "message");

  @BeforeAll
  static void instances() {
    Instances.create(API.client(), NS, "coder", null, """
        phase: Backoff
        run: 3
        currentPod: coder-3
        attempt: 2
        restarts: 2
        nextRestartAt: "2026-11-21T10:35:04Z"
        lastFailure: {pod: coder-3, class: ToolFailure, failureReason: DependencyFailure, reason: Error, exitCode: 1,
                      message: "network_timeout: upstream", retryable: true, at: "2026-11-21T10:34:34Z"}
        lastDecision: {action: Restart, reasonCode: resume_blocked_cooldown, attempt: 2, maxAttempts: 3,
                       finalAttempt: false, delaySeconds: 30.0, at: "2026-11-21T10:34:34Z"}
        circuitBreaker: {state: Closed, failureCount: 2, trips: 0}
        resume: {checkpoint: ckpt-17, checkpointStatus: in_progress, idempotent: true, eligible: true,
                 reasonCode: resume_blocked_cooldown, cooldownRemainingSeconds: 30, attempts: 0}
        """);
    Instances.create(API.client(), NS, "stuck", null, """
        phase: Escalated
        run: 4
        currentPod: stuck-4
        attempt: 4
        restarts: 3
        terminalReason: RestartLimitExceeded
        lastFailure: {pod: stuck-4, class: ToolFailure, exitCode: 1, at: "2026-11-21T10:30:00Z"}
        lastDecision: {action: Escalate, reasonCode: retries_exhausted, attempt: 4, maxAttempts: 3,
                       at: "2026-11-21T10:30:00Z"}
        conditions:
        - {type: Escalated, status: "True", reason: RetriesExhausted,
           message: "Escalated after 4 failures; inspect: kubectl logs stuck-4; continue: kubectl respawn resume stuck --force"}
        """);
    Instances.create(API.client(), NS, "orphan", "gone", """
        phase: Backoff
        run: 2
        attempt: 1
        nextRestartAt: "2026-11-21T10:35:04Z"
        lastDecision: {action: Restart, reasonCode: restart_scheduled, attempt: 1, maxAttempts: 3,
                       at: "2026-11-21T10:34:34Z"}
        conditions:
        - {type: Ready, status: "False", reason: PolicyNotFound,
           message: "AgentRestartPolicy gone not found in namespace status; nothing is restarted until it exists"}
        """);
    Instances.policy(API.client(), NS, "patient", "maxRetries: 5");
    Instances.create(API.client(), NS, "fresh", "patient", """
        phase: Running
        run: 1
        currentPod: fresh-1
        attempt: 0
        restarts: 0
        """);
  }

  static Cli.Result status(String... args) {
    String[] all = new String[args.length + 3];
    all[0] = "status";
    System.arraycopy(args, 0, all, 1, args.length);
    all[args.length + 1] = "-n";
    all[args.length + 2] = NS;
    return Cli.run(PluginEnvironment.using(API.client(), CLOCK), all);
  }

  @Test
  void anInstanceWaitingForASharedDependencySaysWhatForAndWhatTheCircuitDoes() {
    var fleet = Instances.policy(API.client(), NS, "fleet", "dependencies: [{name: model-api, match: {}}]");
    var st = new dev.respawn.api.v1alpha1.AgentRestartPolicyStatus();
    var d = new dev.respawn.api.v1alpha1.DependencyStatus();
    d.name = "model-api";
    d.state = dev.respawn.api.v1alpha1.CircuitState.Open;
    d.halfOpenAt = "2026-11-21T10:35:09Z";
    st.dependencies = List.of(d);
    fleet.setStatus(st);
    API.client().resource(fleet).updateStatus();
    Instances.create(API.client(), NS, "waiter", "fleet", """
        phase: CircuitOpen
        run: 1
        currentPod: waiter-1
        attempt: 0
        waitingFor: model-api
        nextRestartAt: "2026-11-21T10:35:09Z"
        lastDecision: {action: Wait, reasonCode: dependency_circuit_open, attempt: 0, maxAttempts: 3,
                       at: "2026-11-21T10:34:39Z"}
        """);

    Cli.Result r = status("waiter", "-o", "json");

    assertThat(r.exit()).as(r.toString()).isZero();
    assertThat(r.json().get("reason").asText()).isEqualTo("dependency_circuit_open");
    assertThat(r.json().get("restarting_in_seconds").asLong()).isEqualTo(30);
    assertThat(r.json().get("message").asText()).startsWith("Waiting for model-api (Open, probe at "
        + "2026-11-21T10:35:09Z); next run in 30s").contains("not counted as a failure");
  }

  @Test
  void aDependencyWaiterWithoutNextRestartAtHasNoRestartTime() {
    // waits for a HalfOpen dependency, not its probe: it runs when the circuit lets it, at no known time; its
    // resume status (not in a cool-down) shows 0 seconds, which is no restart time
    Instances.create(API.client(), NS, "latecomer", null, """
        phase: CircuitOpen
        run: 1
        currentPod: latecomer-1
        attempt: 0
        waitingFor: model-api
        lastDecision: {action: Wait, reasonCode: dependency_circuit_open, attempt: 0, maxAttempts: 3,
                       at: "2026-11-21T10:34:00Z"}
        resume: {eligible: false, reasonCode: resume_missing_checkpoint, cooldownRemainingSeconds: 0, attempts: 0}
        """);

    Cli.Result r = status("latecomer", "-o", "json");

    assertThat(r.exit()).as(r.toString()).isZero();
    assertThat(r.json().get("restarting_in_seconds").isNull()).as(r.out()).isTrue();
    assertThat(r.json().get("message").asText()).contains("it runs when the circuit lets it");
  }

  @Test
  void aResumeCooldownIsReportedWithTheSecondsLeftUntilNextRestartAt() {
    Cli.Result r = status("coder", "-o", "json");

    assertThat(r.exit()).as(r.toString()).isZero();
    JsonNode j = r.json();
    SEED_FIELDS.forEach(f -> assertThat(j.has(f)).as(f).isTrue());
    assertThat(j.get("agent_id").asText()).isEqualTo("coder");
    assertThat(j.get("task_id").asText()).isEqualTo("TASK-31-1");
    assertThat(j.get("retry_count").asInt()).isEqualTo(2);
    assertThat(j.get("max_retries").asInt()).isEqualTo(3);
    assertThat(j.get("can_retry").asBoolean()).isTrue();
    assertThat(j.get("last_failure").asText()).isEqualTo("2026-11-21T10:34:34Z");
    assertThat(j.get("reason").asText()).isEqualTo("resume_blocked_cooldown");
    assertThat(j.get("restarting_in_seconds").asLong()).isEqualTo(25);
    assertThat(j.get("message").asText()).contains("25s", "cool-down", "ckpt-17");
    assertThat(j.get("phase").asText()).isEqualTo("Backoff");
    assertThat(j.get("circuit").asText()).isEqualTo("Closed");
    assertThat(j.get("next_restart_at").asText()).isEqualTo("2026-11-21T10:35:04Z");
    assertThat(j.get("success").asBoolean()).isTrue();
    assertThat(r.err()).isEmpty();
  }

  @Test
  void theRemainingSecondsFollowTheClock() {
    ManualClock later = ManualClock.at("2026-11-21T10:34:59.500Z");
    Cli.Result r = Cli.run(PluginEnvironment.using(API.client(), later), "status", "coder", "-n", NS, "-o", "json");

    assertThat(r.json().get("restarting_in_seconds").asLong()).isEqualTo(5);
  }

  @Test
  void anInstanceTheOperatorRefusesCannotBeRetriedAndSaysWhy() {
    Cli.Result r = status("orphan", "-o", "json");

    assertThat(r.exit()).as(r.toString()).isZero();
    JsonNode j = r.json();
    assertThat(j.get("can_retry").asBoolean()).isFalse();
    assertThat(j.get("reason").asText()).isEqualTo("policy_not_found");
    assertThat(j.get("restarting_in_seconds").isNull()).as("no restart comes while it is refused").isTrue();
    assertThat(j.get("message").asText()).isEqualTo("AgentRestartPolicy gone not found in namespace status; nothing "
        + "is restarted until it exists");
  }

  @Test
  void escalatedCannotBeRetriedAndSaysHowToContinue() {
    Cli.Result r = status("stuck", "-o", "json");

    assertThat(r.exit()).as(r.toString()).isZero();
    JsonNode j = r.json();
    assertThat(j.get("can_retry").asBoolean()).isFalse();
    assertThat(j.get("reason").asText()).isEqualTo("retries_exhausted");
    assertThat(j.get("retry_count").asInt()).isEqualTo(4);
    assertThat(j.get("max_retries").asInt()).isEqualTo(3);
    assertThat(j.get("restarting_in_seconds").isNull()).isTrue();
    assertThat(j.get("terminal_reason").asText()).isEqualTo("RestartLimitExceeded");
    assertThat(j.get("message").asText()).contains("kubectl logs stuck-4", "kubectl respawn resume stuck --force");
  }

  @Test
  void maxRetriesComesFromThePolicyWhenNoFailureWasDecidedYet() {
    JsonNode j = status("fresh", "-o", "json").json();

    assertThat(j.get("max_retries").asInt()).isEqualTo(5);
    assertThat(j.get("retry_count").asInt()).isZero();
    assertThat(j.get("can_retry").asBoolean()).isTrue();
    assertThat(j.get("last_failure").isNull()).isTrue();
    assertThat(j.get("message").asText()).isEqualTo("Agent running (pod fresh-1)");
  }

  /** No policyRef: the operator's default policy, the built-in defaults unless --default-policy names one. */
  @Test
  void maxRetriesOfAnInstanceWithoutPolicyRefIsTheDefaultPolicys() {
    Instances.create(API.client(), NS, "unreferenced", null, """
        phase: Running
        run: 1
        currentPod: unreferenced-1
        """);

    assertThat(status("unreferenced", "-o", "json").json().get("max_retries").asInt()).isEqualTo(3);
    assertThat(status("unreferenced", "--default-policy", "patient", "-o", "json").json().get("max_retries").asInt())
        .isEqualTo(5);
    assertThat(status("unreferenced", "--default-policy", NS + "/patient", "-o", "json").json().get("max_retries")
        .asInt()).isEqualTo(5);
  }

  @Test
  void yamlHasTheSameFieldNames() {
    Cli.Result r = status("coder", "-o", "yaml");

    assertThat(r.exit()).as(r.toString()).isZero();
    JsonNode y = r.yaml();
    SEED_FIELDS.forEach(f -> assertThat(y.has(f)).as(f).isTrue());
    assertThat(y.get("reason").asText()).isEqualTo("resume_blocked_cooldown");
    assertThat(y.get("restarting_in_seconds").asLong()).isEqualTo(25);
    assertThat(r.out()).doesNotStartWith("---");
  }

  @Test
  void theTableShowsAttemptLastFailureReasonAndNextRestart() {
    Cli.Result r = status("coder");

    assertThat(r.exit()).as(r.toString()).isZero();
    List<String> lines = r.out().lines().toList();
    assertThat(lines.get(0)).startsWith("NAME").contains("PHASE", "ATTEMPT", "LAST-FAILURE", "REASON", "NEXT-RESTART");
    assertThat(lines.get(1)).startsWith("coder").contains("Backoff", "2/3", "ToolFailure exit 1 (5s ago)",
        "resume_blocked_cooldown", "in 25s");
    assertThat(r.out()).contains("resume cool-down");
    // between runs the table's class and exit code alone do not say what went wrong: the message follows (on-call)
    assertThat(lines).contains("Last failure: pod coder-3: \"network_timeout: upstream\"");
  }

  /** A refused request shows with why, in the table and the document, while status keeps it (on-call tester). */
  @Test
  void aRefusedRequestIsShownWithWhy() {
    Instances.create(API.client(), NS, "asked", null, """
        phase: Running
        run: 1
        currentPod: asked-1
        handledRequests: {resume: too-early}
        refusedRequests: {resume: {id: too-early, message: "phase Running is not Escalated, Failed or Succeeded"}}
        """);

    Cli.Result table = status("asked");
    Cli.Result json = status("asked", "-o", "json");

    assertThat(table.out().lines()).contains(
        "Refused resume request too-early: phase Running is not Escalated, Failed or Succeeded");
    assertThat(json.json().path("refused_requests").path("resume").path("request_id").asText()).isEqualTo("too-early");
    assertThat(status("coder", "-o", "json").json().has("refused_requests")).as("none refused: no field").isFalse();
  }

  @Test
  void aMissingInstanceIsOneClearLineAndExit1() {
    Cli.Result r = Cli.run(PluginEnvironment.using(API.client(), CLOCK), "status", "nope", "-n", "elsewhere");

    assertThat(r.exit()).isEqualTo(1);
    assertThat(r.err()).isEqualTo("error: agentinstance \"nope\" not found in namespace \"elsewhere\""
        + System.lineSeparator());
    assertThat(r.out()).isEmpty();
  }

  @Test
  void theNamespaceDefaultsToTheClients() {
    Instances.create(API.client(), MockApi.NAMESPACE, "home", null, "phase: Pending");

    Cli.Result r = Cli.run(PluginEnvironment.using(API.client(), CLOCK), "status", "home", "-o", "json");

    assertThat(r.exit()).as(r.toString()).isZero();
    assertThat(r.json().get("namespace").asText()).isEqualTo(MockApi.NAMESPACE);
  }

  @Test
  void anUnknownOutputFormatIsAUsageError() {
    Cli.Result r = status("coder", "-o", "xml");

    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains("-o", "table, json, yaml");
  }

  /** A failure rule's maxRetries overrides the policy's: the last failure decision's limit is the one that holds. */
  @Test
  void maxRetriesIsTheLastFailureDecisionsLimitOnceAFailureWasDecided() {
    Instances.create(API.client(), NS, "ruled", "patient", """
        phase: Backoff
        run: 2
        attempt: 2
        lastDecision: {action: Restart, reasonCode: restart_scheduled, attempt: 2, maxAttempts: 8,
                       at: "2026-11-21T10:34:34Z"}
        """);
    Instances.create(API.client(), NS, "resumed", "patient", """
        phase: Running
        run: 3
        currentPod: resumed-3
        attempt: 0
        lastDecision: {action: Resume, reasonCode: resume_allowed, attempt: 0, maxAttempts: 8,
                       at: "2026-11-21T10:34:34Z"}
        """);

    assertThat(status("ruled", "-o", "json").json().get("max_retries").asInt()).isEqualTo(8);
    assertThat(status("resumed", "-o", "json").json().get("max_retries").asInt()).as("a new lifecycle: the policy's")
        .isEqualTo(5);
  }
}

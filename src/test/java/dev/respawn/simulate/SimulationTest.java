package dev.respawn.simulate;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.respawn.policy.Tier;
import dev.respawn.simulate.SimulationReport.Row;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The simulator over the real decision core: the numbers api.md promises come out of it. */
class SimulationTest {

  static PolicyFile.Loaded policy(String spec) throws Exception {
    String indented = spec.isBlank() ? " {}" : "\n" + spec.strip().indent(2);
    return PolicyFile.read("apiVersion: respawn.dev/v1alpha1\nkind: AgentRestartPolicy\nmetadata: {name: p}\n"
        + "spec:" + indented, "test", null);
  }

  static PolicyFile.Loaded example(String file) throws Exception {
    Path p = Path.of("examples", file);
    return PolicyFile.read(Files.readString(p), p.toString(), null);
  }

  static SimulationReport simulate(PolicyFile.Loaded policy, String story, Long seed) throws Exception {
    return Simulation.simulate(policy, StoryParser.parse(story), Tier.Enterprise, seed);
  }

  static SimulationReport simulate(String spec, String story) throws Exception {
    return simulate(policy(spec), story, null);
  }

  static List<Row> reached(SimulationReport r) {
    return r.runs().stream().filter(Row::reached).toList();
  }

  @Test
  void seedNumbersOneSecondDoubling() throws Exception {
    // a threshold above 5: with the default (5) the fifth failure would open the circuit instead
    SimulationReport r = simulate("""
        backoff: {initialDelay: 1s, multiplier: 2.0}
        maxRetries: 5
        circuitBreaker: {failureThreshold: 10}
        """, "exit:1,exit:1,exit:1,exit:1,exit:1,exit:1");

    List<Row> rows = r.runs();
    assertThat(rows.subList(0, 5)).extracting(Row::delaySeconds).containsExactly(1.0, 2.0, 4.0, 8.0, 16.0);
    assertThat(rows.subList(0, 5)).extracting(Row::delay).containsExactly("1s", "2s", "4s", "8s", "16s");
    assertThat(rows.subList(0, 5)).extracting(Row::nextStartAt).containsExactly("+1s", "+3s", "+7s", "+15s", "+31s");
    assertThat(rows.subList(0, 5)).extracting(Row::reasonCode).containsOnly("restart_scheduled");
    assertThat(rows.subList(0, 5)).extracting(Row::attempt).containsExactly(1, 2, 3, 4, 5);
    assertThat(rows.get(5).reasonCode()).isEqualTo("retries_exhausted");
    assertThat(rows.get(5).phase()).isEqualTo("Escalated");
    assertThat(rows.get(5).terminalReason()).isEqualTo("RestartLimitExceeded");
    assertThat(r.summary().outcome()).isEqualTo("Escalated");
    assertThat(r.summary().at()).isEqualTo("+31s");
    assertThat(r.summary().restarts()).isEqualTo(5);
  }

  @Test
  void seedNumbersTwoSecondsCappedAtTwoMinutes() throws Exception {
    SimulationReport r = simulate("""
        backoff: {initialDelay: 2s, multiplier: 2.0, maxDelay: 120s}
        maxRetries: 8
        circuitBreaker: {failureThreshold: 10}
        """, "exit:1,exit:1,exit:1,exit:1,exit:1,exit:1,exit:1,exit:1");

    assertThat(r.runs()).extracting(Row::delaySeconds).containsExactly(2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 120.0, 120.0);
    assertThat(r.runs().get(7).delay()).isEqualTo("2m0s");
    assertThat(r.summary().outcome()).isEqualTo("Running");
    assertThat(r.summary().at()).as("2+4+8+16+32+64+120+120 s").isEqualTo("+6m6s");
  }

  @Test
  void defaultsGiveTheSeedNumbersUntilRetriesRunOut() throws Exception {
    SimulationReport r = simulate("", "exit:1,exit:1,exit:1,exit:1,exit:1");

    assertThat(reached(r)).extracting(Row::delay).containsExactly("2s", "4s", "8s", null);
    assertThat(reached(r)).extracting(Row::maxAttempts).containsOnly(3);
    assertThat(r.runs().get(3).reasonCode()).isEqualTo("retries_exhausted");
    assertThat(r.runs().get(4).reached()).isFalse();
    assertThat(r.summary().notReached()).containsExactly("exit:1");
  }

  @Test
  void circuitOpensAtTheThresholdTriesHalfOpenAndClosesAfterResetAfter() throws Exception {
    PolicyFile.Loaded circuit = PolicyFile.read(Files.readString(Path.of("src/test/resources/simulate/policies/"
        + "circuit.yaml")), "circuit.yaml", null);
    SimulationReport r = simulate(circuit, "exit:1,exit:1,exit:1,ok", null);

    List<Row> rows = r.runs();
    assertThat(rows).extracting(Row::circuit).containsExactly("Closed", "Closed", "Open", "Closed");
    Row opened = rows.get(2);
    assertThat(opened.decision()).isEqualTo("Wait");
    assertThat(opened.reasonCode()).isEqualTo("circuit_open");
    assertThat(opened.phase()).isEqualTo("CircuitOpen");
    assertThat(opened.at()).isEqualTo("+3s");
    assertThat(opened.delay()).isEqualTo("5m0s");
    assertThat(opened.nextStartAt()).isEqualTo("+5m3s");
    assertThat(opened.notes()).contains("circuit Closed -> Open");
    Row trial = rows.get(3);
    assertThat(trial.run()).isEqualTo(4);
    assertThat(trial.startedAt()).isEqualTo("+5m3s");
    assertThat(trial.notes()).containsExactly("trial run: circuit Open -> HalfOpen",
        "healthy for 1m0s: failure sequence ends", "circuit HalfOpen -> Closed");
    assertThat(trial.attempt()).isZero();
    // one Event per decision, as the operator writes it: the trial's start, then the close, whose weightiest
    // notice is the circuit's change, RestartSucceeded in its note
    assertThat(trial.events()).extracting(SimulationReport.Event::reason).containsExactly(
        "CircuitBreakerStateChanged", "CircuitBreakerStateChanged");
    assertThat(trial.events().get(1).message()).contains("HalfOpen -> Closed", "RestartSucceeded: ");
    assertThat(r.summary().outcome()).isEqualTo("Healthy");
    assertThat(r.summary().at()).isEqualTo("+6m3s");
    assertThat(r.summary().circuitTrips()).isEqualTo(1);
  }

  @Test
  void aFailedTrialReopensTheCircuit() throws Exception {
    PolicyFile.Loaded circuit = PolicyFile.read(Files.readString(Path.of("src/test/resources/simulate/policies/"
        + "circuit.yaml")), "circuit.yaml", null);
    SimulationReport r = simulate(circuit, "exit:1,exit:1,exit:1,exit:1@10s,ok", null);

    Row failedTrial = r.runs().get(3);
    assertThat(failedTrial.notes()).containsExactly("trial run: circuit Open -> HalfOpen",
        "circuit HalfOpen -> Open");
    assertThat(failedTrial.at()).isEqualTo("+5m13s");
    assertThat(failedTrial.nextStartAt()).as("openedAt + openDuration").isEqualTo("+10m13s");
    assertThat(r.summary().circuitTrips()).isEqualTo(2);
    assertThat(r.summary().circuit()).isEqualTo("Closed");
  }

  @Test
  void resumeCooldownsDelayTheRestart() throws Exception {
    Story story = StoryYaml.parse(Files.readString(Path.of("src/test/resources/simulate/stories/resume.yaml")),
        "resume.yaml");
    SimulationReport r = Simulation.simulate(example("03-heartbeat-resume.yaml"), story, Tier.Enterprise, null);

    List<Row> rows = r.runs();
    // Linear 5s: the ToolFailure cool-down (30s) is the longer, and it delays the resume
    assertThat(rows.get(0).reasonCode()).isEqualTo("resume_blocked_cooldown");
    assertThat(rows.get(0).delay()).isEqualTo("30s");
    assertThat(rows.get(0).resumeCheckpoint()).isEqualTo("ckpt-3");
    assertThat(rows.get(1).at()).as("started at +30s, ran 45s").isEqualTo("+1m15s");
    assertThat(rows.get(1).reasonCode()).isEqualTo("resume_blocked_cooldown");
    assertThat(rows.get(1).delay()).as("backoff 10s < cool-down 30s").isEqualTo("30s");
    // not idempotent: a fresh restart on the plain backoff (15s)
    assertThat(rows.get(2).reasonCode()).isEqualTo("restart_scheduled");
    assertThat(rows.get(2).delay()).isEqualTo("15s");
    assertThat(rows.get(2).resumeCheckpoint()).isNull();
    assertThat(rows.get(2).notes()).contains("no resume: resume_non_idempotent_step");
    // evicted: ContextReset cool-down 10s < backoff 20s, resumes without being blocked
    assertThat(rows.get(3).interruptionClass()).isEqualTo("ContextReset");
    assertThat(rows.get(3).reasonCode()).isEqualTo("restart_scheduled");
    assertThat(rows.get(3).delay()).isEqualTo("20s");
    assertThat(rows.get(3).resumeCheckpoint()).isEqualTo("ckpt-5");
    assertThat(r.summary().outcome()).isEqualTo("Healthy");
  }

  @Test
  void requireWithoutACheckpointEscalates() throws Exception {
    SimulationReport r = simulate("resume: {mode: Require}", "exit:1,exit:1");

    assertThat(r.runs().get(0).reasonCode()).isEqualTo("resume_missing_checkpoint");
    assertThat(r.runs().get(0).phase()).isEqualTo("Escalated");
  }

  @Test
  void exit42IsNotCountedButRestartsAtOnce() throws Exception {
    SimulationReport r = simulate("", "exit:1,exit:42,exit:1,exit:42:reload,exit:1");

    List<Row> rows = r.runs();
    assertThat(rows).extracting(Row::reasonCode).containsExactly("restart_scheduled", "restart_requested",
        "restart_scheduled", "restart_requested", "restart_scheduled");
    assertThat(rows).extracting(Row::attempt).containsExactly(1, 1, 2, 2, 3);
    assertThat(rows).extracting(Row::delay).containsExactly("2s", "0s", "4s", "0s", "8s");
    assertThat(rows.get(1).interruptionClass()).isNull();
    assertThat(rows.get(1).notes()).contains("restart requested by the agent: not a failure");
    assertThat(r.summary().restarts()).isEqualTo(5);
  }

  @Test
  void exit42CountsInTheRestartWindow() throws Exception {
    SimulationReport r = simulate("restartLimit: {maxRestarts: 2, window: 1h}", "exit:42,exit:42,exit:42,exit:1");

    assertThat(r.runs()).extracting(Row::reasonCode).containsExactly("restart_requested", "restart_requested",
        "restart_limit_exceeded", null);
    assertThat(r.summary().terminalReason()).isEqualTo("RestartLimitExceeded");
  }

  @Test
  void anIgnoreRuleRestartsAtOnceWithoutCounting() throws Exception {
    SimulationReport r = simulate("""
        failureRules:
        - {name: flaky-tool, match: {exitCodes: [3]}, action: Ignore}
        """, "exit:1,exit:3,exit:1");

    Row ignored = r.runs().get(1);
    assertThat(ignored.reasonCode()).isEqualTo("failure_ignored");
    assertThat(ignored.rule()).isEqualTo("flaky-tool");
    assertThat(ignored.attempt()).isEqualTo(1);
    assertThat(ignored.maxAttempts()).isNull();
    assertThat(ignored.delay()).isEqualTo("0s");
    assertThat(r.runs().get(2).attempt()).isEqualTo(2);
  }

  @Test
  void theSameSeedGivesTheSameJitterAnotherSeedAnotherOne() throws Exception {
    PolicyFile.Loaded jittery = policy("backoff: {initialDelay: 10s, jitter: 0.25, maxDelay: 10s}\nmaxRetries: 3");
    String story = "exit:1,exit:1,exit:1";

    SimulationReport a = simulate(jittery, story, 7L);
    assertThat(simulate(jittery, story, 7L).toTable()).isEqualTo(a.toTable());
    assertThat(simulate(jittery, story, 8L).toTable()).isNotEqualTo(a.toTable());
    assertThat(a.seed()).isEqualTo(7L);
    Set<Double> delays = new HashSet<>();
    for (long seed = 0; seed < 200; seed++) {
      for (Row row : simulate(jittery, story, seed).runs()) {
        assertThat(row.delaySeconds()).isBetween(7.5, 12.5);
        delays.add(row.delaySeconds());
      }
    }
    assertThat(delays).hasSizeGreaterThan(100);
  }

  @Test
  void withoutJitterEverySeedGivesTheSameOutput() throws Exception {
    PolicyFile.Loaded plain = policy("maxRetries: 5");
    String story = "exit:1,oom,ok,evicted,deadline@2m";

    SimulationReport unseeded = simulate(plain, story, null);
    assertThat(unseeded.seed()).isNull();
    assertThat(simulate(plain, story, null).toJson()).isEqualTo(unseeded.toJson());
    assertThat(simulate(plain, story, 99L).runs()).isEqualTo(unseeded.runs());
  }

  @Test
  void aStallIsSeenOnlyWithAHeartbeatTimeout() throws Exception {
    SimulationReport blind = simulate("", "exit:1,heartbeat-stall@10m,exit:1");

    Row stall = blind.runs().get(1);
    assertThat(stall.decision()).isNull();
    assertThat(stall.phase()).isEqualTo("Running");
    assertThat(stall.notes()).anySatisfy(n -> assertThat(n).contains("healthy for 1m0s"))
        .anySatisfy(n -> assertThat(n).contains("without spec.heartbeat.timeout"));
    assertThat(blind.runs().get(2).reached()).isFalse();
    assertThat(blind.summary().outcome()).isEqualTo("Stuck");
    assertThat(blind.summary().at()).as("the stall began 10m into run 2 (started +2s)").isEqualTo("+10m2s");

    SimulationReport seen = simulate("heartbeat: {timeout: 30s, startupGrace: 10s}", "heartbeat-stall@5m");
    Row stale = seen.runs().get(0);
    assertThat(stale.interruptionClass()).isEqualTo("Timeout");
    assertThat(stale.failureReason()).isEqualTo("HealthCheckFailed");
    assertThat(stale.at()).as("last renewal at +5m, stale once 30s have passed").isEqualTo("+5m30.001s");
    assertThat(stale.reasonCode()).isEqualTo("restart_scheduled");
  }

  @Test
  void stalledAndCrashedVerdictsEndTheRun() throws Exception {
    SimulationReport r = simulate("heartbeat: {timeout: 1m}", "stalled@3m,crashed");

    assertThat(r.runs()).extracting(Row::interruptionClass).containsExactly("Timeout", "ProcessCrash");
    assertThat(r.runs()).extracting(Row::at).containsExactly("+3m0s", "+3m2s");
  }

  @Test
  void aPodThatNeverStartsFailsAfterTheStartupGrace() throws Exception {
    SimulationReport r = simulate("heartbeat: {timeout: 1m, startupGrace: 3m}", "never-started");

    assertThat(r.runs().get(0).failureReason()).isEqualTo("InitializationFailed");
    assertThat(r.runs().get(0).at()).isEqualTo("+3m0s");
    assertThat(simulate("", "never-started,exit:1").summary().outcome()).isEqualTo("Stuck");
  }

  @Test
  void terminalPhasesEndTheStory() throws Exception {
    assertThat(simulate("", "exit:0,exit:1").summary()).satisfies(s -> {
      assertThat(s.outcome()).isEqualTo("Succeeded");
      assertThat(s.terminalReason()).isEqualTo("CleanExit");
      assertThat(s.notReached()).containsExactly("exit:1");
    });
    assertThat(simulate("", "exit:1:syntax_error in main.py").runs().get(0)).satisfies(row -> {
      assertThat(row.reasonCode()).isEqualTo("non_retryable_failure");
      assertThat(row.phase()).isEqualTo("Failed");
    });
    assertThat(simulate("", "no-state").runs().get(0).reasonCode()).isEqualTo("resume_unknown_interruption_class");
  }

  @Test
  void theTiersSoftGateServesAWeakerType() throws Exception {
    SimulationReport r = Simulation.simulate(policy(""), StoryParser.parse("exit:1"), Tier.Core, null);

    assertThat(r.policy().tierRestriction()).isEqualTo("spec.backoff.type: Exponential is not available on tier "
        + "Core; served as None");
    assertThat(r.runs().get(0).reasonCode()).isEqualTo("policy_none");
    assertThat(r.toTable()).contains("Warning:  spec.backoff.type: Exponential is not available on tier Core");
  }

  @Test
  void jsonAndYamlCarryTheRowsAndTheSummary() throws Exception {
    SimulationReport r = simulate("", "exit:1,ok");

    JsonNode json = new ObjectMapper().readTree(r.toJson());
    assertThat(json.path("runs").get(0).path("reasonCode").asText()).isEqualTo("restart_scheduled");
    assertThat(json.path("runs").get(0).path("nextStartSeconds").asDouble()).isEqualTo(2.0);
    assertThat(json.path("summary").path("outcome").asText()).isEqualTo("Healthy");
    assertThat(json.has("seed")).isFalse();
    JsonNode yaml = new YAMLMapper().readTree(r.toYaml());
    assertThat(yaml).isEqualTo(json);
  }

  /**
   * docs/simulate.md: JSON/YAML carry each step's exit code, message and seconds; rows are numbered by story
   * step, the steps after a terminal phase included.
   */
  @Test
  void jsonRowsCarryTheStepsExitCodeMessageAndNumber() throws Exception {
    SimulationReport r = simulate("maxRetries: 5\ncircuitBreaker: {failureThreshold: 10}",
        "exit:3:boom,oom,deleted,exit:0,exit:1");

    assertThat(r.runs()).extracting(Row::step).containsExactly(1, 2, 3, 4, 5);
    assertThat(r.runs()).extracting(Row::reached).containsExactly(true, true, true, true, false);
    assertThat(r.runs()).extracting(Row::exitCode).containsExactly(3, 137, null, 0, null);
    assertThat(r.runs().get(0).message()).isEqualTo("boom");
    assertThat(r.runs().get(1).reason()).isEqualTo("OOMKilled");
    JsonNode json = new ObjectMapper().readTree(r.toJson());
    assertThat(json.path("runs").get(1).path("exitCode").asInt()).isEqualTo(137);
    assertThat(json.path("runs").get(4).path("step").asInt()).isEqualTo(5);
  }

  /** A heartbeat stall is not a container exit: no exit code is reported for it. */
  @Test
  void aHeartbeatStallHasNoExitCode() throws Exception {
    SimulationReport r = simulate("heartbeat: {timeout: 30s}", "heartbeat-stall@1m");

    assertThat(r.runs().get(0).exitCode()).isNull();
    assertThat(r.runs().get(0).reason()).isNull();
    assertThat(r.runs().get(0).interruptionClass()).isEqualTo("Timeout");
  }

  /**
   * docs/simulate.md (NOTES: the end of a failure sequence): a run healthy for less than resetAfter does not end
   * the sequence, the next failure counts on; healthy for resetAfter it does.
   */
  @Test
  void aRunHealthyForLessThanResetAfterKeepsTheFailureSequence() throws Exception {
    String spec = "resetAfter: 1m\nmaxRetries: 5\ncircuitBreaker: {failureThreshold: 10}";
    SimulationReport shortly = simulate(spec, "exit:1,ok:10s,exit:1");
    assertThat(shortly.runs().get(1).notes()).anySatisfy(n -> assertThat(n).contains("less than resetAfter 1m0s"));
    assertThat(shortly.runs().get(2).attempt()).isEqualTo(2);

    SimulationReport long_ = simulate(spec, "exit:1,ok:1m,exit:1");
    assertThat(long_.runs().get(1).notes()).noneSatisfy(n -> assertThat(n).contains("less than resetAfter"));
    assertThat(long_.runs().get(2).attempt()).isEqualTo(1);
  }

  /** docs/simulate.md: never-started without a startup grace is Stuck, and the outcome says why. */
  @Test
  void aPodThatNeverStartsWithoutAStartupGraceIsStuckAndSaysWhy() throws Exception {
    assertThat(simulate("", "never-started").summary()).satisfies(s -> {
      assertThat(s.outcome()).isEqualTo("Stuck");
      assertThat(s.note()).contains("spec.heartbeat.startupGrace");
    });
  }

  /** docs/simulate.md (NOTES: rules): a row names the failure rule that decided it; an ignored failure says so. */
  @Test
  void theNotesNameTheRuleThatDecided() throws Exception {
    SimulationReport r = simulate("""
        failureRules:
        - {name: flaky-tool, match: {exitCodes: [3]}, action: Ignore}
        """, "exit:1,exit:3");

    assertThat(r.runs().get(1).notes()).contains("rule flaky-tool")
        .anySatisfy(n -> assertThat(n).contains("not counted"));
    assertThat(r.runs().get(0).notes()).noneSatisfy(n -> assertThat(n).contains("not counted"));
  }
}

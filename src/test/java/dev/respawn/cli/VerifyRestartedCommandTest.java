package dev.respawn.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.respawn.testsupport.ManualClock;
import dev.respawn.testsupport.MockApi;
import java.math.BigDecimal;
import java.time.Instant;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class VerifyRestartedCommandTest {
  @RegisterExtension
  static final MockApi API = new MockApi();
  static final String NS = "verify";
  static final ManualClock CLOCK = ManualClock.at("2026-11-21T10:35:00Z");

  @BeforeAll
  static void instances() {
    Instances.create(API.client(), NS, "coder", null, """
        phase: Running
        run: 2
        currentPod: coder-2
        lastRestart: {kind: Manual, reason: "Load new GitConfig implementation", previousPod: coder-1, pod: coder-2,
                      requestedAt: "2026-11-21T10:30:00Z", startedAt: "2026-11-21T10:30:00.250Z", requestId: cli-1}
        handledRequests: {restart: cli-1}
        """);
    Instances.create(API.client(), NS, "waiting", null, """
        phase: Backoff
        run: 1
        nextRestartAt: "2026-11-21T10:35:20Z"
        lastRestart: {kind: Failure, reason: "exit 1", previousPod: waiting-1, requestedAt: "2026-11-21T10:34:50Z"}
        """);
    Instances.create(API.client(), NS, "never", null, "{phase: Running, run: 1, currentPod: never-1}");
    // restarted by hand at 10:30 (run 2 started), then run 2 failed at 10:34:50: the next restart is pending and
    // its decision replaced lastRestart
    Instances.create(API.client(), NS, "refailed", null, """
        phase: Backoff
        run: 2
        currentPod: refailed-2
        attempt: 1
        nextRestartAt: "2026-11-21T10:35:20Z"
        lastRestart: {kind: Failure, reason: "ToolFailure/UnhandledException exit 1 Error", previousPod: refailed-2,
                      requestedAt: "2026-11-21T10:34:50Z", requestId: ""}
        handledRequests: {restart: cli-1}
        history:
        - {run: 1, pod: refailed-1, startedAt: "2026-11-21T10:20:00Z", endedAt: "2026-11-21T10:30:00Z",
           outcome: Restarted, reasonCode: manual_restart}
        - {run: 2, pod: refailed-2, startedAt: "2026-11-21T10:30:00.250Z", endedAt: "2026-11-21T10:34:50Z",
           outcome: Failure, class: ToolFailure, exitCode: 1, reasonCode: restart_scheduled}
        """);
  }

  static Cli.Result verify(String name, String since, String... more) {
    String[] args = new String[5 + more.length];
    args[0] = "verify-restarted";
    args[1] = name;
    args[2] = "--since=" + since;
    args[3] = "-n";
    args[4] = NS;
    System.arraycopy(more, 0, args, 5, more.length);
    return Cli.run(PluginEnvironment.using(API.client(), CLOCK), args);
  }

  @Test
  void aRunStartedAfterSincePrintsTheRestartRecordAndExits0() {
    Cli.Result r = verify("coder", "2026-11-21T10:29:59Z", "-o", "json");

    assertThat(r.exit()).as(r.toString()).isZero();
    JsonNode j = r.json();
    assertThat(j.get("restarted").asBoolean()).isTrue();
    assertThat(j.get("reason").asText()).isEqualTo("Load new GitConfig implementation");
    assertThat(j.get("previous_pod").asText()).isEqualTo("coder-1");
    assertThat(j.get("pod").asText()).isEqualTo("coder-2");
    assertThat(j.get("restart_timestamp").asDouble())
        .isEqualTo(Instant.parse("2026-11-21T10:30:00.250Z").toEpochMilli() / 1000.0);
    assertThat(j.get("time_since_restart").asDouble()).isEqualTo(299.75);
    assertThat(j.get("last_restart").get("requestId").asText()).isEqualTo("cli-1");
    assertThat(j.get("last_restart").get("startedAt").asText()).isEqualTo("2026-11-21T10:30:00.250Z");
  }

  @Test
  void aRunThatStartedAfterSinceCountsAlthoughItFailedAgainAndItsNextRestartIsPending() {
    Cli.Result r = verify("refailed", "2026-11-21T10:29:59Z", "-o", "json");

    assertThat(r.exit()).as(r.toString()).isZero();
    JsonNode j = r.json();
    assertThat(j.get("restarted").asBoolean()).isTrue();
    assertThat(j.get("pod").asText()).isEqualTo("refailed-2");
    assertThat(j.get("previous_pod").asText()).isEqualTo("refailed-1");
    assertThat(j.get("reason").asText()).isEqualTo("manual_restart");
    assertThat(j.get("iso_time").asText()).isEqualTo("2026-11-21T10:30:00.250Z");
    assertThat(j.get("message").asText()).isEqualTo("Restart confirmed: pod refailed-2 started at "
        + "2026-11-21T10:30:00.250Z");
    // a run after the pending restart's decision did not start: still no restart since then
    assertThat(verify("refailed", "2026-11-21T10:31:00Z").err()).contains("is pending");
    assertThat(verify("refailed", "2026-11-21T10:31:00Z").exit()).isEqualTo(1);
  }

  @Test
  void sinceTakesRfc3339WithASpaceAsGnuDatePrintsIt() {
    // `date --rfc-3339=seconds` prints "2026-11-21 10:29:59+00:00" (RFC 3339 §5.6 NOTE allows the space)
    assertThat(verify("coder", "2026-11-21 10:29:59+00:00").exit()).isZero();
    assertThat(verify("coder", "2026-11-21 10:30:01+00:00").exit()).isEqualTo(1);
  }

  @Test
  void yamlWritesTheRestartTimestampAsAPlainDecimalNumber() {
    Cli.Result yaml = verify("coder", "2026-11-21T10:29:59Z", "-o", "yaml");
    Cli.Result json = verify("coder", "2026-11-21T10:29:59Z", "-o", "json");

    // YAML 1.1 parsers (PyYAML) read 1.79525700025E9 as a string: a float there needs a '.' and no bare exponent
    assertThat(yaml.out()).contains("restart_timestamp: 1795257000.250" + System.lineSeparator());
    assertThat(json.json().get("restart_timestamp").isNumber()).isTrue();
  }

  @Test
  void sinceTakesUnixSecondsAndDurationsAgo() {
    String justBefore = BigDecimal.valueOf(Instant.parse("2026-11-21T10:30:00.125Z").toEpochMilli())
        .movePointLeft(3).toPlainString();
    assertThat(justBefore).isEqualTo("1795257000.125");
    assertThat(verify("coder", justBefore).exit()).isZero();
    assertThat(verify("coder", "1795257001").exit()).isEqualTo(1);
    assertThat(verify("coder", "6m").exit()).isZero();
    assertThat(verify("coder", "4m").exit()).isEqualTo(1);
  }

  @Test
  void theTableListsTheRecord() {
    Cli.Result r = verify("coder", "2026-11-21T10:29:59Z");

    assertThat(r.exit()).as(r.toString()).isZero();
    assertThat(r.out()).contains("Kind:", "Manual", "Previous pod:", "coder-1", "Request id:", "cli-1");
  }

  @Test
  void noRestartSinceIsExit1WithTheReason() {
    Cli.Result atTheSameInstant = verify("coder", "2026-11-21T10:30:00.250Z");
    Cli.Result later = verify("coder", "2026-11-21T10:31:00Z", "-o", "json");

    assertThat(atTheSameInstant.exit()).isEqualTo(1);
    assertThat(later.exit()).isEqualTo(1);
    assertThat(later.err()).contains("has not restarted since 2026-11-21T10:31:00Z",
        "the last restart started at 2026-11-21T10:30:00.250Z");
    assertThat(later.json().get("restarted").asBoolean()).isFalse();
    assertThat(later.err()).doesNotContain("Exception");
  }

  @Test
  void aPendingRestartIsExit1AndSaysItIsPending() {
    Cli.Result r = verify("waiting", "2026-11-21T10:34:00Z");

    assertThat(r.exit()).isEqualTo(1);
    assertThat(r.err()).contains("is pending", "phase Backoff", "next restart in 20s");
    assertThat(r.out()).isEmpty();
  }

  private static void requestRestart(String instance, String id) {
    API.client().resources(dev.respawn.api.v1alpha1.AgentInstance.class).inNamespace(NS).withName(instance)
        .edit(i -> {
          i.getMetadata().setAnnotations(java.util.Map.of("respawn.dev/restart", id));
          return i;
        });
  }

  @Test
  void anUnhandledRequestIsPending() {
    Instances.create(API.client(), NS, "asked", null, "{phase: Running, run: 1}");
    requestRestart("asked", "cli-9");

    Cli.Result r = verify("asked", "2026-11-21T10:34:00Z");

    assertThat(r.exit()).isEqualTo(1);
    assertThat(r.err()).contains("restart request cli-9 is pending");
  }

  @Test
  void aRevertedRequestIdIsNotPendingButActedOnBefore() {
    Instances.create(API.client(), NS, "reverted", null, "{phase: Running, run: 3, handledRequests: {restart: b}, "
        + "earlierRequests: {restart: [a]}}");
    requestRestart("reverted", "a");

    Cli.Result r = verify("reverted", "2026-11-21T10:34:00Z");

    assertThat(r.exit()).isEqualTo(1);
    assertThat(r.err()).contains("restart request a was acted on before", "use a new id")
        .doesNotContain("is pending");
  }

  @Test
  void neverRestartedIsExit1() {
    Cli.Result r = verify("never", "2026-11-21T10:00:00Z");

    assertThat(r.exit()).isEqualTo(1);
    assertThat(r.err()).contains("no restart recorded");
  }

  @Test
  void aBadTimestampIsAUsageError() {
    Cli.Result r = verify("coder", "yesterday");

    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains("'yesterday' is not a timestamp");
  }

  @Test
  void theFirstRunOfAnInstanceIsNoRestart() {
    Instances.create(API.client(), NS, "first", null, """
        phase: Running
        run: 1
        currentPod: first-1
        runStartedAt: "2026-11-21T10:31:00Z"
        """);

    Cli.Result r = verify("first", "2026-11-21T10:30:00Z");

    assertThat(r.exit()).as(r.toString()).isEqualTo(1);
    assertThat(r.err()).contains("has not restarted since");
  }

  @Test
  void aRunningRestartWhoseRecordWasReplacedNamesThePodOfTheRunBeforeIt() {
    // run 3 started at 10:32 and is running; a later decision (a pending restart request's) replaced lastRestart
    Instances.create(API.client(), NS, "third", null, """
        phase: Running
        run: 3
        currentPod: third-3
        runStartedAt: "2026-11-21T10:32:00Z"
        lastRestart: {kind: Manual, reason: "new tools", previousPod: third-3, requestedAt: "2026-11-21T10:34:00Z"}
        history:
        - {run: 1, pod: third-1, startedAt: "2026-11-21T10:20:00Z", endedAt: "2026-11-21T10:25:00Z",
           outcome: Failure, reasonCode: restart_scheduled}
        - {run: 2, pod: third-2, startedAt: "2026-11-21T10:25:05Z", endedAt: "2026-11-21T10:31:55Z",
           outcome: Failure, reasonCode: restart_immediate}
        """);

    Cli.Result r = verify("third", "2026-11-21T10:30:00Z", "-o", "json");

    assertThat(r.exit()).as(r.toString()).isZero();
    assertThat(r.json().get("pod").asText()).isEqualTo("third-3");
    assertThat(r.json().get("previous_pod").asText()).isEqualTo("third-2");
    assertThat(r.json().get("reason").asText()).isEqualTo("restart_immediate");
  }
}

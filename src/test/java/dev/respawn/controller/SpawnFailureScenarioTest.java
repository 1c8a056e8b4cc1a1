package dev.respawn.controller;

import static dev.respawn.controller.OperatorFixture.at;
import static dev.respawn.controller.OperatorFixture.condition;
import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.api.v1alpha1.TerminalReason;
import dev.respawn.sandbox.Run;
import dev.respawn.testsupport.ApiFaults;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** api.md §4, last paragraph: a pod the API server refuses to create. */
class SpawnFailureScenarioTest extends MockClusterScenario {
  static final String INVALID = "Pod \"tmpl-1\" is invalid: spec.containers[0].image: Required value";
  static final String QUOTA = "pods \"quota-1\" is forbidden: exceeded quota: agents, requested: pods=1, used: "
      + "pods=10, limited: pods=10";

  /** Refuses every pod create with this status while {@code on} holds. */
  static ApiFaults refusePodCreates(AtomicBoolean on, int code, String reason, String message) {
    return new ApiFaults() {
      @Override
      public MockResponse before(RecordedRequest request) {
        boolean podCreate = "POST".equals(request.getMethod()) && request.getPath().contains("/pods");
        return on.get() && podCreate ? ApiFaults.status(code, reason, message) : null;
      }
    };
  }

  @Test
  void anInvalidTemplateFailsWithTheServersMessageInTheConditions() {
    f.api.faults(refusePodCreates(new AtomicBoolean(true), 422, "Invalid", INVALID));
    f.policy("plain", null);
    f.instance("tmpl", "plain");

    AgentInstance failed = f.awaitInstance("tmpl", i -> i.getStatus().phase == Phase.Failed);
    assertThat(failed.getStatus().terminalReason).isEqualTo(TerminalReason.UnrecoverableError);
    assertThat(failed.getStatus().lastDecision.reasonCode).isEqualTo("invalid_template");
    assertThat(failed.getStatus().lastDecision.message).isEqualTo(INVALID);
    assertThat(failed.getStatus().attempt).as("not a failure of the agent").isZero();
    assertThat(condition(failed, "Ready").message).contains(INVALID);
    assertThat(condition(failed, "Escalated").status).isEqualTo("True");
    assertThat(condition(failed, "Escalated").message).contains(INVALID, "Fix spec.template",
        "kubectl respawn resume tmpl --force");
    f.awaitEvent("tmpl", e -> {
      assertThat(e.getReason()).isEqualTo("Escalated");
      assertThat(e.getNote()).contains(INVALID);
    });

    // a new operator process, then a spec change, reconcile it again from status alone: the server's
    // message stays in the conditions
    f.restartOperator();
    f.edit("tmpl", i -> {
      i.getSpec().task = "TASK-2";
      return i;
    });
    AgentInstance later = f.awaitInstance("tmpl",
        i -> i.getMetadata().getGeneration().equals(i.getStatus().observedGeneration));
    assertThat(later.getStatus().phase).isEqualTo(Phase.Failed);
    assertThat(condition(later, "Escalated").message).contains(INVALID);
    assertThat(condition(later, "Ready").message).contains(INVALID);
    assertThat(f.podsEverCreated("tmpl")).isEmpty();
  }

  /**
   * Instance {@code name} of a policy with this backoff, whose pod creates the server refuses with this status while
   * {@code refusing} holds; returned once status shows the refusal (spawn_failed).
   */
  AgentInstance refusedAtFirst(String name, String backoff, AtomicBoolean refusing, int code, String reason,
      String message) {
    f.api.faults(refusePodCreates(refusing, code, reason, message));
    f.policy(name + "-policy", "backoff: " + backoff);
    f.kubelet.script(name, Run.runForever());
    f.instance(name, name + "-policy");
    return f.awaitInstance(name, i -> i.getStatus().lastDecision != null
        && "spawn_failed".equals(i.getStatus().lastDecision.reasonCode));
  }

  @Test
  void aQuotaRefusalIsRetriedWithTheBackoffAndCountsNoFailure() {
    AtomicBoolean refusing = new AtomicBoolean(true);
    AgentInstance waiting = refusedAtFirst("quota", "{type: Linear, initialDelay: 200ms, maxDelay: 1s}", refusing,
        403, "Forbidden", QUOTA);
    assertThat(waiting.getStatus().lastDecision.message).isEqualTo(QUOTA);
    assertThat(waiting.getStatus().attempt).isZero();
    // kubectl describe shows why no pod runs on the Ready condition too
    assertThat(condition(waiting, "Ready").message).startsWith("the pod could not be created: " + QUOTA)
        .contains("next run at");
    f.awaitEvent("quota", e -> {
      assertThat(e.getReason()).isEqualTo("RestartFailed");
      assertThat(e.getType()).isEqualTo("Warning");
      assertThat(e.getNote()).contains("spawn_failed", QUOTA);
    });

    refusing.set(false); // the quota was raised
    AgentInstance running = f.awaitInstance("quota", i -> at(i, 1, Phase.Running));
    assertThat(running.getStatus().attempt).isZero();
    assertThat(running.getStatus().terminalReason).isNull();
    assertThat(f.podsEverCreated("quota")).containsExactly("quota-1");
  }

  /**
   * An admission webhook that is down answers 500 (the API server could not call it): an admission refusal, told in
   * status and a Warning Event like a quota's, not a silent retry of the reconcile for as long as the outage lasts.
   */
  @Test
  void anUnreachableAdmissionWebhookIsARefusalTheUserSees() {
    String down = "Internal error occurred: failed calling webhook \"policy.example.com\": failed to call webhook: "
        + "Post \"https://policy.example.svc:443/validate?timeout=10s\": context deadline exceeded";
    AtomicBoolean refusing = new AtomicBoolean(true);
    AgentInstance waiting = refusedAtFirst("hooked", "{type: Linear, initialDelay: 200ms, maxDelay: 1s}", refusing,
        500, "InternalError", down);
    assertThat(waiting.getStatus().lastDecision.message).isEqualTo(down);
    assertThat(condition(waiting, "Ready").message).startsWith("the pod could not be created: " + down);
    f.awaitEvent("hooked", e -> {
      assertThat(e.getType()).isEqualTo("Warning");
      assertThat(e.getNote()).contains("spawn_failed", "failed calling webhook");
    });

    refusing.set(false); // the webhook is back
    AgentInstance running = f.awaitInstance("hooked", i -> at(i, 1, Phase.Running));
    assertThat(running.getStatus().attempt).isZero();
    assertThat(f.podsEverCreated("hooked")).containsExactly("hooked-1");
  }

  /**
   * A refused start waits for its retry (here an hour: the backoff's first delay). The user fixes the template
   * (what PodSecurity refused): the retry is due at once, not after the hour; once per edit.
   */
  @Test
  void aTemplateFixedAfterARefusalIsTriedAtOnce() {
    String podSecurity = "pods \"fixed-1\" is forbidden: violates PodSecurity \"restricted:latest\": "
        + "allowPrivilegeEscalation != false (container \"agent\" must set "
        + "securityContext.allowPrivilegeEscalation=false)";
    AtomicBoolean refusing = new AtomicBoolean(true);
    AgentInstance waiting = refusedAtFirst("fixed", "{type: Linear, initialDelay: 1h, maxDelay: 1h}", refusing, 403,
        "Forbidden", podSecurity);
    assertThat(java.time.Instant.parse(waiting.getStatus().nextRestartAt))
        .isAfter(java.time.Instant.now().plus(java.time.Duration.ofMinutes(50)));

    refusing.set(false); // what the fixed template would meet
    f.edit("fixed", i -> {
      i.getSpec().template.getSpec().getContainers().get(0).setSecurityContext(
          new io.fabric8.kubernetes.api.model.SecurityContextBuilder().withAllowPrivilegeEscalation(false).build());
      return i;
    });
    AgentInstance running = f.awaitInstance("fixed", i -> at(i, 1, Phase.Running));
    assertThat(running.getStatus().attempt).isZero();
    assertThat(f.podsEverCreated("fixed")).containsExactly("fixed-1");
  }
}

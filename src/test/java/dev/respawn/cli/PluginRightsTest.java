package dev.respawn.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.deploy.DeployManifests;
import dev.respawn.deploy.DeployManifests.Access;
import dev.respawn.deploy.DeployManifests.Grant;
import dev.respawn.testsupport.ManualClock;
import dev.respawn.testsupport.MockApi;
import dev.respawn.testsupport.RequestLog;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import java.net.URI;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * deploy/README: whoever has Kubernetes' edit role in a namespace may use every kubectl respawn command there
 * (the edit ClusterRole of deploy/user-roles.yaml is aggregated into it), and view may use those that only read.
 * Each command's requests to respawn.dev resources, as the API server sees them, are checked against those roles.
 */
class PluginRightsTest {
  @RegisterExtension
  static final MockApi API = new MockApi();
  static final ManualClock CLOCK = ManualClock.at("2026-11-27T18:00:00.000Z");
  static final String NS = "rights";

  static List<Grant> grants(String suffix) {
    return DeployManifests.ofType(DeployManifests.objects(DeployManifests.DEPLOY), ClusterRole.class).stream()
        .filter(r -> r.getMetadata().getName().endsWith(suffix))
        .flatMap(r -> r.getRules().stream().map(rule -> Grant.of(r.getMetadata().getName(), Optional.empty(), rule)))
        .toList();
  }

  /** What {@code args} asked of respawn.dev resources (the command must succeed). */
  static List<Access> asked(String... args) {
    int before = API.requests().all().size();
    Cli.Result r = Cli.run(PluginEnvironment.using(API.client(), CLOCK), args);
    assertThat(r.exit()).as(r.toString()).isZero();
    List<RequestLog.Request> made = API.requests().all();
    return made.subList(before, made.size()).stream()
        .map(q -> Access.of(q.verb(), URI.create("http://api" + q.path())))
        .filter(a -> a.group().equals("respawn.dev")).toList();
  }

  static void allowedBy(List<Grant> role, List<Access> asked) {
    assertThat(asked).isNotEmpty()
        .allSatisfy(a -> assertThat(role).as("%s", a).anySatisfy(g -> assertThat(g.allows(a)).isTrue()));
  }

  @Test
  void editCoversEveryCommandAndViewTheOnesThatRead() {
    Instances.policy(API.client(), NS, "agents", "{maxRetries: 3}");
    Instances.create(API.client(), NS, "coder", "agents", "{phase: Escalated, run: 2, currentPod: coder-2}");
    List<Grant> edit = grants("-agents-edit");
    List<Grant> view = grants("-agents-view");

    List<Access> status = asked("status", "coder", "-n", NS);
    allowedBy(view, status);
    allowedBy(edit, status);
    allowedBy(edit, asked("restart", "coder", "--reason", "new tools", "-n", NS));
    allowedBy(edit, asked("resume", "coder", "--force", "-n", NS));
    allowedBy(edit, asked("restart", "--all-failed", "--reason", "fleet fixed", "-n", NS));
    // and view may not ask for a restart
    assertThat(asked("restart", "coder", "--reason", "again", "-n", NS)).anySatisfy(a ->
        assertThat(view).noneSatisfy(g -> assertThat(g.allows(a)).isTrue()));
  }
}

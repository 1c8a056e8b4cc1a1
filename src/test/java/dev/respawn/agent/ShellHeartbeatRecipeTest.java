package dev.respawn.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.heartbeat.HeartbeatLeases;
import dev.respawn.testsupport.MockApi;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The curl recipe of docs/agents.md (agent/shell/respawn-heartbeat.sh), run with sh against the mock API server. */
class ShellHeartbeatRecipeTest {
  @RegisterExtension
  static final MockApi API = new MockApi();
  static final Path SCRIPT = Path.of("agent", "shell", "respawn-heartbeat.sh").toAbsolutePath();

  record Ran(int code, String err) {}

  static Ran run(String lease, String... args) throws Exception {
    ProcessBuilder b = new ProcessBuilder(new java.util.ArrayList<>(List.of("sh", SCRIPT.toString())));
    b.command().addAll(List.of(args));
    b.environment().put("RESPAWN_API_URL", API.url().replaceAll("/$", ""));
    b.environment().put("RESPAWN_TOKEN", "test-token");
    b.environment().put("RESPAWN_NAMESPACE", MockApi.NAMESPACE);
    b.environment().put("RESPAWN_LEASE_NAME", lease);
    b.environment().put("RESPAWN_POD_NAME", lease + "-4");
    Path err = Files.createTempFile("recipe", ".err");
    Process p = b.redirectErrorStream(false).redirectError(err.toFile()).redirectOutput(ProcessBuilder.Redirect.DISCARD)
        .start();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("the recipe ended").isTrue();
    return new Ran(p.exitValue(), Files.readString(err, StandardCharsets.UTF_8));
  }

  @Test
  void theRecipeRenewsTheLeaseAsThePodWithTheVerdictAndAnEscapedDetail() throws Exception {
    API.client().leases().inNamespace(MockApi.NAMESPACE).resource(new LeaseBuilder().withNewMetadata()
        .withName("shell").endMetadata().withNewSpec().endSpec().build()).create();
    Instant before = Instant.now().minusSeconds(1);
    Ran r = run("shell", "Healthy", "step \"3\" of 7");
    assertThat(r.code()).as(r.err()).isZero();
    Lease l = API.client().leases().inNamespace(MockApi.NAMESPACE).withName("shell").get();
    assertThat(l.getSpec().getHolderIdentity()).isEqualTo("shell-4");
    assertThat(l.getSpec().getRenewTime().toInstant()).isAfter(before);
    assertThat(l.getMetadata().getAnnotations()).containsEntry(HeartbeatLeases.HEALTH, "Healthy")
        .containsEntry("respawn.dev/detail", "step \"3\" of 7");
  }

  @Test
  void aMissingLeaseOrABadVerdictFails() throws Exception {
    Ran missing = run("nowhere", "Healthy");
    assertThat(missing.code()).isNotZero();
    assertThat(missing.err()).contains("404");
    Ran bad = run("nowhere", "Fine");
    assertThat(bad.code()).isEqualTo(2);
    assertThat(bad.err()).contains("verdict must be Healthy, Stalled, Crashed or Ambiguous, not Fine");
  }
}

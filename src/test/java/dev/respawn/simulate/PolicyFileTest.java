package dev.respawn.simulate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.respawn.simulate.PolicyFile.Loaded;
import dev.respawn.simulate.PolicyFile.PolicyFileException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class PolicyFileTest {
  static final String TWO = """
      # a comment-only document first
      ---
      apiVersion: v1
      kind: Namespace
      metadata: {name: agents}
      ---
      apiVersion: respawn.dev/v1alpha1
      kind: AgentRestartPolicy
      metadata: {name: first, namespace: agents}
      spec: {maxRetries: 7}
      ---
      apiVersion: respawn.dev/v1alpha1
      kind: AgentRestartPolicy
      metadata: {name: second}
      spec:
        backoff: {type: Linear}
      """;

  @Test
  void theFirstPolicyOfAMultiDocumentFile() throws Exception {
    Loaded p = PolicyFile.read(TWO, "f.yaml", null);

    assertThat(p.name()).isEqualTo("first");
    assertThat(p.namespace()).isEqualTo("agents");
    assertThat(p.spec().maxRetries).isEqualTo(7);
  }

  @Test
  void theNamedPolicy() throws Exception {
    Loaded p = PolicyFile.read(TWO, "f.yaml", "second");

    assertThat(p.namespace()).isNull();
    assertThat(p.spec().backoff.type).isEqualTo("Linear");
    assertThatThrownBy(() -> PolicyFile.read(TWO, "f.yaml", "third")).isInstanceOf(PolicyFileException.class)
        .hasMessage("f.yaml has no AgentRestartPolicy named third (it has: first, second)");
  }

  @Test
  void aListAsKubectlPrintsIt() throws Exception {
    String list = """
        apiVersion: v1
        kind: List
        items:
        - apiVersion: respawn.dev/v1alpha1
          kind: AgentRestartPolicy
          metadata: {name: listed}
        """;

    assertThat(PolicyFile.read(list, "l.yaml", null).name()).isEqualTo("listed");
  }

  @Test
  void everyExampleWithAPolicyReads() throws Exception {
    try (var files = Files.list(Path.of("examples"))) {
      for (Path f : files.filter(f -> f.toString().endsWith(".yaml")).sorted().toList()) {
        String text = Files.readString(f);
        if (text.contains("kind: AgentRestartPolicy")) {
          assertThat(PolicyFile.read(text, f.toString(), null).spec()).as(f.toString()).isNotNull();
        }
      }
    }
  }

  @Test
  void mistakesAreNamedWithTheirPath() {
    assertThatThrownBy(() -> PolicyFile.read("kind: Namespace", "n.yaml", null))
        .hasMessageContaining("n.yaml holds no AgentRestartPolicy");
    assertThatThrownBy(() -> PolicyFile.read("""
        apiVersion: respawn.dev/v1alpha1
        kind: AgentRestartPolicy
        metadata: {name: typo}
        spec:
          failureRules:
          - name: a
            action: Fail
            match: {exitCode: [2]}
        """, "t.yaml", null)).hasMessage("t.yaml: spec.failureRules[0].match.exitCode: unknown field");
    assertThatThrownBy(() -> PolicyFile.read("""
        apiVersion: respawn.dev/v1alpha1
        kind: AgentRestartPolicy
        metadata: {name: typed}
        spec: {maxRetries: many}
        """, "t.yaml", null)).hasMessageStartingWith("t.yaml: spec.maxRetries: wrong type");
    // quoted, a number or a boolean is a string, as the schema and the operator read it (api.md §9)
    assertThatThrownBy(() -> PolicyFile.read("""
        apiVersion: respawn.dev/v1alpha1
        kind: AgentRestartPolicy
        metadata: {name: quoted}
        spec: {maxRetries: "3"}
        """, "q.yaml", null)).hasMessageStartingWith("q.yaml: spec.maxRetries: wrong type");
    assertThatThrownBy(() -> PolicyFile.read("""
        apiVersion: respawn.dev/v1alpha1
        kind: AgentRestartPolicy
        metadata: {name: quoted}
        spec: {circuitBreaker: {latch: "true"}}
        """, "q.yaml", null)).hasMessageStartingWith("q.yaml: spec.circuitBreaker.latch: wrong type");
    assertThatThrownBy(() -> PolicyFile.read("""
        apiVersion: respawn.dev/v1beta1
        kind: AgentRestartPolicy
        metadata: {name: future}
        """, "v.yaml", null)).hasMessageContaining("apiVersion \"respawn.dev/v1beta1\"");
    assertThatThrownBy(() -> PolicyFile.read("a: [", "y.yaml", null)).hasMessageContaining("not valid YAML");
  }

  /** api.md §1: every spec field has a default; a policy without a spec reads as all defaults. */
  @Test
  void aPolicyWithoutASpecIsAllDefaults() throws Exception {
    Loaded p = PolicyFile.read("apiVersion: respawn.dev/v1alpha1\nkind: AgentRestartPolicy\nmetadata: {name: bare}\n",
        "b.yaml", null);
    assertThat(p.name()).isEqualTo("bare");
    assertThat(p.spec()).isNotNull();
    assertThat(dev.respawn.policy.PolicyCompiler.compile(p.spec()).maxRetries()).isEqualTo(3);
  }
}

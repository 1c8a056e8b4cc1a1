package dev.respawn.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.io.File;
import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The kustomize base of {@code deploy/}: every object is a well-formed Kubernetes object (no field
 * fabric8's model does not know, which is what a typo looks like), in the operator's namespace, and the
 * Deployment runs the operator as api.md §10 and the restricted Pod Security Standard ask. Where kubectl
 * (and Lua 5.1) are installed, {@code kubectl kustomize} renders both kustomizations and the Argo CD
 * health check passes its cases.
 */
class KustomizeBaseTest {
  static final List<HasMetadata> OBJECTS = DeployManifests.objects(DeployManifests.DEPLOY);

  static Deployment deployment() {
    return DeployManifests.ofType(OBJECTS, Deployment.class).get(0);
  }

  static Container operator() {
    return deployment().getSpec().getTemplate().getSpec().getContainers().get(0);
  }

  @Test
  void everyObjectIsWellFormed() {
    List<String> unknown = new ArrayList<>();
    for (HasMetadata o : OBJECTS) {
      if (!(o instanceof CustomResourceDefinition)) { // the Crd*Test classes (CrdSchemaFixture) cover the CRDs
        unknownFields(o, o.getKind() + "/" + o.getMetadata().getName(), unknown);
      }
    }
    assertThat(unknown).as("fields the Kubernetes API does not have (typos?)").isEmpty();
    assertThat(OBJECTS).extracting(HasMetadata::getKind).contains("Namespace", "CustomResourceDefinition",
        "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "Deployment", "Service");
  }

  /** Fields fabric8's typed model put in additionalProperties: it did not know them. */
  static void unknownFields(Object o, String path, List<String> unknown) {
    if (o == null) {
      return;
    }
    if (o instanceof Collection<?> c) {
      int i = 0;
      for (Object e : c) {
        unknownFields(e, path + "[" + i++ + "]", unknown);
      }
      return;
    }
    if (o instanceof Map<?, ?> m) {
      m.forEach((k, v) -> unknownFields(v, path + "." + k, unknown));
      return;
    }
    if (!o.getClass().getName().startsWith("io.fabric8.kubernetes.api.model")) {
      return;
    }
    for (Method m : o.getClass().getMethods()) {
      if (m.getParameterCount() != 0 || Modifier.isStatic(m.getModifiers()) || !m.getName().startsWith("get")
          || m.getDeclaringClass() == Object.class) {
        continue;
      }
      try {
        Object value = m.invoke(o);
        if (m.getName().equals("getAdditionalProperties") && value instanceof Map<?, ?> extra) {
          extra.keySet().forEach(k -> unknown.add(path + "." + k));
        } else if (value != null && (value instanceof Collection || value instanceof Map
            || value.getClass().getName().startsWith("io.fabric8.kubernetes.api.model"))) {
          unknownFields(value, path + "." + m.getName().substring(3, 4).toLowerCase() + m.getName().substring(4),
              unknown);
        }
      } catch (ReflectiveOperationException e) {
        throw new IllegalStateException(e);
      }
    }
  }

  @Test
  void everythingNamespacedIsInTheOperatorNamespace() {
    assertThat(DeployManifests.ofType(OBJECTS, Namespace.class)).extracting(n -> n.getMetadata().getName())
        .containsExactly(DeployManifests.OPERATOR_NAMESPACE);
    assertThat(OBJECTS).filteredOn(o -> List.of("ServiceAccount", "Role", "RoleBinding", "Deployment", "Service")
        .contains(o.getKind())).allSatisfy(o -> assertThat(o.getMetadata().getNamespace())
            .as("namespace of %s %s", o.getKind(), o.getMetadata().getName())
            .isEqualTo(DeployManifests.OPERATOR_NAMESPACE));
  }

  @Test
  void theOperatorRunsLeaderElectedWithItsMetricsPort() {
    Container c = operator();
    assertThat(c.getArgs()).containsExactly("operator", "--leader-election", "--metrics-port", "8080", "--tier",
        "Enterprise");
    assertThat(c.getPorts()).singleElement().satisfies(p -> {
      assertThat(p.getName()).isEqualTo("metrics");
      assertThat(p.getContainerPort()).isEqualTo(8080);
    });
    assertThat(c.getLivenessProbe().getHttpGet().getPath()).isEqualTo("/healthz");
    assertThat(c.getLivenessProbe().getHttpGet().getPort().getStrVal()).isEqualTo("metrics");
    assertThat(c.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/readyz");
    assertThat(c.getReadinessProbe().getHttpGet().getPort().getStrVal()).isEqualTo("metrics");
    assertThat(c.getEnv()).filteredOn(e -> e.getValueFrom() != null)
        .extracting(EnvVar::getName, e -> e.getValueFrom().getFieldRef().getFieldPath())
        .contains(org.assertj.core.groups.Tuple.tuple("POD_NAMESPACE", "metadata.namespace"),
            org.assertj.core.groups.Tuple.tuple("POD_NAME", "metadata.name"));
    assertThat(c.getEnv()).anySatisfy(e -> {
      assertThat(e.getName()).isEqualTo("JAVA_TOOL_OPTIONS");
      assertThat(e.getValue()).contains("-XX:MaxRAMPercentage=75");
    });
    assertThat(c.getResources().getRequests()).containsKeys("cpu", "memory");
    assertThat(c.getResources().getLimits()).containsKeys("cpu", "memory");
    Service s = DeployManifests.ofType(OBJECTS, Service.class).get(0);
    assertThat(s.getSpec().getPorts()).singleElement().satisfies(p -> {
      assertThat(p.getName()).isEqualTo("metrics");
      assertThat(p.getPort()).isEqualTo(8080);
      assertThat(p.getTargetPort().getStrVal()).isEqualTo("metrics");
    });
    assertThat(deployment().getSpec().getTemplate().getMetadata().getLabels())
        .containsAllEntriesOf(s.getSpec().getSelector());
    assertThat(deployment().getSpec().getTemplate().getMetadata().getLabels())
        .containsAllEntriesOf(deployment().getSpec().getSelector().getMatchLabels());
  }

  @Test
  void theOperatorPodMeetsTheRestrictedPodSecurityStandard() {
    PodSpec pod = deployment().getSpec().getTemplate().getSpec();
    assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
    assertThat(pod.getSecurityContext().getSeccompProfile().getType()).isEqualTo("RuntimeDefault");
    assertThat(pod.getHostNetwork()).isNotEqualTo(Boolean.TRUE);
    var sc = operator().getSecurityContext();
    assertThat(sc.getRunAsNonRoot()).isTrue();
    assertThat(sc.getReadOnlyRootFilesystem()).isTrue();
    assertThat(sc.getAllowPrivilegeEscalation()).isFalse();
    assertThat(sc.getCapabilities().getDrop()).containsExactly("ALL");
    assertThat(sc.getCapabilities().getAdd()).isNullOrEmpty();
    assertThat(sc.getSeccompProfile().getType()).isEqualTo("RuntimeDefault");
    // the JVM writes to /tmp (perf data, temp files): an emptyDir, since the root filesystem is read-only
    assertThat(operator().getVolumeMounts()).anySatisfy(m -> assertThat(m.getMountPath()).isEqualTo("/tmp"));
    assertThat(pod.getVolumes()).anySatisfy(v -> assertThat(v.getEmptyDir()).isNotNull());
    assertThat(DeployManifests.ofType(OBJECTS, Namespace.class).get(0).getMetadata().getLabels())
        .containsEntry("pod-security.kubernetes.io/enforce", "restricted");
  }

  @Test
  void kubectlRendersBothKustomizations() throws Exception {
    assertThat(onPath("kubectl")).as("kubectl runs this test: install it (.ci/run does)").isTrue();
    for (String dir : List.of("deploy", "deploy/monitoring")) {
      Process p = new ProcessBuilder("kubectl", "kustomize", dir).directory(DeployManifests.BASEDIR.toFile())
          .redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(p.exitValue()).as("kubectl kustomize %s:%n%s", dir, out).isZero();
      assertThat(out).contains("kind: ");
      if (dir.equals("deploy")) {
        assertThat(out.split("\n---\n")).hasSameSizeAs(OBJECTS);
      }
    }
  }

  @Test
  void argoCdHealthCheckPassesItsCases() throws Exception {
    assertThat(onPath("lua5.1")).as("Lua 5.1 (Argo CD's dialect) runs this test: install it (.ci/run does, "
        + "apt-get install lua5.1)").isTrue();
    Process p = new ProcessBuilder("lua5.1", "deploy/argocd/health-agentinstance_test.lua")
        .directory(DeployManifests.BASEDIR.toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as("the health check's cases:%n%s", out).isZero();
  }

  static boolean onPath(String command) {
    return Stream.of(System.getenv().getOrDefault("PATH", "").split(File.pathSeparator))
        .anyMatch(d -> Files.isExecutable(Path.of(d, command)));
  }

  @Test
  void argoCdHealthCheckCoversEveryPhase() throws IOException {
    String lua = Files.readString(DeployManifests.DEPLOY.resolve("argocd/health-agentinstance.lua"));
    for (dev.respawn.api.v1alpha1.Phase phase : dev.respawn.api.v1alpha1.Phase.values()) {
      assertThat(lua).as("the health check handles phase %s", phase).contains("\"" + phase.name() + "\"");
    }
    assertThat(lua).contains("observedGeneration", "Ready", "suspend");
  }
}

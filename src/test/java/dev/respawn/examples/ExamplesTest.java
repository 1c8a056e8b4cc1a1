package dev.respawn.examples;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import dev.respawn.policy.PolicyCompiler;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Every file of examples/ parses, its policies are valid, and every instance can renew only its own Lease. */
class ExamplesTest {
  static Stream<Path> examples() throws IOException {
    return Files.list(Path.of("examples")).filter(p -> p.toString().endsWith(".yaml")).sorted();
  }

  static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

  static {
    SERIALIZATION.registerKubernetesResource(AgentRestartPolicy.class);
    SERIALIZATION.registerKubernetesResource(AgentInstance.class);
  }

  static List<HasMetadata> load(Path file) throws IOException {
    try (InputStream in = Files.newInputStream(file)) {
      Object parsed = SERIALIZATION.unmarshal(in);
      return parsed instanceof List<?> l ? l.stream().map(HasMetadata.class::cast).toList()
          : List.of((HasMetadata) parsed);
    }
  }

  @ParameterizedTest
  @MethodSource("examples")
  void everyDocumentIsAKnownKubernetesObject(Path file) throws IOException {
    List<HasMetadata> objects = load(file);
    assertThat(objects).isNotEmpty();
    assertThat(objects).allSatisfy(o -> {
      assertThat(o.getMetadata().getName()).isNotBlank();
      assertThat(o.getKind()).isNotBlank();
    });
  }

  @ParameterizedTest
  @MethodSource("examples")
  void policiesAreValidAndInstancesReferenceAPolicyOfTheirFile(Path file) throws Exception {
    List<HasMetadata> objects = load(file);
    List<AgentRestartPolicy> policies = objects.stream().filter(AgentRestartPolicy.class::isInstance)
        .map(AgentRestartPolicy.class::cast).toList();
    long respawnKinds = objects.stream().filter(o -> o.getApiVersion().startsWith("respawn.dev/")).count();
    assertThat(policies.size() + objects.stream().filter(AgentInstance.class::isInstance).count())
        .as("every respawn.dev object is read as its Java type").isEqualTo(respawnKinds);
    for (AgentRestartPolicy p : policies) {
      assertThat(PolicyCompiler.compile(p.getSpec())).isNotNull();
    }
    for (HasMetadata o : objects) {
      if (o instanceof AgentInstance i) {
        assertThat(policies).extracting(p -> p.getMetadata().getName()).contains(i.getSpec().policyRef.name);
        assertThat(i.getSpec().template.getSpec().getContainers()).isNotEmpty();
        String lease = i.getSpec().heartbeat != null && i.getSpec().heartbeat.leaseName != null
            ? i.getSpec().heartbeat.leaseName : i.getMetadata().getName();
        String account = i.getSpec().template.getSpec().getServiceAccountName();
        // the agent's ServiceAccount is bound to exactly one Role, and that Role grants only its own Lease
        List<String> bound = objects.stream().filter(RoleBinding.class::isInstance).map(RoleBinding.class::cast)
            .filter(b -> b.getSubjects().stream().anyMatch(sub -> account.equals(sub.getName())))
            .map(b -> b.getRoleRef().getName()).toList();
        assertThat(objects).filteredOn(Role.class::isInstance).map(Role.class::cast)
            .filteredOn(r -> bound.contains(r.getMetadata().getName())).singleElement()
            .satisfies(r -> assertThat(r.getRules()).singleElement().satisfies(rule -> {
              assertThat(rule.getResources()).containsExactly("leases");
              assertThat(rule.getResourceNames()).containsExactly(lease);
              assertThat(rule.getVerbs()).containsExactlyInAnyOrder("get", "update", "patch");
            }));
        assertThat(objects).anySatisfy(o2 -> {
          assertThat(o2.getKind()).isEqualTo("ServiceAccount");
          assertThat(o2.getMetadata().getName()).isEqualTo(account);
        });
      }
    }
  }

  /**
   * kubectl apply creates a file's objects in their order, and a pod whose ServiceAccount does not exist
   * yet is refused by admission: an instance comes after its policy, its ServiceAccount and the Role
   * and RoleBinding that let it renew its Lease, so its first pod starts with them in place.
   */
  @ParameterizedTest
  @MethodSource("examples")
  void everythingAnInstanceNeedsComesBeforeItInTheFile(Path file) throws IOException {
    List<HasMetadata> objects = load(file);
    for (int i = 0; i < objects.size(); i++) {
      if (objects.get(i) instanceof AgentInstance instance) {
        String account = instance.getSpec().template.getSpec().getServiceAccountName();
        List<HasMetadata> before = objects.subList(0, i);
        assertThat(before).as("%s: before instance %s", file, instance.getMetadata().getName())
            .anySatisfy(o -> assertThat(o).isInstanceOf(AgentRestartPolicy.class)
                .extracting(x -> x.getMetadata().getName()).isEqualTo(instance.getSpec().policyRef.name))
            .anySatisfy(o -> {
              assertThat(o.getKind()).isEqualTo("ServiceAccount");
              assertThat(o.getMetadata().getName()).isEqualTo(account);
            })
            .anySatisfy(o -> assertThat(o).isInstanceOfSatisfying(RoleBinding.class, b ->
                assertThat(b.getSubjects()).anySatisfy(sub -> assertThat(sub.getName()).isEqualTo(account))));
        List<String> bound = before.stream().filter(RoleBinding.class::isInstance).map(RoleBinding.class::cast)
            .filter(b -> b.getSubjects().stream().anyMatch(sub -> account.equals(sub.getName())))
            .map(b -> b.getRoleRef().getName()).toList();
        assertThat(before).as("%s: the Role bound to %s comes before instance %s", file, account,
                instance.getMetadata().getName())
            .anySatisfy(o -> assertThat(o).isInstanceOfSatisfying(Role.class,
                r -> assertThat(bound).contains(r.getMetadata().getName())));
      }
    }
  }
}

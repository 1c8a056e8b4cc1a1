package dev.respawn.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The CRDs the kustomize base and the Helm chart install are byte-for-byte copies of {@code crds/} (which
 * CrdFreshnessTest compares with the build's output): kustomize reads no file outside its base, and Helm
 * none outside its chart, so {@code make crds} writes all three.
 */
class DeployCrdsTest {
  static final Path CRDS = DeployManifests.BASEDIR.resolve("crds");
  static final String FIX = "Run `make crds` (it copies crds/*.yaml into deploy/crds/ and deploy/helm/respawn/crds/).";

  static Set<String> yamlFiles(Path dir) throws IOException {
    if (!Files.isDirectory(dir)) {
      return Set.of();
    }
    try (Stream<Path> files = Files.list(dir)) {
      return files.filter(Files::isRegularFile).map(p -> p.getFileName().toString())
          .filter(n -> n.endsWith(".yaml") || n.endsWith(".yml")).collect(Collectors.toCollection(TreeSet::new));
    }
  }

  @ParameterizedTest(name = "{0} holds exactly crds/")
  @ValueSource(strings = {"deploy/crds", "deploy/helm/respawn/crds"})
  void copyEqualsCrds(String copy) throws IOException {
    Path dir = DeployManifests.BASEDIR.resolve(copy);
    Set<String> expected = yamlFiles(CRDS);
    assertThat(expected).as("crds/ has CRDs").isNotEmpty();
    assertThat(yamlFiles(dir)).as("the CRD files in %s. %s", copy, FIX).isEqualTo(expected);
    for (String file : expected) {
      assertThat(Files.readAllBytes(dir.resolve(file)))
          .as("%s/%s differs from crds/%s. %s", copy, file, file, FIX)
          .isEqualTo(Files.readAllBytes(CRDS.resolve(file)));
    }
  }

  @Test
  void kustomizationListsEveryCrd() throws IOException {
    Set<String> listed = DeployManifests.resourceFiles(DeployManifests.DEPLOY).stream()
        .filter(p -> p.getParent().getFileName().toString().equals("crds"))
        .map(p -> p.getFileName().toString()).collect(Collectors.toCollection(TreeSet::new));
    assertThat(listed).as("crds/ files listed in deploy/kustomization.yaml").isEqualTo(yamlFiles(CRDS));
  }
}

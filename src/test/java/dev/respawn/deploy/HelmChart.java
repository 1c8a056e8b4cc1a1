package dev.respawn.deploy;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import com.marcnuri.helm.TemplateCommand;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * The chart of {@code deploy/helm/respawn} run through the real helm: helm-java loads helm's Go code as a
 * native library (from its platform artifact on the test classpath) and calls its template and lint actions
 * in this JVM, so no helm binary needs to be installed. Errors come back as helm's own messages.
 */
final class HelmChart {
  static final Path CHART = DeployManifests.DEPLOY.resolve("helm/respawn");
  /** The release whose object names are the kustomize base's ({@code respawn-operator...}). */
  static final String RELEASE = "respawn-operator";
  static final String NAMESPACE = DeployManifests.OPERATOR_NAMESPACE;
  /**
   * The Kubernetes version helm renders for: the chart's minimum (Chart.yaml kubeVersion). Without it the
   * library's helm assumes v1.20.0 (the helm command has a newer default built in) and refuses the chart.
   */
  static final String KUBE_VERSION = "v1.30.0";

  private HelmChart() {}

  /**
   * {@code helm template RELEASE CHART -n NAMESPACE --kube-version KUBE_VERSION -f VALUES}: the rendered
   * manifest (no CRDs: helm renders those of {@code crds/} only when asked to include them).
   *
   * @param valuesYaml overrides, as a values file; empty for the chart's defaults
   * @throws IllegalStateException with helm's error (a schema violation, a failed template)
   */
  static String template(String valuesYaml) {
    return template(CHART, valuesYaml, KUBE_VERSION);
  }

  static String template(Path chart, String valuesYaml, String kubeVersion) {
    Path values = null;
    try {
      TemplateCommand template = new Helm(chart).template().withName(RELEASE).withNamespace(NAMESPACE)
          .withKubeVersion(kubeVersion);
      if (!valuesYaml.isBlank()) {
        values = Files.createTempFile("respawn-values", ".yaml");
        Files.writeString(values, valuesYaml, StandardCharsets.UTF_8);
        template.withValuesFile(values);
      }
      return template.call();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } finally {
      delete(values);
    }
  }

  /** The objects {@link #template(String)} renders, typed (fabric8's model), in helm's order. */
  static List<HasMetadata> render(String valuesYaml) {
    return objects(template(valuesYaml));
  }

  static List<HasMetadata> objects(String manifest) {
    Object parsed = Serialization.unmarshal(new ByteArrayInputStream(manifest.getBytes(StandardCharsets.UTF_8)));
    List<HasMetadata> out = new ArrayList<>();
    if (parsed instanceof List<?> list) {
      list.stream().filter(o -> o != null).forEach(o -> out.add((HasMetadata) o));
    } else if (parsed != null) {
      out.add((HasMetadata) parsed);
    }
    return out;
  }

  /** The message of the error helm gives for {@code helm template} with these values. */
  static String templateError(String valuesYaml) {
    try {
      String manifest = template(valuesYaml);
      throw new AssertionError("helm template accepted the values\n" + valuesYaml + "\nand rendered\n" + manifest);
    } catch (IllegalStateException e) {
      return e.getMessage();
    }
  }

  /** {@code helm lint --strict CHART} (warnings fail too). */
  static LintResult lintStrict(Path chart) {
    return new Helm(chart).lint().strict().call();
  }

  /** The objects of one kind, in helm's order. */
  static <T extends HasMetadata> List<T> ofKind(List<HasMetadata> objects, String kind, Class<T> type) {
    return objects.stream().filter(o -> o.getKind().equals(kind)).map(type::cast).toList();
  }

  /** A copy of the chart in {@code target}, to lint a broken variant of it. */
  static Path copy(Path target) {
    try (Stream<Path> files = Files.walk(CHART)) {
      for (Path f : files.toList()) {
        Path to = target.resolve(CHART.relativize(f).toString());
        if (Files.isDirectory(f)) {
          Files.createDirectories(to);
        } else {
          Files.copy(f, to);
        }
      }
      return target;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void delete(Path file) {
    if (file != null) {
      try {
        Files.deleteIfExists(file);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }
}

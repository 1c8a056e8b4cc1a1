package dev.respawn.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * The Helm chart as the real helm sees it ({@link HelmChart}): {@code helm lint --strict} passes and fails
 * where it must, {@code helm template} renders well-formed objects and no CRD, for Kubernetes from the
 * chart's minimum version on. Two checks read the templates as text, because helm cannot make them: a
 * {@code .Values.x} that values.yaml lacks renders as empty, and a value no template reads is silently unused.
 */
class HelmChartTest {
  static final Pattern VALUES_REF = Pattern.compile("\\.Values((?:\\.[A-Za-z_][A-Za-z0-9_]*)+)");
  /** Every optional object on: the whole chart renders. */
  static final String EVERYTHING_ON = """
      metrics:
        serviceMonitor: {enabled: true}
        prometheusRule: {enabled: true}
      """;

  @Test
  void theRealHelmRuns() {
    assertThat(Helm.version().call()).matches("v3\\.\\d+\\.\\d+.*");
  }

  @Test
  void helmLintStrictPassesWithNothingButInformation() {
    LintResult lint = HelmChart.lintStrict(HelmChart.CHART);
    assertThat(lint.isFailed()).as("helm lint --strict: %s", lint.getMessages()).isFalse();
    assertThat(lint.getMessages()).as("helm lint --strict messages").allMatch(m -> m.startsWith("[INFO]"));
  }

  @Test
  void helmLintFailsOnABrokenTemplate(@TempDir Path tmp) throws IOException {
    Path chart = HelmChart.copy(tmp.resolve("respawn"));
    Files.writeString(chart.resolve("templates/broken.yaml"), "{{- if .Values.rbac.create }}\nkind: x\n",
        StandardCharsets.UTF_8);
    LintResult lint = HelmChart.lintStrict(chart);
    assertThat(lint.isFailed()).isTrue();
    assertThat(lint.getMessages()).anySatisfy(m -> assertThat(m).contains("broken.yaml", "unexpected EOF"));
  }

  @Test
  void rendersTheOperatorsObjectsAndNoCrdOrNamespace() {
    assertThat(HelmChart.render("")).extracting(HasMetadata::getKind).containsExactlyInAnyOrder("ServiceAccount",
        "ClusterRole", "ClusterRole", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "Service",
        "Deployment");
    assertThat(HelmChart.render(EVERYTHING_ON)).extracting(HasMetadata::getKind)
        .contains("ServiceMonitor", "PrometheusRule")
        .doesNotContain("CustomResourceDefinition", "Namespace");
  }

  @Test
  void everyRenderedObjectIsWellFormed() {
    List<String> unknown = new ArrayList<>();
    List<HasMetadata> rendered = HelmChart.render(EVERYTHING_ON);
    for (HasMetadata o : rendered) {
      assertThat(o.getMetadata().getName()).as("name of a %s", o.getKind()).isNotBlank();
      if (!(o instanceof GenericKubernetesResource)) { // the Prometheus Operator's kinds have no typed model here
        KustomizeBaseTest.unknownFields(o, o.getKind() + "/" + o.getMetadata().getName(), unknown);
      }
    }
    assertThat(rendered).filteredOn(o -> !(o instanceof GenericKubernetesResource)).hasSizeGreaterThan(5);
    assertThat(unknown).as("fields the Kubernetes API does not have").isEmpty();
  }

  @Test
  void refusesKubernetesOlderThanItsMinimum() {
    assertThat(HelmChart.template(HelmChart.CHART, "", "v1.30.0")).contains("kind: Deployment");
    // 1.29 and older: CEL optionalOldSelf (the AgentInstance CRD's name rules) is off there, the CRD refused
    assertThatThrownBy(() -> HelmChart.template(HelmChart.CHART, "", "v1.29.9"))
        .hasMessageContaining("chart requires kubeVersion: >=1.30.0-0");
  }

  static String read(Path p) {
    try {
      return Files.readString(p, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  static List<Path> templates() {
    try (Stream<Path> files = Files.list(HelmChart.CHART.resolve("templates"))) {
      return files.filter(Files::isRegularFile).sorted().toList();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  static JsonNode values() {
    return DeployManifests.yaml(HelmChart.CHART.resolve("values.yaml"));
  }

  @Test
  void everyValueReferenceExists() {
    List<String> missing = new ArrayList<>();
    for (Path template : templates()) {
      Matcher m = VALUES_REF.matcher(read(template));
      while (m.find()) {
        JsonNode node = values();
        for (String key : m.group(1).substring(1).split("\\.")) {
          node = node.path(key);
        }
        if (node.isMissingNode()) {
          missing.add(template.getFileName() + ": .Values" + m.group(1));
        }
      }
    }
    assertThat(missing).as("references to values that values.yaml does not define (helm renders them empty)")
        .isEmpty();
  }

  @Test
  void everyValueIsUsedByATemplate() {
    Set<String> refs = new TreeSet<>();
    templates().forEach(t -> VALUES_REF.matcher(read(t)).results().forEach(m -> refs.add(m.group(1).substring(1))));
    List<String> unused = leaves(values(), "").stream()
        .filter(leaf -> refs.stream().noneMatch(r -> leaf.equals(r) || leaf.startsWith(r + ".")))
        .toList();
    assertThat(unused).as("values no template uses (templates use %s)", refs).isEmpty();
  }

  /** Paths of scalars, lists and empty maps; non-empty maps are descended into. */
  static List<String> leaves(JsonNode node, String prefix) {
    List<String> out = new ArrayList<>();
    if (node.isObject() && node.size() > 0) {
      Iterator<Map.Entry<String, JsonNode>> it = node.fields();
      while (it.hasNext()) {
        Map.Entry<String, JsonNode> e = it.next();
        out.addAll(leaves(e.getValue(), prefix.isEmpty() ? e.getKey() : prefix + "." + e.getKey()));
      }
    } else {
      out.add(prefix);
    }
    return out;
  }

  @Test
  void theSchemaKnowsTheOperatorsTiers() throws IOException {
    JsonNode schema = new ObjectMapper().readTree(HelmChart.CHART.resolve("values.schema.json").toFile());
    assertThat(schema.path("properties").path("tier").path("enum")).extracting(JsonNode::asText)
        .containsExactlyElementsOf(Stream.of(dev.respawn.policy.Tier.values()).map(Enum::name).toList());
  }

  @Test
  void chartKustomizeAndJibAgreeOnTheImage() throws Exception {
    String appVersion = DeployManifests.yaml(HelmChart.CHART.resolve("Chart.yaml")).path("appVersion").asText();
    Deployment rendered = HelmChart.ofKind(HelmChart.render(""), "Deployment", Deployment.class).get(0);
    String image = rendered.getSpec().getTemplate().getSpec().getContainers().get(0).getImage();
    assertThat(image).isEqualTo(values().path("image").path("repository").asText() + ":" + appVersion);
    Deployment base = DeployManifests.ofType(DeployManifests.objects(DeployManifests.DEPLOY), Deployment.class).get(0);
    assertThat(base.getSpec().getTemplate().getSpec().getContainers().get(0).getImage()).isEqualTo(image);
    JsonNode kustomization = DeployManifests.yaml(DeployManifests.DEPLOY.resolve("kustomization.yaml"));
    assertThat(kustomization.path("images")).anySatisfy(i -> {
      assertThat(i.path("name").asText() + ":" + i.path("newTag").asText()).isEqualTo(image);
    });
    assertThat(jibImage()).isEqualTo(image);
  }

  /** The image Jib builds by default (pom.xml, jib-maven-plugin, configuration/to/image). */
  static String jibImage() throws Exception {
    var factory = DocumentBuilderFactory.newInstance();
    factory.setNamespaceAware(false);
    var pom = factory.newDocumentBuilder().parse(DeployManifests.BASEDIR.resolve("pom.xml").toFile());
    NodeList plugins = pom.getElementsByTagName("plugin");
    for (int i = 0; i < plugins.getLength(); i++) {
      Element plugin = (Element) plugins.item(i);
      if (plugin.getElementsByTagName("artifactId").item(0).getTextContent().equals("jib-maven-plugin")) {
        Element to = (Element) plugin.getElementsByTagName("to").item(0);
        return to.getElementsByTagName("image").item(0).getTextContent().trim();
      }
    }
    throw new AssertionError("pom.xml has no jib-maven-plugin");
  }
}

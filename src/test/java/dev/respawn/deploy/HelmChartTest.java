package dev.respawn.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.client.utils.Serialization;
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
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * The Helm chart, checked without a helm binary: values.yaml parses, every {@code .Values.x.y} a template
 * uses exists in it (and every value is used), values.schema.json describes every value, the template
 * delimiters and blocks balance, and the chart grants, deploys and pins what the kustomize base does.
 */
class HelmChartTest {
  static final Path CHART = DeployManifests.DEPLOY.resolve("helm/respawn");
  static final Pattern VALUES_REF = Pattern.compile("\\.Values((?:\\.[A-Za-z_][A-Za-z0-9_]*)+)");
  static final Pattern BLOCK_OPEN = Pattern.compile("\\{\\{-?\\s*(if|with|range|define|block)\\b");
  static final Pattern BLOCK_END = Pattern.compile("\\{\\{-?\\s*end\\s*-?}}");

  static Stream<Path> templates() {
    try (Stream<Path> files = Files.list(CHART.resolve("templates"))) {
      return files.filter(Files::isRegularFile).sorted().toList().stream();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  static String read(Path p) {
    try {
      return Files.readString(p, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  static JsonNode values() {
    return DeployManifests.yaml(CHART.resolve("values.yaml"));
  }

  static Set<String> references() {
    Set<String> refs = new TreeSet<>();
    try (Stream<Path> t = templates()) {
      t.forEach(p -> {
        Matcher m = VALUES_REF.matcher(read(p));
        while (m.find()) {
          refs.add(m.group(1).substring(1));
        }
      });
    }
    return refs;
  }

  @Test
  void chartAndValuesParse() {
    JsonNode chart = DeployManifests.yaml(CHART.resolve("Chart.yaml"));
    assertThat(chart.path("apiVersion").asText()).isEqualTo("v2");
    assertThat(chart.path("name").asText()).isEqualTo("respawn");
    assertThat(chart.path("version").asText()).matches("\\d+\\.\\d+\\.\\d+.*");
    assertThat(chart.path("appVersion").asText()).isNotBlank();
    assertThat(values().isObject()).as("values.yaml is a map").isTrue();
    assertThat(values().size()).isPositive();
  }

  @ParameterizedTest(name = "{0}: every .Values reference exists in values.yaml")
  @MethodSource("templates")
  void everyValueReferenceExists(Path template) {
    JsonNode values = values();
    Matcher m = VALUES_REF.matcher(read(template));
    List<String> missing = new ArrayList<>();
    while (m.find()) {
      String path = m.group(1).substring(1);
      JsonNode node = values;
      for (String key : path.split("\\.")) {
        node = node == null || !node.isObject() || !node.has(key) ? null : node.get(key);
      }
      if (node == null) {
        missing.add(".Values." + path);
      }
    }
    assertThat(missing).as("references in %s to values that values.yaml does not define", template.getFileName())
        .isEmpty();
  }

  @Test
  void everyValueIsUsedByATemplate() {
    Set<String> refs = references();
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
  void schemaDescribesEveryValue() throws IOException {
    JsonNode schema = new ObjectMapper().readTree(CHART.resolve("values.schema.json").toFile());
    List<String> undescribed = new ArrayList<>();
    describe(values(), schema, "", undescribed);
    assertThat(undescribed).as("values missing from values.schema.json").isEmpty();
    assertThat(schema.path("properties").path("tier").path("enum")).extracting(JsonNode::asText)
        .containsExactlyElementsOf(Stream.of(dev.respawn.policy.Tier.values()).map(Enum::name).toList());
  }

  private static void describe(JsonNode value, JsonNode schema, String path, List<String> undescribed) {
    if (!value.isObject() || !schema.has("properties")) {
      return;
    }
    Iterator<Map.Entry<String, JsonNode>> it = value.fields();
    while (it.hasNext()) {
      Map.Entry<String, JsonNode> e = it.next();
      String p = path.isEmpty() ? e.getKey() : path + "." + e.getKey();
      if (!schema.path("properties").has(e.getKey())) {
        undescribed.add(p);
      } else {
        describe(e.getValue(), schema.path("properties").path(e.getKey()), p, undescribed);
      }
    }
  }

  @ParameterizedTest(name = "{0}: delimiters and blocks balance")
  @MethodSource("templates")
  void templateDelimitersAndBlocksBalance(Path template) {
    String text = read(template);
    assertThat(count(text, Pattern.compile("\\{\\{"))).as("{{ vs }} in %s", template.getFileName())
        .isEqualTo(count(text, Pattern.compile("}}")));
    assertThat(count(text, BLOCK_OPEN)).as("if/with/range/define vs end in %s", template.getFileName())
        .isEqualTo(count(text, BLOCK_END));
  }

  private static long count(String text, Pattern p) {
    return p.matcher(text).results().count();
  }

  /** A template with its directive lines dropped: what it renders with the default values, names aside. */
  static List<HasMetadata> untemplated(String file) {
    String text = read(CHART.resolve("templates").resolve(file)).lines().filter(l -> !l.contains("{{"))
        .collect(Collectors.joining("\n"));
    Object parsed = Serialization.unmarshal(text);
    return parsed instanceof List<?> l ? l.stream().map(HasMetadata.class::cast).toList()
        : List.of((HasMetadata) parsed);
  }

  @Test
  void theChartGrantsExactlyWhatTheKustomizeBaseGrants() {
    List<HasMetadata> base = DeployManifests.objects(DeployManifests.DEPLOY);
    ClusterRole chartRole = DeployManifests.ofType(untemplated("clusterrole.yaml"), ClusterRole.class).get(0);
    ClusterRole baseRole = DeployManifests.ofType(base, ClusterRole.class).get(0);
    assertThat(chartRole.getRules()).isEqualTo(baseRole.getRules());
    Role chartLeader = DeployManifests.ofType(untemplated("leader-election-role.yaml"), Role.class).get(0);
    Role baseLeader = DeployManifests.ofType(base, Role.class).get(0);
    assertThat(chartLeader.getRules()).isEqualTo(baseLeader.getRules());
  }

  @Test
  void noCrdIsTemplated() {
    assertThat(templates()).allSatisfy(t -> assertThat(read(t)).doesNotContain("kind: CustomResourceDefinition"));
  }

  @Test
  void chartKustomizeAndJibAgreeOnTheImage() throws Exception {
    String appVersion = DeployManifests.yaml(CHART.resolve("Chart.yaml")).path("appVersion").asText();
    String repository = values().path("image").path("repository").asText();
    Deployment d = DeployManifests.ofType(DeployManifests.objects(DeployManifests.DEPLOY), Deployment.class).get(0);
    String baseImage = d.getSpec().getTemplate().getSpec().getContainers().get(0).getImage();
    assertThat(baseImage).isEqualTo(repository + ":" + appVersion);
    JsonNode kustomization = DeployManifests.yaml(DeployManifests.DEPLOY.resolve("kustomization.yaml"));
    assertThat(kustomization.path("images")).anySatisfy(i -> {
      assertThat(i.path("name").asText()).isEqualTo(repository);
      assertThat(i.path("newTag").asText()).isEqualTo(appVersion);
    });
    assertThat(jibImage()).isEqualTo(repository + ":" + appVersion);
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

package dev.respawn.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * {@code helm template} of the chart with its default values renders the kustomize base's objects, field for
 * field (so what RbacTest proves of the base's RBAC holds for the chart's), and with the monitoring values
 * on, the objects of {@code deploy/monitoring/} too. The release is {@value HelmChart#RELEASE} in
 * {@value DeployManifests#OPERATOR_NAMESPACE}, whose object names are the base's; nothing is renamed.
 *
 * <p>The only normalisation: the three labels Helm's conventions put on a release's objects,
 * {@link #HELM_LABELS}, are removed from the rendered objects wherever they occur with their expected value:
 * the objects' labels, the pod template's labels, and the selectors (Deployment, Service, ServiceMonitor),
 * where {@code app.kubernetes.io/instance} keeps two releases' pods apart. Objects helm does not render are
 * left out of the base: the Namespace ({@code helm install --create-namespace}) and the CRDs (helm installs
 * those of the chart's {@code crds/}, which DeployCrdsTest keeps equal to the base's).
 */
class HelmMatchesKustomizeTest {
  static final String CHART_VERSION =
      DeployManifests.yaml(HelmChart.CHART.resolve("Chart.yaml")).path("version").asText();
  static final Map<String, String> HELM_LABELS = Map.of(
      "helm.sh/chart", "respawn-" + CHART_VERSION,
      "app.kubernetes.io/managed-by", "Helm",
      "app.kubernetes.io/instance", HelmChart.RELEASE);
  static final Set<String> NOT_RENDERED = Set.of("Namespace", "CustomResourceDefinition");
  static final String MONITORING_ON = """
      metrics:
        serviceMonitor: {enabled: true, labels: {release: prometheus}}
        prometheusRule: {enabled: true, labels: {release: prometheus}}
      """;
  private static final ObjectMapper SORTED_YAML = new ObjectMapper(YAMLFactory.builder()
      .disable(YAMLGenerator.Feature.SPLIT_LINES).enable(YAMLGenerator.Feature.MINIMIZE_QUOTES).build())
      .enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS);

  @Test
  void theChartRendersTheKustomizeBase() {
    List<HasMetadata> base = DeployManifests.objects(DeployManifests.DEPLOY).stream()
        .filter(o -> !NOT_RENDERED.contains(o.getKind())).toList();
    assertSameObjects(HelmChart.render(""), base);
  }

  @Test
  void withMonitoringOnTheChartAlsoRendersTheMonitoringKustomization() {
    List<HasMetadata> monitoring = HelmChart.render(MONITORING_ON).stream()
        .filter(o -> Set.of("ServiceMonitor", "PrometheusRule").contains(o.getKind())).toList();
    assertSameObjects(monitoring, DeployManifests.objects(DeployManifests.DEPLOY.resolve("monitoring")));
  }

  @Test
  void helmsLabelsAreOnEveryObjectAndTheInstanceInEverySelector() {
    List<HasMetadata> rendered = HelmChart.render(MONITORING_ON);
    assertThat(rendered).isNotEmpty().allSatisfy(o -> assertThat(o.getMetadata().getLabels())
        .as("labels of %s %s", o.getKind(), o.getMetadata().getName()).containsAllEntriesOf(HELM_LABELS));
    Map<String, String> instance = Map.of("app.kubernetes.io/instance", HelmChart.RELEASE);
    Deployment d = HelmChart.ofKind(rendered, "Deployment", Deployment.class).get(0);
    assertThat(d.getSpec().getSelector().getMatchLabels()).containsAllEntriesOf(instance);
    assertThat(d.getSpec().getTemplate().getMetadata().getLabels()).containsAllEntriesOf(HELM_LABELS);
    assertThat(HelmChart.ofKind(rendered, "Service", Service.class).get(0).getSpec().getSelector())
        .containsAllEntriesOf(instance);
    JsonNode monitor = tree(rendered.stream().filter(o -> o.getKind().equals("ServiceMonitor")).findFirst()
        .orElseThrow());
    assertThat(monitor.path("spec").path("selector").path("matchLabels").path("app.kubernetes.io/instance")
        .asText()).isEqualTo(HelmChart.RELEASE);
  }

  @Test
  void theNormalisationRemovesOnlyHelmsLabelsWithTheirValues() {
    ObjectNode labels = Serialization.jsonMapper().createObjectNode()
        .put("helm.sh/chart", "respawn-" + CHART_VERSION).put("app.kubernetes.io/managed-by", "Helm")
        .put("app.kubernetes.io/instance", "another-release").put("app.kubernetes.io/name", "respawn");
    ObjectNode object = Serialization.jsonMapper().createObjectNode();
    object.putObject("metadata").set("labels", labels);
    withoutHelmLabels(object);
    assertThat(object.path("metadata").path("labels").properties()).extracting(Map.Entry::getKey)
        .containsExactlyInAnyOrder("app.kubernetes.io/instance", "app.kubernetes.io/name");
  }

  /** Same objects by kind, namespace and name, each equal field for field once Helm's labels are removed. */
  static void assertSameObjects(List<HasMetadata> rendered, List<HasMetadata> base) {
    Map<String, String> chart = canonical(rendered, true);
    Map<String, String> expected = canonical(base, false);
    assertThat(chart.keySet()).as("the objects helm renders").isEqualTo(expected.keySet());
    chart.forEach((key, yaml) -> assertThat(yaml).as("%s as helm renders it (Helm's labels removed)", key)
        .isEqualTo(expected.get(key)));
  }

  /** Each object as YAML with sorted keys, by "Kind namespace/name". */
  static Map<String, String> canonical(List<HasMetadata> objects, boolean rendered) {
    Map<String, String> out = new TreeMap<>();
    for (HasMetadata o : objects) {
      JsonNode tree = tree(o);
      if (rendered) {
        withoutHelmLabels(tree);
      }
      String key = o.getKind() + " " + (o.getMetadata().getNamespace() == null ? ""
          : o.getMetadata().getNamespace() + "/") + o.getMetadata().getName();
      try {
        String yaml = SORTED_YAML.writeValueAsString(SORTED_YAML.convertValue(tree, Object.class));
        assertThat(out.put(key, yaml)).as("two objects named %s", key).isNull();
      } catch (JsonProcessingException e) {
        throw new UncheckedIOException(e);
      }
    }
    return out;
  }

  static JsonNode tree(HasMetadata o) {
    return Serialization.jsonMapper().valueToTree(o);
  }

  /** Removes each of {@link #HELM_LABELS} from every map of the tree that has it with its expected value. */
  static void withoutHelmLabels(JsonNode node) {
    if (node instanceof ObjectNode object) {
      HELM_LABELS.forEach((label, value) -> {
        if (value.equals(object.path(label).asText(null))) {
          object.remove(label);
        }
      });
    }
    node.forEach(HelmMatchesKustomizeTest::withoutHelmLabels);
  }
}

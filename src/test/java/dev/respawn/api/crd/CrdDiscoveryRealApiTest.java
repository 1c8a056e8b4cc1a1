package dev.respawn.api.crd;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import java.util.HashMap;
import java.util.Map;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The CRDs as the API server serves them: Established, their names accepted, listed by discovery. */
class CrdDiscoveryRealApiTest extends RealApiServerFixture {
  @ParameterizedTest(name = "{0} is Established and its names accepted")
  @ValueSource(strings = {"agentrestartpolicies.respawn.dev", "agentinstances.respawn.dev"})
  void crdAccepted(String name) {
    assertThat(condition(name, "Established")).as("%s Established", name).isEqualTo("True");
    assertThat(condition(name, "NamesAccepted")).as("%s NamesAccepted", name).isEqualTo("True");
    CustomResourceDefinition crd = client.apiextensions().v1().customResourceDefinitions().withName(name).get();
    assertThat(crd.getStatus().getAcceptedNames().getCategories()).containsExactly("respawn");
    assertThat(crd.getStatus().getAcceptedNames().getShortNames())
        .containsExactly(name.startsWith("agentinstances") ? "agi" : "arp");
  }

  @Test
  void discoveryListsShortNamesCategoriesAndStatusSubresource() throws Exception {
    JsonNode list = httpGet("/apis/" + GROUP + "/" + VERSION, "application/json");
    Map<String, JsonNode> resources = new HashMap<>();
    list.path("resources").forEach(r -> resources.put(r.path("name").asText(), r));
    assertThat(resources).containsKeys("agentrestartpolicies", "agentinstances",
        "agentrestartpolicies/status", "agentinstances/status");
    SoftAssertions soft = new SoftAssertions();
    for (String[] expected : new String[][] {{"agentrestartpolicies", "arp", POLICY}, {"agentinstances", "agi", INSTANCE}}) {
      JsonNode resource = resources.get(expected[0]);
      soft.assertThat(resource.path("namespaced").asBoolean()).as("%s namespaced", expected[0]).isTrue();
      soft.assertThat(resource.path("kind").asText()).as("%s kind", expected[0]).isEqualTo(expected[2]);
      soft.assertThat(resource.path("shortNames").toString()).as("%s shortNames", expected[0])
          .isEqualTo("[\"" + expected[1] + "\"]");
      soft.assertThat(resource.path("categories").toString()).as("%s categories", expected[0])
          .isEqualTo("[\"respawn\"]");
    }
    soft.assertAll();
  }
}

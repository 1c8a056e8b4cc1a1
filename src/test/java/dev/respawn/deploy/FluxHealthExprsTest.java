package dev.respawn.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.cel.common.types.SimpleType;
import dev.cel.compiler.CelCompiler;
import dev.cel.compiler.CelCompilerFactory;
import dev.cel.parser.CelStandardMacro;
import dev.cel.runtime.CelRuntime;
import dev.cel.runtime.CelRuntimeFactory;
import dev.respawn.api.v1alpha1.Phase;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The Flux health expressions of deploy/flux/kustomization-health.yaml, evaluated by CEL (Google's Java
 * implementation, as Flux evaluates them with cel-go) on objects as the operator writes them: exactly one of
 * current, failed and inProgress holds, and it is the one of the table in the file (the Argo CD health check's).
 */
class FluxHealthExprsTest {
  static final ObjectMapper JSON = new ObjectMapper();
  static final CelCompiler COMPILER = CelCompilerFactory.standardCelCompilerBuilder()
      .setStandardMacros(CelStandardMacro.STANDARD_MACROS) // has(), exists(), as in cel-go's standard environment
      .addVar("apiVersion", SimpleType.DYN).addVar("kind", SimpleType.DYN).addVar("metadata", SimpleType.DYN)
      .addVar("spec", SimpleType.DYN).addVar("status", SimpleType.DYN).build();
  static final CelRuntime RUNTIME = CelRuntimeFactory.standardCelRuntimeBuilder().build();

  enum Health { Current, Failed, InProgress }

  static JsonNode check(String kind) throws IOException {
    JsonNode kustomization = new YAMLMapper().readTree(
        DeployManifests.DEPLOY.resolve("flux/kustomization-health.yaml").toFile());
    for (JsonNode c : kustomization.path("spec").path("healthCheckExprs")) {
      if (kind.equals(c.path("kind").asText())) {
        assertThat(c.path("apiVersion").asText()).isEqualTo("respawn.dev/v1alpha1");
        return c;
      }
    }
    throw new AssertionError("no healthCheckExprs entry for " + kind);
  }

  /** Which of the three expressions hold for the object (JSON), each evaluated as Flux does, on the object. */
  static Set<Health> holding(String kind, String objectJson) throws Exception {
    JsonNode exprs = check(kind);
    Map<String, Object> object = cel(JSON.readTree(objectJson));
    Set<Health> holds = EnumSet.noneOf(Health.class);
    for (Health h : Health.values()) {
      String field = h == Health.InProgress ? "inProgress" : h.name().toLowerCase();
      String expression = exprs.path(field).asText();
      assertThat(expression).as("%s %s", kind, field).isNotBlank();
      CelRuntime.Program program = RUNTIME.createProgram(COMPILER.compile(expression).getAst());
      if (Boolean.TRUE.equals(program.eval(object))) {
        holds.add(h);
      }
    }
    return holds;
  }

  /** JSON as CEL's runtime takes it: maps, lists, strings, booleans, and integers as longs. */
  @SuppressWarnings("unchecked")
  static <T> T cel(JsonNode node) {
    if (node.isObject()) {
      Map<String, Object> map = new LinkedHashMap<>();
      node.fields().forEachRemaining(e -> map.put(e.getKey(), cel(e.getValue())));
      return (T) map;
    }
    if (node.isArray()) {
      List<Object> list = new ArrayList<>();
      node.forEach(n -> list.add(cel(n)));
      return (T) list;
    }
    if (node.isIntegralNumber()) {
      return (T) Long.valueOf(node.asLong());
    }
    return node.isBoolean() ? (T) Boolean.valueOf(node.asBoolean()) : (T) node.asText();
  }

  static String instance(long generation, long observed, String phase, String... conditions) {
    String conds = Arrays.stream(conditions).map(c -> c.split("=")).map(c -> "{\"type\":\"" + c[0]
        + "\",\"status\":\"" + c[1] + "\",\"reason\":\"R\"}").collect(Collectors.joining(",", "[", "]"));
    return "{\"apiVersion\":\"respawn.dev/v1alpha1\",\"kind\":\"AgentInstance\",\"metadata\":{\"name\":\"coder\","
        + "\"generation\":" + generation + "},\"spec\":{},\"status\":{\"observedGeneration\":" + observed
        + ",\"phase\":\"" + phase + "\",\"conditions\":" + conds + "}}";
  }

  @ParameterizedTest(name = "{0}, Ready={1}: {2}")
  @CsvSource({
      "Running,    True,  Current",
      "Running,    False, InProgress",
      "Pending,    False, InProgress",
      "Starting,   False, InProgress",
      "Backoff,    False, InProgress",
      "CircuitOpen,False, InProgress",
      "Escalated,  False, Failed",
      "Failed,     False, Failed",
      "Succeeded,  False, Current",
      "Suspended,  False, Current"})
  void anObservedInstanceIsJudgedByItsPhaseAndReady(Phase phase, String ready, Health expected) throws Exception {
    assertThat(holding("AgentInstance", instance(2, 2, phase.name(), "Ready=" + ready, "Recovering=False",
        "Escalated=" + (expected == Health.Failed)))).containsExactly(expected);
  }

  @Test
  void everyPhaseIsJudgedAndOnlyOnce() throws Exception {
    for (Phase phase : Phase.values()) {
      for (String ready : List.of("True", "False")) {
        assertThat(holding("AgentInstance", instance(1, 1, phase.name(), "Ready=" + ready))).as("%s %s", phase, ready)
            .hasSize(1);
      }
    }
  }

  @Test
  void anEditTheOperatorHasNotObservedYetIsInProgressWhateverThePhase() throws Exception {
    for (String phase : List.of("Running", "Escalated", "Succeeded")) {
      assertThat(holding("AgentInstance", instance(3, 2, phase, "Ready=True"))).as(phase)
          .containsExactly(Health.InProgress);
    }
  }

  @Test
  void aRunningInstanceWithoutConditionsIsNotCurrent() throws Exception {
    String none = "{\"metadata\":{\"generation\":1},\"spec\":{},\"status\":{\"observedGeneration\":1,"
        + "\"phase\":\"Running\"}}";
    assertThat(holding("AgentInstance", none)).containsExactly(Health.InProgress);
  }

  @ParameterizedTest(name = "policy Accepted={0}, observed {1} of 2: {2}")
  @CsvSource({"True, 2, Current", "False, 2, Failed", "True, 1, InProgress", "Unknown, 2, InProgress"})
  void aPolicyIsJudgedByAccepted(String accepted, long observed, Health expected) throws Exception {
    String policy = "{\"apiVersion\":\"respawn.dev/v1alpha1\",\"kind\":\"AgentRestartPolicy\",\"metadata\":"
        + "{\"generation\":2},\"spec\":{},\"status\":{\"observedGeneration\":" + observed + ",\"conditions\":"
        + "[{\"type\":\"Accepted\",\"status\":\"" + accepted + "\",\"reason\":\"Valid\"}],\"instances\":3}}";
    assertThat(holding("AgentRestartPolicy", policy)).containsExactly(expected);
  }
}

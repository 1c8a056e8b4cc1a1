package dev.respawn.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The Grafana dashboard and the PrometheusRules (kustomize, and Helm's as helm renders it) query only metrics the operator
 * really exposes: the names come from scraping the PrometheusMeterRegistry of an operator that ran
 * {@link OperatorScenario} (RestartMetrics' meters and JOSDK's reconcile meters, a failed reconcile
 * included), so a renamed meter or a typo in a query fails here rather than in an empty panel.
 */
class MonitoringAssetsTest {
  static final Path DASHBOARD = DeployManifests.DEPLOY.resolve("grafana/respawn-dashboard.json");
  static final Path RULES = DeployManifests.DEPLOY.resolve("monitoring/prometheusrule.yaml");
  /** Series Prometheus makes itself. */
  static final Set<String> PROMETHEUS_SERIES = Set.of("up");
  static final Set<String> PROMQL_KEYWORDS = Set.of("by", "without", "on", "ignoring", "group_left", "group_right",
      "and", "or", "unless", "bool", "offset", "inf", "nan");
  static final Pattern IDENTIFIER = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*");

  static Set<String> exposed;
  static String scrape;

  @BeforeAll
  static void scrapeARunningOperator() {
    try (OperatorScenario s = new OperatorScenario(
        DeployManifests.operatorGrants(DeployManifests.objects(DeployManifests.DEPLOY))).run()) {
      scrape = s.registry.scrape();
    }
    exposed = new TreeSet<>();
    scrape.lines().filter(l -> !l.startsWith("#") && !l.isBlank()).forEach(l -> {
      Matcher m = IDENTIFIER.matcher(l);
      if (m.lookingAt()) {
        exposed.add(m.group());
      }
    });
  }

  /** Metric names of a PromQL expression: identifiers that are not functions, keywords or label names. */
  static Set<String> metricNames(String expr) {
    String e = expr.replaceAll("\"(?:[^\"\\\\]|\\\\.)*\"", "\"\"")
        .replaceAll("\\{[^}]*}", " ")
        .replaceAll("\\[[^]]*]", " ")
        .replaceAll("\\b(by|without|on|ignoring|group_left|group_right)\\s*\\([^)]*\\)", " ")
        .replaceAll("\\$\\{?[A-Za-z_]+}?", " ");
    Set<String> names = new TreeSet<>();
    Matcher m = IDENTIFIER.matcher(e);
    while (m.find()) {
      boolean function = e.substring(m.end()).matches("(?s)\\s*\\(.*");
      boolean number = m.start() > 0 && Character.isDigit(e.charAt(m.start() - 1));
      if (!function && !number && !PROMQL_KEYWORDS.contains(m.group())) {
        names.add(m.group());
      }
    }
    return names;
  }

  static JsonNode dashboard() throws IOException {
    return new ObjectMapper().readTree(DASHBOARD.toFile());
  }

  /** Every PromQL expression of the dashboard, by where it is. */
  static Map<String, String> dashboardQueries(JsonNode d) {
    Map<String, String> out = new LinkedHashMap<>();
    for (JsonNode panel : d.path("panels")) {
      for (JsonNode target : panel.path("targets")) {
        out.put(panel.path("title").asText() + " / " + target.path("refId").asText(), target.path("expr").asText());
      }
    }
    for (JsonNode v : d.path("templating").path("list")) {
      String q = v.path("query").isObject() ? v.path("query").path("query").asText() : v.path("query").asText();
      Matcher m = Pattern.compile("label_values\\(\\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\\s*,").matcher(q);
      if (m.find()) {
        out.put("variable " + v.path("name").asText(), m.group(1));
      }
    }
    return out;
  }

  @Test
  void scrapeHasTheMetricsOfTheApiAndOfJosdk() {
    assertThat(exposed).contains("respawn_restart_attempts_total", "respawn_restart_delay_seconds",
        "respawn_restart_delay_seconds_count", "respawn_restart_exhausted_total", "respawn_circuit_breakers",
        "respawn_circuit_trips_total", "respawn_heartbeat_stale_total", "respawn_decision_duration_seconds",
        "respawn_events_dropped_total", "operator_sdk_reconciliations_started_total", "operator_sdk_controllers_execution_reconcile_failure_total");
  }

  @Test
  void dashboardParsesAndQueriesOnlyExposedMetrics() throws IOException {
    JsonNode d = dashboard();
    assertThat(d.path("uid").asText()).isNotBlank();
    assertThat(d.path("title").asText()).isNotBlank();
    assertThat(d.path("panels").size()).isPositive();
    Map<String, String> queries = dashboardQueries(d);
    assertThat(queries).isNotEmpty();
    List<String> unknown = new ArrayList<>();
    queries.forEach((where, expr) -> {
      Set<String> names = metricNames(expr);
      if (names.isEmpty()) {
        unknown.add(where + ": no metric in " + expr);
      }
      names.stream().filter(n -> !exposed.contains(n) && !PROMETHEUS_SERIES.contains(n))
          .forEach(n -> unknown.add(where + ": " + n));
    });
    assertThat(unknown).as("dashboard queries of metrics the operator does not expose (it exposes %s)", exposed)
        .isEmpty();
  }

  @Test
  void dashboardShowsEveryRespawnMetric() throws IOException {
    Set<String> used = new TreeSet<>();
    dashboardQueries(dashboard()).values().forEach(q -> used.addAll(metricNames(q)));
    Set<String> families = new TreeSet<>();
    scrape.lines().filter(l -> l.startsWith("# TYPE respawn_")).forEach(l -> families.add(l.split(" ")[2]));
    assertThat(families).isNotEmpty().allSatisfy(f -> assertThat(used).anyMatch(u -> u.startsWith(f)));
  }

  static Map<String, String> ruleExpressions(JsonNode rule) {
    Map<String, String> out = new LinkedHashMap<>();
    for (JsonNode group : rule.path("spec").path("groups")) {
      for (JsonNode r : group.path("rules")) {
        out.put(r.has("alert") ? r.path("alert").asText() : r.path("record").asText(), r.path("expr").asText());
      }
    }
    return out;
  }

  /** The chart's rules as helm renders them, with the PrometheusRule on. */
  static Map<String, String> helmRuleExpressions() {
    HasMetadata rule = HelmChart.render("metrics: {prometheusRule: {enabled: true}}").stream()
        .filter(o -> o.getKind().equals("PrometheusRule")).findFirst().orElseThrow();
    return ruleExpressions(Serialization.jsonMapper().valueToTree(rule));
  }

  @Test
  void alertsQueryOnlyExposedMetrics() {
    Map<String, String> kustomize = ruleExpressions(DeployManifests.yaml(RULES));
    Map<String, String> helm = helmRuleExpressions();
    assertThat(kustomize).containsKeys("RespawnOperatorDown", "RespawnCircuitBreakerOpen", "RespawnRestartsExhausted",
        "RespawnHeartbeatsStale");
    assertThat(helm.keySet()).as("the chart's alerts are those of deploy/monitoring").isEqualTo(kustomize.keySet());
    List<String> unknown = new ArrayList<>();
    for (Map<String, String> rules : List.of(kustomize, helm)) {
      rules.forEach((alert, expr) -> {
        assertThat(metricNames(expr)).as("metrics of %s", alert).isNotEmpty();
        metricNames(expr).stream().filter(n -> !exposed.contains(n) && !PROMETHEUS_SERIES.contains(n))
            .forEach(n -> unknown.add(alert + ": " + n));
      });
    }
    assertThat(unknown).as("alerts on metrics the operator does not expose (it exposes %s)", exposed).isEmpty();
    // the release respawn-operator has the base's Service name, and so the same job
    kustomize.forEach((alert, expr) -> assertThat(helm.get(alert)).as("the chart's %s", alert).isEqualTo(expr));
  }

  @Test
  void theOperatorDownAlertWatchesTheMetricsService() {
    String expr = ruleExpressions(DeployManifests.yaml(RULES)).get("RespawnOperatorDown");
    String service = DeployManifests.objects(DeployManifests.DEPLOY).stream()
        .filter(o -> o.getKind().equals("Service")).findFirst().orElseThrow().getMetadata().getName();
    assertThat(expr).contains("job=\"" + service + "\"");
  }

  @Test
  void promqlNamesAreExtracted() {
    assertThat(metricNames("sum by (kind, quantile) (rate(a_total{job=~\"$job\", x=\"y\"}[$__rate_interval]))"
        + " / sum(b_count[5m]) > 0")).containsExactly("a_total", "b_count");
    assertThat(metricNames("histogram_quantile(0.99, sum by (le) (rate(c_bucket[1m])))")).containsExactly("c_bucket");
    assertThat(metricNames("absent(up{job=\"x\"} == 1)")).containsExactly("up");
  }
}

package dev.respawn.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.marcnuri.helm.LintResult;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The chart's values.schema.json, enforced by helm itself: a bad value makes {@code helm template} (and so
 * {@code helm install} and {@code helm upgrade}) and {@code helm lint} fail with helm's schema error, which
 * names the value ({@code at '/metrics/port'}), before any template runs.
 */
class HelmSchemaTest {
  static final String SCHEMA_ERROR = "values don't meet the specifications of the schema(s) in the following chart(s)";

  @ParameterizedTest(name = "{0} is refused at ''{1}''")
  @CsvSource(delimiter = '|', textBlock = """
      tier: Gold                                             | /tier                          | value must be one of 'Core', 'WriterPro', 'Teams', 'Enterprise'
      tier: enterprise                                       | /tier                          | value must be one of
      tier: 3                                                | /tier                          | got number, want string
      metrics: {port: -1}                                    | /metrics/port                  | minimum: got -1, want 1
      metrics: {port: 0}                                     | /metrics/port                  | minimum: got 0, want 1
      metrics: {port: 65536}                                 | /metrics/port                  | maximum: got 65,536, want 65,535
      metrics: {port: '8080'}                                | /metrics/port                  | got string, want integer
      metrics: {port: 80.5}                                  | /metrics/port                  | got number, want integer
      replicaCount: -1                                       | /replicaCount                  | minimum: got -1, want 0
      replicaCount: two                                      | /replicaCount                  | got string, want integer
      '{replicaCount: 2, leaderElection: {enabled: false}}'  | /leaderElection/enabled        | value must be true
      leaderElection: {enabled: 'yes'}                       | /leaderElection/enabled        | got string, want boolean
      leaderElection: {enable: false}                        | /leaderElection                | additional properties 'enable' not allowed
      leaderElection: {namespace: Ops}                       | /leaderElection/namespace      | does not match pattern
      leaderElection: {leaseName: Team_A}                    | /leaderElection/leaseName      | does not match pattern
      leaderElection: {leaseName: team..a}                   | /leaderElection/leaseName      | does not match pattern
      tire: Core                                             | ''                             | additional properties 'tire' not allowed
      watchNamespaces: team-a                                | /watchNamespaces               | got string, want array
      watchNamespaces: [team_a]                              | /watchNamespaces/0             | does not match pattern
      watchNamespaces: [a, a]                                | /watchNamespaces               | items at 0 and 1 are equal
      defaultPolicy: a/b/c                                   | /defaultPolicy                 | does not match pattern
      image: {repository: ''}                                | /image/repository              | minLength: got 0, want 1
      image: {tag: 'v1 beta'}                                | /image/tag                     | does not match pattern
      image: {digest: 'sha256:abc'}                          | /image/digest                  | does not match pattern
      image: {pullPolicy: Sometimes}                         | /image/pullPolicy              | value must be one of
      logFormat: xml                                         | /logFormat                     | value must be one of 'text', 'json'
      logLevel: info                                         | /logLevel                      | value must be one of
      resources: {limit: {cpu: 1}}                           | /resources                     | additional properties 'limit' not allowed
      podLabels: {team: 7}                                   | /podLabels/team                | got number, want string
      extraEnv: [{value: x}]                                 | /extraEnv/0                    | missing property 'name'
      serviceAccount: {create: 'no'}                         | /serviceAccount/create         | got string, want boolean
      metrics: {serviceMonitor: {interval: 30 seconds}}      | /metrics/serviceMonitor/interval | does not match pattern
      """)
  void helmTemplateRefusesABadValueNamingIt(String values, String at, String why) {
    String error = HelmChart.templateError(values);
    assertThat(error).contains(SCHEMA_ERROR).contains("- at '" + at + "'").contains(why);
  }

  @Test
  void helmLintRefusesABadDefaultInValuesYaml(@TempDir Path tmp) throws IOException {
    Path chart = HelmChart.copy(tmp.resolve("respawn"));
    Path values = chart.resolve("values.yaml");
    Files.writeString(values, Files.readString(values).replace("\ntier: Enterprise\n", "\ntier: Gold\n"),
        StandardCharsets.UTF_8);
    LintResult lint = HelmChart.lintStrict(chart);
    assertThat(lint.isFailed()).isTrue();
    assertThat(lint.getMessages()).anySatisfy(m -> assertThat(m).startsWith("[ERROR] values.yaml")
        .contains("- at '/tier': value must be one of"));
    assertThat(lint.getMessages()).anySatisfy(m -> assertThat(m).startsWith("[ERROR] templates/")
        .contains(SCHEMA_ERROR));
  }

  @Test
  void theDefaultsAndTheDocumentedOverridesPass() {
    assertThat(HelmChart.template("")).contains("kind: Deployment");
    assertThat(HelmChart.template("""
        tier: Teams
        watchNamespaces: [team-a, team-b, policies]
        defaultPolicy: policies/standard
        replicaCount: 2
        leaderElection: {enabled: true, namespace: ops, leaseName: respawn-team-a.leader}
        image: {repository: registry.example/respawn, tag: 0.2.0-rc.1,
                digest: 'sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef'}
        resources: {requests: {cpu: 200m, memory: 300Mi}, limits: {cpu: 2, memory: 1Gi}}
        podLabels: {team: platform}
        extraEnv: [{name: HTTPS_PROXY, value: 'http://proxy:3128'}]
        metrics:
          port: 9090
          serviceMonitor: {enabled: true, interval: 1m30s, scrapeTimeout: 500ms, labels: {release: kps}}
        global: {anything: goes}
        """)).contains("kind: ServiceMonitor");
  }
}

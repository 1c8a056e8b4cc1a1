package dev.respawn.cli;

import dev.respawn.controller.LeaderElection;
import dev.respawn.controller.OperatorSettings;
import dev.respawn.controller.RespawnOperator;
import dev.respawn.controller.TolerantResources;
import dev.respawn.observability.KubeEventRecorder;
import dev.respawn.observability.ProcessMeters;
import dev.respawn.observability.HealthEndpoint;
import dev.respawn.observability.ReportingSink;
import dev.respawn.observability.RestartMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import dev.respawn.policy.Tier;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.time.InstantSource;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** Runs the operator against the cluster of the standard kubeconfig or the in-cluster service account. */
@Command(name = "operator", mixinStandardHelpOptions = true,
    description = "Run the Respawn operator (the default command).")
public final class OperatorCommand implements Callable<Integer> {
  /** The operator's requests name it (fabric8's default names only the library, as the plugin's would). */
  static final String USER_AGENT = "respawn-operator/" + RespawnCommand.VERSION;

  private static final Logger LOG = LoggerFactory.getLogger(OperatorCommand.class);

  @Option(names = "--namespaces", split = ",", description = "Namespaces to watch (default: all).")
  List<String> namespaces = List.of();

  @Option(names = "--default-policy", description = "Policy for instances without spec.policyRef: NAME (in the "
      + "instance's namespace) or NAMESPACE/NAME (with --namespaces, one of them). Default: the built-in defaults of "
      + "the API.")
  String defaultPolicy;

  /** NAME or NAMESPACE/NAME: a DNS-1123 label, then a DNS-1123 subdomain. */
  private static final java.util.regex.Pattern POLICY_REFERENCE = java.util.regex.Pattern.compile(
      "([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?/)?[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?");

  @Option(names = "--tier", defaultValue = "Enterprise",
      description = "License tier: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE}).")
  Tier tier;

  @Option(names = "--leader-election", description = "Run leader-elected (only the leader acts).")
  boolean leaderElection;

  @Option(names = "--leader-election-namespace", description = "Namespace of the leader-election Lease "
      + "(default: $POD_NAMESPACE, else the kubeconfig's namespace).")
  String leaderNamespace;

  @Option(names = "--leader-election-lease", paramLabel = "NAME", description = "Name of the leader-election Lease: "
      + "operators that share it elect one leader, so two that watch different namespaces need names of their own "
      + "(default: " + RespawnOperator.LEADER_LEASE + ").")
  String leaderLease;

  /** A Lease name: a DNS-1123 subdomain. */
  private static final java.util.regex.Pattern LEASE_NAME = java.util.regex.Pattern.compile(
      "(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

  @Option(names = "--metrics-port", defaultValue = "8080", paramLabel = "PORT",
      description = "Port of /metrics, /healthz and /readyz; -1 turns the endpoint off (default: ${DEFAULT-VALUE}).")
  int metricsPort;

  @Option(names = "--informer-sync-timeout", paramLabel = "DURATION", defaultValue = "20s",
      converter = DurationConverter.class, description = "How long the start waits for an informer's first list "
      + "(pods, Leases, the custom resources) before it goes on without it; an API the server does not serve, or "
      + "RBAC that forbids it, never lists (default: ${DEFAULT-VALUE}).")
  java.time.Duration informerSyncTimeout;

  /** The namespace of a NAMESPACE/NAME default policy that --namespaces leaves out: its informer would not list it. */
  private Optional<String> unwatchedDefaultPolicyNamespace() {
    if (defaultPolicy == null || namespaces.isEmpty() || !defaultPolicy.contains("/")) {
      return Optional.empty();
    }
    String ns = defaultPolicy.substring(0, defaultPolicy.indexOf('/'));
    return namespaces.contains(ns) ? Optional.empty() : Optional.of(ns);
  }

  /** A namespace name: a DNS-1123 label. */
  private static final java.util.regex.Pattern NAMESPACE = java.util.regex.Pattern.compile(
      "[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");

  /**
   * Flag values the API server would never serve: refused before anything starts. An empty --namespaces (an unset
   * variable in a manifest) would otherwise widen the operator to the whole cluster without a word.
   */
  private void checkFlags() {
    List<String> named = namespaces.stream().map(String::trim).filter(n -> !n.isEmpty()).toList();
    if (!namespaces.isEmpty() && named.isEmpty()) {
      throw new CommandFailure("--namespaces names no namespace; leave the flag out to watch all namespaces", 2);
    }
    named.stream().filter(n -> !NAMESPACE.matcher(n).matches()).findFirst().ifPresent(n -> {
      throw new CommandFailure("--namespaces: " + n + " is not a namespace name (a DNS-1123 label: lower-case "
          + "letters, digits and '-', at most 63 characters)", 2);
    });
    namespaces = named;
    if (leaderNamespace != null && !NAMESPACE.matcher(leaderNamespace).matches()) {
      throw new CommandFailure("--leader-election-namespace: " + leaderNamespace + " is not a namespace name (a "
          + "DNS-1123 label)", 2);
    }
    if (!leaderElection && (leaderNamespace != null || leaderLease != null)) {
      LOG.warn("--leader-election-namespace and --leader-election-lease do nothing without --leader-election: this "
          + "operator acts without electing a leader");
    }
    leaderLease = leaderLease == null ? RespawnOperator.LEADER_LEASE : leaderLease;
    if (!LEASE_NAME.matcher(leaderLease).matches()) {
      throw new CommandFailure("--leader-election-lease: " + leaderLease + " is not a Lease name (a DNS-1123 "
          + "subdomain: lower-case letters, digits, '-' and '.', at most 253 characters)", 2);
    }
    if (metricsPort != -1 && (metricsPort < 1 || metricsPort > 65535)) {
      throw new CommandFailure("--metrics-port " + metricsPort + " is not a port: 1 to 65535, or -1 to turn the "
          + "endpoint off", 2);
    }
  }

  @Override
  public Integer call() throws Exception {
    checkFlags();
    if (defaultPolicy != null && !POLICY_REFERENCE.matcher(defaultPolicy).matches()) {
      throw new CommandFailure("--default-policy " + defaultPolicy + " is not NAME or NAMESPACE/NAME (a namespace is "
          + "a DNS-1123 label, a policy name a DNS-1123 subdomain)", 2);
    }
    unwatchedDefaultPolicyNamespace().ifPresent(ns -> {
      throw CommandFailure.of("--default-policy " + defaultPolicy + " is in namespace " + ns + ", which --namespaces "
          + String.join(",", namespaces) + " does not include: the operator would not see it, and every instance "
          + "without spec.policyRef would be refused; add " + ns + " to --namespaces, or name a policy without a "
          + "namespace (one in each instance's own)");
    });
    // standard discovery: KUBECONFIG, ~/.kube/config, or the in-cluster service account; few retries,
    // so a dead API server cannot hold a reconcile thread for minutes (JOSDK retries the reconcile)
    Config config = new ConfigBuilder(Config.autoConfigure(null)).withRequestRetryBackoffLimit(2)
        .withUserAgent(USER_AGENT).build();
    KubernetesClient client = new KubernetesClientBuilder().withConfig(config)
        .withKubernetesSerialization(TolerantResources.forOperator()).build();
    OperatorSettings settings = new OperatorSettings(new LinkedHashSet<>(namespaces),
        Optional.ofNullable(defaultPolicy), tier, InstantSource.system(), System::nanoTime, System.nanoTime(),
        informerSyncTimeout);
    Optional<String> leaseNamespace = leaderElection ? Optional.of(leaderNamespace != null ? leaderNamespace
        : Optional.ofNullable(System.getenv("POD_NAMESPACE")).orElse(client.getNamespace() == null ? "default"
            : client.getNamespace())) : Optional.empty();
    KubeEventRecorder events = new KubeEventRecorder(client, KubeEventRecorder.reportingInstanceFromEnvironment(),
        settings.clock());
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    ProcessMeters processMeters = new ProcessMeters(registry);
    RespawnOperator operator = new RespawnOperator(client, settings,
        new ReportingSink(events, new RestartMetrics(registry)),
        leaseNamespace.map(ns -> LeaderElection.standard(leaderLease, ns)),
        Optional.of(registry));
    HealthEndpoint endpoint;
    try {
      endpoint = metricsPort == -1 ? null : new HealthEndpoint(metricsPort, registry, operator::isReady);
    } catch (java.net.BindException e) {
      processMeters.close();
      client.close();
      throw CommandFailure.of("port " + metricsPort + " of /metrics, /healthz and /readyz is in use: choose another "
          + "with --metrics-port, or -1 to turn the endpoint off");
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      LOG.info("Stopping the operator");
      operator.close();
      if (endpoint != null) {
        endpoint.close();
      }
      processMeters.close();
      client.close();
      stopped.countDown();
    }, "respawn-shutdown"));
    LOG.info("Starting Respawn: namespaces={}, tier={}, default policy={}, leader election={}",
        namespaces.isEmpty() ? "all" : namespaces, tier, defaultPolicy == null ? "built-in" : defaultPolicy,
        leaseNamespace.map(ns -> "on (Lease " + leaderLease + " in namespace " + ns + ")")
            .orElse("off"));
    try {
      operator.start();
    } catch (RuntimeException e) {
      LOG.debug("The operator could not start", e);
      Throwable api = e;
      for (Throwable t = e; t != null && t.getCause() != t; t = t.getCause()) {
        if (t instanceof io.fabric8.kubernetes.client.KubernetesClientException) {
          api = t;
          break;
        }
      }
      // before it elects, JOSDK asks the API server (a SelfSubjectRulesReview) whether it may use the Lease
      String election = leaderElection ? " with --leader-election (it first asks the API server, by a "
          + "SelfSubjectRulesReview, whether it may get, create and update Leases in namespace "
          + leaseNamespace.orElse("") + ")" : "";
      throw CommandFailure.of("the operator could not start" + election + ": "
          + ApiErrors.describe(api, client.getMasterUrl().toString()));
    }
    stopped.await();
    return 0;
  }
}

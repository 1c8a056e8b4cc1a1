package dev.respawn.acceptance;


import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.function.Consumer;

/** What webhooks and the API server do to a pod create (JSON, in place): the mutations the admission ITs use. */
final class PodMutations {
  private PodMutations() {}

  /** What the API server, a LimitRange, a PSS/Kyverno "restricted" mutation and an image-digest policy add. */
  static void defaulting(ObjectNode pod) {
    ObjectNode spec = (ObjectNode) pod.get("spec");
    for (String list : List.of("initContainers", "containers")) {
      for (JsonNode c : spec.withArray(list)) {
        ObjectNode o = (ObjectNode) c;
        o.put("terminationMessagePath", "/dev/termination-log");
        o.put("terminationMessagePolicy", "File");
        o.put("imagePullPolicy", "IfNotPresent");
        String image = o.path("image").asText();
        if (!image.contains("@")) {
          o.put("image", image.replaceAll(":[^:/]+$", "") + "@sha256:" + sha256(image));
        }
        if (!o.has("resources") || o.get("resources").isEmpty()) {
          ObjectNode r = o.putObject("resources");
          r.putObject("limits").put("cpu", "500m").put("memory", "512Mi");
          r.putObject("requests").put("cpu", "100m").put("memory", "128Mi");
        }
        ObjectNode sc = o.putObject("securityContext");
        sc.put("allowPrivilegeEscalation", false).put("runAsNonRoot", true);
        sc.putObject("capabilities").putArray("drop").add("ALL");
        sc.putObject("seccompProfile").put("type", "RuntimeDefault");
        o.withArray("volumeMounts").addObject().put("name", "kube-api-access-x7k2p")
            .put("mountPath", "/var/run/secrets/kubernetes.io/serviceaccount").put("readOnly", true);
        o.withArray("env").addObject().put("name", "HTTP_PROXY").put("value", "http://proxy.corp:3128");
      }
    }
    if (spec.withArray("initContainers").isEmpty()) {
      spec.remove("initContainers");
    }
    spec.put("dnsPolicy", "ClusterFirst");
    spec.put("schedulerName", "default-scheduler");
    if (!spec.has("serviceAccountName")) {
      spec.put("serviceAccountName", "default");
    }
    spec.put("serviceAccount", spec.get("serviceAccountName").asText());
    spec.putObject("securityContext").put("runAsNonRoot", true).put("fsGroup", 65532);
    spec.put("terminationGracePeriodSeconds", 30);
    spec.put("enableServiceLinks", true);
    spec.put("priority", 0);
    spec.put("preemptionPolicy", "PreemptLowerPriority");
    ArrayNode tolerations = spec.withArray("tolerations");
    for (String key : List.of("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")) {
      tolerations.addObject().put("key", key).put("operator", "Exists").put("effect", "NoExecute")
          .put("tolerationSeconds", 300);
    }
    ObjectNode vol = spec.withArray("volumes").addObject();
    vol.put("name", "kube-api-access-x7k2p");
    vol.putObject("projected").put("defaultMode", 420).putArray("sources").addObject()
        .putObject("serviceAccountToken").put("expirationSeconds", 3607).put("path", "token");
    ObjectNode meta = (ObjectNode) pod.get("metadata");
    meta.with("labels").put("policy.kyverno.io/compliant", "true");
    meta.with("annotations").put("kyverno.io/last-applied-patches", "add-defaults.restricted.kyverno.io: added /spec");
  }

  static String sha256(String s) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  static ObjectNode proxy(ObjectNode pod) {
    ObjectNode c = MockCluster.JSON.createObjectNode();
    c.put("name", "istio-proxy").put("image", "docker.io/istio/proxyv2:1.24.0");
    c.putArray("args").add("proxy").add("sidecar");
    c.withArray("ports").addObject().put("name", "http-envoy-prom").put("containerPort", 15090);
    c.putObject("readinessProbe").putObject("httpGet").put("path", "/healthz/ready").put("port", 15021);
    return c;
  }

  static ObjectNode istioInit() {
    ObjectNode c = MockCluster.JSON.createObjectNode();
    c.put("name", "istio-init").put("image", "docker.io/istio/proxyv2:1.24.0");
    c.putArray("args").add("istio-iptables").add("-p").add("15001");
    return c;
  }

  static void istioMetadata(ObjectNode pod) {
    ObjectNode meta = (ObjectNode) pod.get("metadata");
    String instance = meta.path("labels").path("respawn.dev/instance").asText("x");
    meta.with("labels").put("security.istio.io/tlsMode", "istio")
        .put("service.istio.io/canonical-name", instance).put("service.istio.io/canonical-revision", "latest");
    meta.with("annotations").put("sidecar.istio.io/status",
        "{\"initContainers\":[\"istio-init\"],\"containers\":[\"istio-proxy\"],\"volumes\":[\"istio-envoy\"]}")
        .put("kubectl.kubernetes.io/default-container", "agent")
        .put("kubectl.kubernetes.io/default-logs-container", "agent")
        .put("prometheus.io/scrape", "true");
    ((ObjectNode) pod.get("spec")).withArray("volumes").addObject().put("name", "istio-envoy")
        .putObject("emptyDir").put("medium", "Memory");
  }

  /** Istio's classic injection; with holdApplicationUntilProxyStarts the proxy is put first. */
  static Consumer<ObjectNode> istioSidecar(boolean proxyFirst) {
    return pod -> {
      istioMetadata(pod);
      ObjectNode spec = (ObjectNode) pod.get("spec");
      ArrayNode inits = spec.withArray("initContainers");
      inits.insert(0, istioInit());
      ArrayNode containers = spec.withArray("containers");
      if (proxyFirst) {
        containers.insert(0, proxy(pod));
      } else {
        containers.add(proxy(pod));
      }
      defaulting(pod);
    };
  }

  /** Istio 1.29+ native sidecar: an init container with restartPolicy Always. */
  static void istioNative(ObjectNode pod) {
    istioMetadata(pod);
    ArrayNode inits = ((ObjectNode) pod.get("spec")).withArray("initContainers");
    inits.insert(0, istioInit());
    ObjectNode p = proxy(pod);
    p.put("restartPolicy", "Always");
    inits.insert(1, p);
    defaulting(pod);
  }

  static void metadataOnly(ObjectNode pod) {
    ObjectNode meta = (ObjectNode) pod.get("metadata");
    meta.with("labels").put("team", "platform").put("cost-center", "ai-42");
    meta.with("annotations").put("gatekeeper.sh/mutation-id", "1234").put("cluster-autoscaler.kubernetes.io/safe-to-evict",
        "false");
  }

  /** A buggy webhook: a JSON patch {op: replace, path: /metadata/labels} with its own labels. */
  static void replaceLabels(ObjectNode pod) {
    ObjectNode meta = (ObjectNode) pod.get("metadata");
    meta.putObject("labels").put("app.kubernetes.io/managed-by", "platform-policy");
  }

  /** A webhook that overwrites the instance label's value (e.g. a naming-convention policy). */
  static void rewriteInstanceLabel(ObjectNode pod) {
    ObjectNode labels = ((ObjectNode) pod.get("metadata")).with("labels");
    labels.put("respawn.dev/instance", "team-a." + labels.path("respawn.dev/instance").asText());
  }

  /** A buggy webhook: {op: replace, path: /metadata/annotations} with its own annotations (respawn.dev/* lost). */
  static void replaceAnnotations(ObjectNode pod) {
    ((ObjectNode) pod.get("metadata")).putObject("annotations").put("kyverno.io/mutated", "true");
  }

  static void finalizer(ObjectNode pod) {
    ((ObjectNode) pod.get("metadata")).withArray("finalizers").add("backup.example.com/protect");
  }
}

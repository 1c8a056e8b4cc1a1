package dev.respawn.fuzz;

import dev.respawn.api.v1alpha1.*;
import dev.respawn.controller.*;
import dev.respawn.observability.*;
import dev.respawn.testsupport.*;
import io.fabric8.kubernetes.api.model.*;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.*;
import org.junit.jupiter.api.Test;

class ProbeTmpTest {
  @Test
  void probe() throws Exception {
    try (MockApi api = MockApi.start()) {
      KubernetesClient c = api.client();
      var kubelet = new SimulatedKubelet(api.newClient(), "test").start();
      KubernetesClient oc = api.newClient(b -> b.withUserAgent("chaos-op"));
      api.faults(new ApiFaults() {
        public io.fabric8.mockwebserver.http.MockResponse before(io.fabric8.mockwebserver.http.RecordedRequest r) {
          if (r.getPath().contains("agentinstances") && "chaos-op".equals(r.getHeader("User-Agent")) && r.getPath().contains("watch")) System.out.println("UA ok " + r.getPath());
          return null;
        }
      });
      var events = new KubeEventRecorder(oc, "t", java.time.Clock.systemUTC());
      var op = new RespawnOperator(oc, OperatorSettings.defaults(), new ReportingSink(events, new RestartMetrics(new SimpleMeterRegistry())), Optional.empty()).start();
      String bad = System.getProperty("probe.bad", "{\"maxRetries\":\"abc\"}");
      c.genericKubernetesResources("respawn.dev/v1alpha1", "AgentRestartPolicy").inNamespace("test").resource(
          Serialization.unmarshal("{\"apiVersion\":\"respawn.dev/v1alpha1\",\"kind\":\"AgentRestartPolicy\",\"metadata\":{\"name\":\"bad\",\"namespace\":\"test\"},\"spec\":" + bad + "}", GenericKubernetesResource.class)).create();
      String badInst = System.getProperty("probe.badinst");
      if (badInst != null) {
        c.genericKubernetesResources("respawn.dev/v1alpha1", "AgentInstance").inNamespace("test").resource(
          Serialization.unmarshal("{\"apiVersion\":\"respawn.dev/v1alpha1\",\"kind\":\"AgentInstance\",\"metadata\":{\"name\":\"badi\",\"namespace\":\"test\"},\"spec\":" + badInst + "}", GenericKubernetesResource.class)).create();
      }
      AgentRestartPolicy good = new AgentRestartPolicy();
      good.setMetadata(new ObjectMetaBuilder().withName("good").withNamespace("test").build());
      good.setSpec(new AgentRestartPolicySpec());
      c.resource(good).create();
      for (String n : List.of("uses-bad", "control")) {
        AgentInstance i = new AgentInstance();
        i.setMetadata(new ObjectMetaBuilder().withName(n).withNamespace("test").build());
        i.setSpec(new AgentInstanceSpec());
        i.getSpec().policyRef = new PolicyReference(n.equals("control") ? "good" : "bad");
        i.getSpec().template = new PodTemplateSpecBuilder().withNewSpec().addNewContainer().withName("agent").withImage("x").endContainer().endSpec().build();
        c.resource(i).create();
      }
      Thread.sleep(4000);
      for (var p : c.genericKubernetesResources("respawn.dev/v1alpha1", "AgentRestartPolicy").inNamespace("test").list().getItems())
        System.out.println("POLICY " + p.getMetadata().getName() + " " + Serialization.asJson(p.getAdditionalProperties().get("status")));
      for (var p : c.genericKubernetesResources("respawn.dev/v1alpha1", "AgentInstance").inNamespace("test").list().getItems())
        System.out.println("INSTANCE " + p.getMetadata().getName() + " " + Serialization.asJson(p.getAdditionalProperties().get("status")));
      System.out.println("PODS " + c.pods().inNamespace("test").list().getItems().stream().map(p -> p.getMetadata().getName()).toList());
      op.close();
      kubelet.close();
    }
  }
}

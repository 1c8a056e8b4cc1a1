package dev.respawn.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import org.junit.jupiter.api.Test;

class PodActionsTest {
  @Test
  void aRefusalIsToldInTheServersWordsNeverInTheClientsDescriptionOfTheRequest() {
    String clientText = "Failure executing: POST at: https://10.0.0.1:6443/api/v1/namespaces/agents/pods. ...";
    KubernetesClientException quota = new KubernetesClientException(clientText, 403, new StatusBuilder()
        .withCode(403).withReason("Forbidden").withMessage("pods \"a-1\" is forbidden: exceeded quota").build());
    assertThat(PodActions.serverWords(quota)).isEqualTo("pods \"a-1\" is forbidden: exceeded quota");
    KubernetesClientException bare = new KubernetesClientException(clientText, 404, new StatusBuilder()
        .withCode(404).withReason("NotFound").build());
    assertThat(PodActions.serverWords(bare)).isEqualTo("the API server refused the pod: HTTP 404 NotFound")
        .doesNotContain("10.0.0.1");
    assertThat(PodActions.serverWords(new KubernetesClientException(clientText, 503, null)))
        .isEqualTo("the API server refused the pod: HTTP 503");
  }
}

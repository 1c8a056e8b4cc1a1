package dev.respawn.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.net.http.HttpTimeoutException;
import java.nio.channels.ClosedChannelException;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.Test;

/**
 * README "The kubectl plugin": errors are one {@code error:} line a person can act on, never a stack trace nor an
 * exception's class name; an unreachable API server says which address it tried and why (unknown host, TLS, timed
 * out, refused).
 */
class ApiErrorsTest {
  static final String URL = "https://api.example:6443/";

  /** As fabric8 reports a request that never got an answer: its own message says nothing, its cause says why. */
  static KubernetesClientException unanswered(Throwable cause) {
    return new KubernetesClientException("An error has occurred.", cause);
  }

  static KubernetesClientException answered(int code, String message) {
    return new KubernetesClientException(new StatusBuilder().withCode(code).withMessage(message).build());
  }

  @Test
  void anUnknownHostSaysSoWithTheHost() {
    assertThat(ApiErrors.describe(unanswered(new UnknownHostException("api.example")), URL))
        .isEqualTo("cannot reach the Kubernetes API at " + URL + ": unknown host api.example");
  }

  @Test
  void aFailedTlsHandshakeSaysTlsAndWhy() {
    assertThat(ApiErrors.describe(unanswered(new IOException("handshake",
        new SSLHandshakeException("PKIX path building failed"))), URL))
        .isEqualTo("cannot reach the Kubernetes API at " + URL + ": TLS failed: PKIX path building failed");
  }

  @Test
  void aTimeoutSaysTimedOut() {
    assertThat(ApiErrors.describe(unanswered(new HttpTimeoutException("request timed out after 15000 ms")), URL))
        .isEqualTo("cannot reach the Kubernetes API at " + URL + ": timed out");
    assertThat(ApiErrors.describe(unanswered(new SocketTimeoutException("Read timed out")), URL))
        .isEqualTo("cannot reach the Kubernetes API at " + URL + ": timed out");
  }

  @Test
  void aRefusedConnectionSaysRefusedEvenWithoutAMessage() {
    assertThat(ApiErrors.describe(unanswered(new ConnectException("Connection refused")), URL))
        .isEqualTo("cannot reach the Kubernetes API at " + URL + ": Connection refused");
    assertThat(ApiErrors.describe(unanswered(new ConnectException()), URL))
        .isEqualTo("cannot reach the Kubernetes API at " + URL + ": connection refused");
    assertThat(ApiErrors.describe(unanswered(new IOException(new ClosedChannelException())), URL))
        .endsWith(": connection refused");
  }

  @Test
  void anotherNetworkFailureGivesItsMessageElseSaysTheConnectionFailed() {
    assertThat(ApiErrors.describe(unanswered(new IOException("stream was reset: PROTOCOL_ERROR")), URL))
        .isEqualTo("cannot reach the Kubernetes API at " + URL + ": stream was reset: PROTOCOL_ERROR");
    assertThat(ApiErrors.describe(unanswered(new IOException()), URL))
        .isEqualTo("cannot reach the Kubernetes API at " + URL + ": connection failed");
  }

  @Test
  void anAnswerOfTheApiServerIsNotAnUnreachableServer() {
    KubernetesClientException forbidden = answered(403,
        "agentinstances.respawn.dev \"coder\" is forbidden: User \"dev\" cannot patch resource");

    assertThat(ApiErrors.describe(new IOException("watch closed", forbidden), URL))
        .doesNotContain("cannot reach").contains("is forbidden");
  }

  @Test
  void anApiAnswerNamesItsCodeAndWhatToDo() {
    assertThat(ApiErrors.describe(answered(401, "Unauthorized"), URL))
        .isEqualTo("unauthorized (401) by the Kubernetes API at " + URL + ": check the credentials of your kubeconfig");
    assertThat(ApiErrors.describe(answered(403, "agentinstances.respawn.dev is forbidden"), URL))
        .isEqualTo("forbidden (403): agentinstances.respawn.dev is forbidden");
    assertThat(ApiErrors.describe(answered(404, "the server could not find the requested resource"), URL))
        .isEqualTo("the Kubernetes API at " + URL + " answered 404 (the server could not find the requested "
            + "resource): is the Respawn CRD (agentinstances.respawn.dev) installed?");
    assertThat(ApiErrors.describe(answered(500, "etcdserver: leader changed"), URL))
        .isEqualTo("the Kubernetes API answered 500: etcdserver: leader changed");
  }

  @Test
  void anAnswerWithoutAStatusMessageGivesTheExceptionsMessage() {
    KubernetesClientException e = new KubernetesClientException("Failure executing: GET at: " + URL, 503,
        new StatusBuilder().withCode(503).build());

    assertThat(ApiErrors.describe(e, URL)).isEqualTo("the Kubernetes API answered 503: Failure executing: GET at: "
        + URL);
  }

  @Test
  void anythingElseIsItsRootCausesMessageNeverAClassNameWhenThereIsOne() {
    assertThat(ApiErrors.describe(new KubernetesClientException("Failure executing",
        new IllegalStateException("bad certificate-authority-data")), URL))
        .isEqualTo("bad certificate-authority-data");
    assertThat(ApiErrors.describe(new IllegalStateException("no current-context", new IllegalArgumentException()),
        URL)).isEqualTo("no current-context");
    assertThat(ApiErrors.describe(new IllegalStateException(), URL)).isEqualTo("IllegalStateException");
  }
}

package dev.respawn.controller;

import io.fabric8.kubernetes.client.KubernetesClientException;

/**
 * An API server's answer that the same write will meet again: a 4xx (422 invalid, 403 forbidden, ...), not a
 * conflict (409) or a busy server (429), nor a 5xx or no answer at all, which are worth another try.
 */
public final class PermanentRefusal {
  private PermanentRefusal() {}

  /** True when {@code e} is such an answer. */
  public static boolean is(RuntimeException e) {
    return e instanceof KubernetesClientException k && k.getCode() >= 400 && k.getCode() < 500
        && k.getCode() != 409 && k.getCode() != 429;
  }
}

package dev.respawn.acceptance;

import java.time.Instant;
import java.util.Set;

/** One request the mock API server answered. */
record ApiRequest(Instant at, String verb, String path, String userAgent, int code) {
  private static final Set<String> WRITES = Set.of("POST", "PUT", "PATCH", "DELETE");

  boolean write() {
    return WRITES.contains(verb);
  }

  /** Everything not sent by the test's own client (the operator; no plugin command runs at the same time). */
  boolean byOperator() {
    return !MockCluster.TEST_AGENT.equals(userAgent);
  }

  @Override
  public String toString() {
    return at + " " + verb + " " + path + " -> " + code + " [" + userAgent + "]";
  }
}

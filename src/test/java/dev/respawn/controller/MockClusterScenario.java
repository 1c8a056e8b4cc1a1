package dev.respawn.controller;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * A scenario on a fresh mock cluster: one mock API server, one operator and one simulated kubelet per
 * test ({@link OperatorFixture}), closed after it (which fails the test if two pods of an instance ever
 * lived at once).
 */
abstract class MockClusterScenario {
  OperatorFixture f;

  @BeforeEach
  void startCluster() {
    f = new OperatorFixture();
  }

  @AfterEach
  void stopCluster() {
    f.close();
  }
}

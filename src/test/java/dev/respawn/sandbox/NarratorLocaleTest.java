package dev.respawn.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentInstanceStatus;
import dev.respawn.api.v1alpha1.Phase;
import dev.respawn.testsupport.ManualClock;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The sandbox's table reads the same whatever the machine's locale. */
class NarratorLocaleTest {
  private Locale before;

  @BeforeEach
  void german() {
    before = Locale.getDefault();
    Locale.setDefault(Locale.GERMANY);
  }

  @AfterEach
  void restore() {
    Locale.setDefault(before);
  }

  @Test
  void theNextRestartIsPrintedWithADecimalPointUnderAGermanLocale() {
    ManualClock clock = ManualClock.at("2026-11-28T10:00:00Z");
    StringWriter text = new StringWriter();
    AgentInstance waiting = new AgentInstance();
    waiting.setMetadata(new ObjectMetaBuilder().withName("coder").withNamespace("agents").build());
    AgentInstanceStatus status = new AgentInstanceStatus();
    status.phase = Phase.Backoff;
    status.nextRestartAt = "2026-11-28T10:00:01.500Z";
    waiting.setStatus(status);

    new Narrator(new PrintWriter(text, true), clock).table(List.of(waiting));

    assertThat(text.toString()).contains("in 1.5s").doesNotContain("1,5");
  }
}

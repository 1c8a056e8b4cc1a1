package dev.respawn.api.v1alpha1;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.List;
import org.junit.jupiter.api.Test;

/** api.md §9: what could not be read is reported with its path and rule, and never written to the API server. */
class UnreadableTest {
  static final Unreadable QUOTED = new Unreadable(List.of(new Unreadable.Field("spec.maxRetries",
      "must be an integer (got \"3\")")));

  @Test
  void aResourceCarriesItsReportAnythingElseNone() {
    AgentInstance instance = new AgentInstance();
    assertThat(Unreadable.of(instance)).isSameAs(Unreadable.NONE);
    assertThat(Unreadable.of(instance).isEmpty()).isTrue();

    instance.unreadable(QUOTED);
    assertThat(Unreadable.of(instance)).isEqualTo(QUOTED);
    assertThat(Unreadable.of(instance).isEmpty()).isFalse();
    assertThat(Unreadable.of(instance).describe()).isEqualTo("spec.maxRetries: must be an integer (got \"3\")");
    assertThat(Unreadable.of("not a resource")).isSameAs(Unreadable.NONE);

    instance.unreadable(null);
    assertThat(instance.unreadable()).isSameAs(Unreadable.NONE);
  }

  @Test
  void theReportIsNeverSerialized() {
    AgentInstance instance = new AgentInstance();
    instance.unreadable(QUOTED);
    assertThat(Serialization.asJson(instance)).doesNotContain("unreadable", "maxRetries");
  }
}
